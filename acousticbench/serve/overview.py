"""What serving would do and what this machine can serve, as values: a dry run's plan, the machine check, every
model's status; `acousticbench serve --dry-run`, `--check` and `--list` print them."""
from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from acousticbench.serve.endpoint import ServeOptions, docker_settings, export_line, refuse_parallel_locally
from acousticbench.serve.specs import ServerSpec, all_specs, image_for, redacted


@dataclass(frozen=True)
class Lines:
    """What a check found or a plan holds, a line each; `ok`: no problem found."""

    lines: tuple[str, ...]
    ok: bool = True


def plan(spec: ServerSpec, options: ServeOptions, home: Path, local: bool = False) -> Lines:
    """The exact container settings (the token redacted), or the command without Docker, and the export line;
    needs no Docker engine."""
    port = options.port or spec.port
    if local:
        from acousticbench.serve import local as serving

        refuse_parallel_locally(options)
        argv, env = serving.local_command(spec, port, options.archive, runnable=False)
        return Lines((f"# {spec.display_name} without Docker, in the background (log under "
                      "~/.cache/acousticbench/local-servers)",
                      " ".join([*(f"{k}={v}" for k, v in env.items()), *(shlex.quote(a) for a in argv)]),
                      export_line(spec, port)))
    settings, token = docker_settings(spec, options, home)
    tag, dockerfile, target = image_for(spec)
    lines = [f"# {spec.display_name} ({spec.repo_id}), needs {gpu_need(spec)}",
             f"# image {tag}: built on first use from {dockerfile}" + (f" (target {target})" if target else "")
             + ", with the pins of acousticbench/models/images.py:",
             *(f"#   {pin.arg}={pin.value}  ({pin.source})" for pin in spec.image_recipe.pins)]
    if settings.get("network_mode") == "host":
        lines.append("# on the host's network (built with it too): no published port, the server binds 127.0.0.1 "
                     "itself")
    if token is None:
        lines.append(f"# no Hugging Face token in {home}/.cache/huggingface/token: "
                     + ("this model is gated, put one there first" if spec.gated else "fine for this model"))
    lines.append("# docker SDK: client.containers.run(**settings) with")
    shown = redacted(settings)  # one key per line, still JSON, so a script can read it
    lines.append("{\n" + ",\n".join(f"  {json.dumps(k, allow_nan=False)}: {json.dumps(v, allow_nan=False)}"
                                    for k, v in shown.items()) + "\n}")
    return Lines((*lines, export_line(spec, port)))


def gpu_need(spec: ServerSpec) -> str:
    return f"{spec.gpu_memory_gb} GB of GPU memory" if spec.gpu_memory_gb else "no GPU (CPU)"


def model_status(archive: Path) -> Lines:
    """Every model: serve name, model, image, port, GPU memory and whether its container runs (unknown, said in a
    last line, when no engine answers)."""
    from acousticbench.serve import containers

    try:
        status, note = containers.running_status(containers.connect()), None
    except containers.EngineUnreachable as err:
        status, note = None, (f"status unknown: engine not reachable at {err.where} ({err.reason}); "
                              "check with `docker info`")
    rows = [("serve name", "model", "image", "port", "GPU memory", "status")]
    for spec in all_specs(archive):
        state = "?" if status is None else status.get(spec.serve_name, "not running")
        rows.append((spec.serve_name, spec.display_name, spec.image, str(spec.port),
                     f"{spec.gpu_memory_gb} GB" if spec.gpu_memory_gb else "CPU", state))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    table = ["  ".join(c.ljust(widths[i]) if i < 5 else c for i, c in enumerate(row)).rstrip() for row in rows]
    return Lines((*table, *([note] if note else [])))


def machine_check(spec: ServerSpec | None, options: ServeOptions, home: Path) -> Lines:
    """This machine before serving: a line for what is fine, one per problem with its fix; not ok when there is one."""
    from acousticbench.serve import containers, prereqs

    try:
        client = containers.connect()
    except containers.EngineUnreachable as err:
        return Lines((f"problem: {err}",), ok=False)
    lines = [f"ok: Docker engine {client.version().get('Version', '?')} reachable"]
    found, gpus = prereqs.problems(client, spec, gpus=options.gpus, tp=options.tp, dp=options.dp, home=home,
                                   archive=options.archive)
    lines += [f"ok: GPU {gpu.index} ({gpu.name}) visible in a container: {gpu.total_gb:.0f} GB, {gpu.free_gb:.0f} GB "
              "free" for gpu in gpus]
    lines += [f"problem: {problem}" for problem in found]
    if not found and spec is not None:
        lines.append(f"ok: {spec.serve_name} can start here ({gpu_need(spec)})")
    return Lines(tuple(lines), ok=not found)
