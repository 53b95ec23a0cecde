"""`acousticbench serve` as typed functions: serve_model() starts an open-weight model's server and returns its handle
(URL, export line, stop(); a context manager that stops what it started); the plan, the machine check and every
model's status come back as lines. Nothing is printed but through `reporter`."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from acousticbench.core.reporter import Reporter, SilentReporter, reporting


def _options(fields: dict[str, Any]):
    from acousticbench.serve.endpoint import ServeOptions

    unknown = sorted(set(fields) - set(ServeOptions.__dataclass_fields__))
    if unknown:
        raise TypeError(f"unknown serving option(s) {', '.join(unknown)}; it takes: "
                        f"{', '.join(ServeOptions.__dataclass_fields__)}")
    return ServeOptions(**{k: Path(v) if k == "archive" else v for k, v in fields.items()})


def serve_model(name: str, *, local: bool = False, slurm: bool = False, replicas: int = 1,
                sbatch_options: list[str] = (), registry: Path | str | None = None, server_command: str | None = None,
                reporter: Reporter | None = None, **options: Any):
    """Serve the model `name` (its serve name, `acousticbench serve --list`) in Docker, without Docker (`local`) or
    as SLURM replicas (`slurm`), and wait until it answers; returns a Served: `url`, `export_line`, `started`,
    `stop()`. `options`: port, gpus, tp, dp, wait, archive, host_network (serve.endpoint.ServeOptions). The server
    outlives the call, as the command's does, unless used as `with serve_model(...) as served:`."""
    from acousticbench.serve import endpoint
    from acousticbench.serve.specs import get_spec

    how = _options(options)
    with reporting(reporter or SilentReporter()):
        spec = get_spec(name, how.archive)
        if slurm:
            return endpoint.start_on_slurm(spec, how, replicas, list(sbatch_options),
                                           None if registry is None else Path(registry), server_command)
        if local:
            return endpoint.start_locally(spec, how)
        return endpoint.start_in_docker(spec, how, Path.home())


def serve_plan(name: str, *, local: bool = False, **options: Any):
    """What `acousticbench serve NAME --dry-run` prints: the exact container settings (the token redacted), or the
    command without Docker, and the export line; `.lines`."""
    from acousticbench.serve import overview
    from acousticbench.serve.specs import get_spec

    how = _options(options)
    return overview.plan(get_spec(name, how.archive), how, Path.home(), local=local)


def serve_check(name: str | None = None, **options: Any):
    """What `acousticbench serve [NAME] --check` prints (`.lines`) and whether nothing is wrong (`.ok`)."""
    from acousticbench.serve import overview
    from acousticbench.serve.specs import get_spec

    how = _options(options)
    return overview.machine_check(get_spec(name, how.archive) if name else None, how, Path.home())


def served_models(archive: Path | str = "archive"):
    """What `acousticbench serve --list` prints: every model's serve name, image, port, GPU memory and status."""
    from acousticbench.serve import overview

    return overview.model_status(Path(archive))
