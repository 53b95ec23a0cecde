"""docker_serve.sh: start, stop, list or describe the container that serves an open-weight model."""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from acousticbench.core.errors import UserError, run_command
from acousticbench.core.environment import docker_network, endpoint_variable
from acousticbench.serve.specs import (LORA_PREFIX, ServerSpec, all_specs, container_settings, get_spec, image_for,
                                       redacted)
from acousticbench.serve.vllm_container_digest import DIGEST


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="docker_serve.sh", description=(
        "Serve an open-weight model in Docker on 127.0.0.1 and print the export line for run.py. "
        f"LoRA finetunes of Kimi-Audio: {LORA_PREFIX}<name> for <archive>/lora/<name>/."))
    p.add_argument("name", nargs="?", help="serve name, e.g. voxtral_mini_3b (--list shows them)")
    p.add_argument("--stop", action="store_true", help="stop and remove the model's container")
    p.add_argument("--list", action="store_true", help="every model: image, port, GPU memory, whether it is running")
    p.add_argument("--dry-run", action="store_true", help="print the exact container settings; needs no Docker engine")
    p.add_argument("--local", action="store_true", help="the same server, arguments and port without Docker, in the "
                   "background: vLLM models from .venv-vllm (scripts/setup_vllm.sh), ours from this environment")
    p.add_argument("--check", action="store_true", help="check this machine before serving: Docker engine, NVIDIA "
                   "runtime, GPUs and their memory against NAME's need, disk for a LoRA merge; one line per problem")
    p.add_argument("--port", type=int, help="host port on 127.0.0.1 (default: the model's fixed port)")
    p.add_argument("--host-network", action="store_true", help="build and run on the host's network (an engine "
                   "without a bridge): no published port, the server binds 127.0.0.1:PORT itself; also "
                   "ACOUSTICBENCH_DOCKER_NETWORK=host")
    p.add_argument("--gpus", default="all", help="all (default), or GPU ids such as 0 or 0,1")
    p.add_argument("--tp", type=int, help="vLLM tensor parallel size (--tensor-parallel-size): GPUs per replica")
    p.add_argument("--dp", type=int, help="vLLM data parallel size (--data-parallel-size): replicas behind one endpoint")
    p.add_argument("--wait", type=float, help="seconds to wait for /health (default: the model's, 5 to 60 minutes)")
    p.add_argument("--archive", type=Path, default=Path("archive"), help="where lora/<name>/ adapters are")
    p.add_argument("--slurm", action="store_true", help="sbatch the server (the settings of --local) as a job array on "
                   "a SLURM cluster, each replica on a free port of its node and registered in --registry once "
                   "healthy; options this script does not know go to sbatch (e.g. --time 4:00:00 --gres gpu:1); "
                   "with --stop, cancels the model's jobs")
    p.add_argument("--replicas", type=int, default=1, help="with --slurm: how many servers (array tasks), default 1")
    p.add_argument("--registry", type=Path, help="with --slurm: the folder replicas register in (shared storage; "
                   "default $ACOUSTICBENCH_ENDPOINTS_FROM, else ~/.cache/acousticbench/replicas)")
    p.add_argument("--server-command", help="with --slurm: serve with this command instead of the model's own "
                   "({port} is replaced by the replica's port)")
    return p


def hf_token(home: Path) -> str | None:
    """The token `huggingface-cli login` saved; read here, handed to the container by environment only."""
    path = home / ".cache" / "huggingface" / "token"
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


def export_line(spec: ServerSpec, port: int) -> str:
    return f"export {endpoint_variable(spec.serve_name)}=http://localhost:{port}"


def _settings(spec: ServerSpec, args: argparse.Namespace, home: Path) -> tuple[dict, str | None]:
    if args.port is not None and not 1 <= args.port <= 65535:
        raise UserError(f"--port {args.port} is not a TCP port (1-65535).")
    for flag, value in (("--tp", args.tp), ("--dp", args.dp)):
        if value is not None and value < 1:
            raise UserError(f"{flag} {value}: give a number, 1 or more.")
    token = hf_token(home)
    settings = container_settings(spec, port=args.port or spec.port, gpus=args.gpus, tp=args.tp, token=token, home=home,
                                  archive=args.archive, dp=args.dp, network=docker_network(args.host_network))
    return settings, token


def dry_run(spec: ServerSpec, args: argparse.Namespace, home: Path) -> int:
    settings, token = _settings(spec, args, home)
    tag, dockerfile, target = image_for(spec)
    print(f"# {spec.display_name} ({spec.repo_id}), needs {_gpu(spec)}")
    print(f"# image {tag}: built on first use from {dockerfile}" + (f" (target {target})" if target else "")
          + ", with the pins of acousticbench/models/images.py:")
    for pin in spec.image_recipe.pins:
        print(f"#   {pin.arg}={pin.value}  ({pin.source})")
    if settings.get("network_mode") == "host":
        print("# on the host's network (built with it too): no published port, the server binds 127.0.0.1 itself")
    if token is None:
        print(f"# no Hugging Face token in {home}/.cache/huggingface/token: "
              + ("this model is gated, put one there first" if spec.gated else "fine for this model"))
    print("# docker SDK: client.containers.run(**settings) with")
    shown = redacted(settings)  # one key per line, still JSON, so a script can read it
    print("{\n" + ",\n".join(f"  {json.dumps(k, allow_nan=False)}: {json.dumps(v, allow_nan=False)}"
                              for k, v in shown.items()) + "\n}")
    print(export_line(spec, args.port or spec.port))
    return 0


def _gpu(spec: ServerSpec) -> str:
    return f"{spec.gpu_memory_gb} GB of GPU memory" if spec.gpu_memory_gb else "no GPU (CPU)"


def list_models(args: argparse.Namespace) -> int:
    from acousticbench.serve import containers

    try:
        status, note = containers.running_status(containers.connect()), None
    except containers.EngineUnreachable as err:
        status, note = None, (f"status unknown: engine not reachable at {err.where} ({err.reason}); "
                              "check with `docker info`")
    rows = [("serve name", "model", "image", "port", "GPU memory", "status")]
    for spec in all_specs(args.archive):
        state = "?" if status is None else status.get(spec.serve_name, "not running")
        rows.append((spec.serve_name, spec.display_name, spec.image, str(spec.port),
                     f"{spec.gpu_memory_gb} GB" if spec.gpu_memory_gb else "CPU", state))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for row in rows:
        print("  ".join(c.ljust(widths[i]) if i < 5 else c for i, c in enumerate(row)).rstrip())
    if note:
        print(note)
    return 0


def check(spec: ServerSpec | None, args: argparse.Namespace, home: Path) -> int:
    """--check: a line for what is fine, one per problem with its fix; exit 1 when there is a problem."""
    from acousticbench.serve import containers, prereqs

    try:
        client = containers.connect()
    except containers.EngineUnreachable as err:
        print(f"problem: {err}")
        return 1
    print(f"ok: Docker engine {client.version().get('Version', '?')} reachable")
    found, gpus = prereqs.problems(client, spec, gpus=args.gpus, tp=args.tp, dp=args.dp, home=home,
                                   archive=args.archive)
    for gpu in gpus:
        print(f"ok: GPU {gpu.index} ({gpu.name}) visible in a container: {gpu.total_gb:.0f} GB, {gpu.free_gb:.0f} GB free")
    for problem in found:
        print(f"problem: {problem}")
    if not found and spec is not None:
        print(f"ok: {spec.serve_name} can start here ({_gpu(spec)})")
    return 1 if found else 0


def start(spec: ServerSpec, args: argparse.Namespace, home: Path) -> int:
    from acousticbench.serve import containers, prereqs

    settings, token = _settings(spec, args, home)
    if spec.gated and token is None:
        raise UserError(f"{spec.repo_id} is gated: put your Hugging Face token in ~/.cache/huggingface/token "
                        "(or run `huggingface-cli login`) and accept the model's terms on its Hub page.")
    port = args.port or spec.port
    client = containers.connect()
    existing = containers.find_container(client, spec)
    secrets = [token] if token else []
    if existing is not None and existing.status == "running":
        port = int(existing.labels.get("acousticbench.port", port))
        _log(f"{existing.name} is already running on 127.0.0.1:{port}")
        containers.wait_ready(existing, port, args.wait or spec.start_timeout_s, _log, secrets)  # it may still load
        print(export_line(spec, port))
        return 0
    if existing is not None:
        existing.remove(force=True)  # a stopped container from an earlier start; its name is needed again
    # an offline machine with the model's image and weights may lack the probe's image: start without the GPU check
    unprobed = prereqs.probe_unavailable(client) if spec.gpu_memory_gb else None
    if unprobed:
        _log(f"note: GPUs not checked before the start: {unprobed}; `docker_serve.sh --check` checks them")
    found, _gpus = prereqs.problems(client, spec, gpus=args.gpus, tp=args.tp, dp=args.dp, home=home,
                                    archive=args.archive, probe=unprobed is None)
    if found:  # known now, not after a long image build and a container that dies
        raise UserError("\n".join(found))
    who = containers.port_user(client, port)
    if who:
        raise UserError(f"port {port} is in use (by {who}): stop it or pass --port N (e.g. --port {port + 1000}).")
    containers.ensure_image(client, spec, _log, docker_network(args.host_network))
    if spec.built_in and spec.kind == "vllm":
        from acousticbench.serve.tiny_checkpoint import checkpoint_dir

        checkpoint_dir()  # built on the host (numpy, seconds), mounted read-only where the settings say
    for host, mount in settings["volumes"].items():
        if mount["mode"] == "rw":
            Path(host).mkdir(parents=True, exist_ok=True)  # else the engine creates it, owned by root
    # the image's id, which the server lists in /v1/models and the harness in each run's serving manifest
    settings["environment"][DIGEST] = client.images.get(spec.image).id
    _log(f"starting {settings['name']} ({spec.repo_id}) on 127.0.0.1:{port}, waiting for /health...")
    container = containers.run_container(client, spec, settings)
    containers.wait_ready(container, port, args.wait or spec.start_timeout_s, _log, secrets)
    _log(f"{settings['name']} is ready; a run finds it through:")
    print(export_line(spec, port))
    return 0


def local(spec: ServerSpec, args: argparse.Namespace) -> int:
    """--local: start (or --stop, or --dry-run) the model's server without Docker; stdout gets the export line."""
    from acousticbench.serve import local as serving

    if args.tp or args.dp:
        raise UserError("--tp and --dp apply to Docker's vLLM; with --local add vLLM's own flags to the model's table.")
    port = args.port or spec.port
    if args.stop:
        print(serving.stop(spec))
        return 0
    if args.dry_run:
        argv, env = serving.local_command(spec, port, args.archive, runnable=False)
        print(f"# {spec.display_name} without Docker, in the background (log under ~/.cache/acousticbench/local-servers)")
        print(" ".join([*(f"{k}={v}" for k, v in env.items()), *(shlex.quote(a) for a in argv)]))
        print(export_line(spec, port))
        return 0
    port = serving.start_detached(spec, port, args.wait or spec.start_timeout_s, _log, args.archive)
    _log(f"{spec.serve_name} is ready without Docker; a run finds it through:")
    print(export_line(spec, port))
    return 0


def slurm(spec: ServerSpec, args: argparse.Namespace, sbatch_options: list[str]) -> int:
    """--slurm: submit the replicas (job id on stdout, then the export line), or --stop cancel them."""
    from acousticbench.serve import slurm as cluster

    if args.stop:
        print(cluster.cancel_named(spec))
        return 0
    registry = (args.registry or cluster.default_registry()).expanduser().resolve()
    job = cluster.submit(spec, registry, args.replicas, sbatch_options, args.archive, args.server_command)
    _log(f"submitted job {job} ({args.replicas} replica(s) of {spec.serve_name}); each registers in "
         f"{registry / spec.serve_name} once /health answers; `docker_serve.sh {spec.serve_name} --slurm --stop` "
         "cancels them. A run finds them through:")
    print(job)
    print(f"export ACOUSTICBENCH_ENDPOINTS_FROM={shlex.quote(str(registry))}")
    return 0


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)  # stdout carries only the export line, for eval "$(...)"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown and not args.slurm:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    return run_command(lambda: _command(args, unknown),
                       interrupted="the container keeps starting in the background; --stop removes it.")


def _command(args: argparse.Namespace, sbatch_options: list[str]) -> int:
    if args.list:
        return list_models(args)
    if args.check:
        return check(get_spec(args.name, args.archive) if args.name else None, args, Path.home())
    if not args.name:
        raise UserError("name a model to serve (e.g. voxtral_mini_3b), or use --list.")
    spec = get_spec(args.name, args.archive)
    if args.slurm:
        return slurm(spec, args, sbatch_options)
    if args.local:
        return local(spec, args)
    if args.dry_run:
        return dry_run(spec, args, Path.home())
    if args.stop:
        from acousticbench.serve import containers

        print(containers.stop(containers.connect(), spec))
        return 0
    return start(spec, args, Path.home())


if __name__ == "__main__":
    sys.exit(main())
