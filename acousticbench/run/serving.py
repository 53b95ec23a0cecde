"""--serve slurm: a command that serves its open-weight models itself, as sbatch jobs of replicas registering in a
folder of its own, and cancels every job it submitted when it ends (finished, failed, Ctrl-C or SIGTERM)."""
from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from acousticbench.core.reporter import warn
from acousticbench.core.settings import SweepSettings
from acousticbench.core.environment import env_number, env_words


def replica_count() -> int:
    return int(env_number("ACOUSTICBENCH_SLURM_REPLICAS", 1))


class Serving:
    """The jobs of --serve slurm: which models it serves and in which folder (known before anything is submitted, so
    the backends are made first), submitted once every check has passed, cancelled however the command ends."""

    def __init__(self, groups: Iterable[tuple], sweep: SweepSettings, archive: Path):
        self.archive, self.jobs = archive, []
        self.names: dict = {}  # model group key -> the serve name of what it submits
        self.registry: Path | None = None
        if sweep.serve == "slurm":
            from acousticbench.serve import slurm

            self.registry = slurm.default_registry() / f"sweep-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
            for key in dict.fromkeys(groups):  # each model session's key (run/prepared.py's session_key)
                serve_name = dict(key[1]).get("serve_name") or _serve_name(key[0], archive)
                if serve_name is not None:  # an open-weight model; the others have nothing to serve
                    self.names[key] = serve_name

    def overrides(self, key) -> dict:
        """What the model's backend is made with: the registry its replicas register in, if it is served here."""
        return {"endpoints_from": str(self.registry)} if key in self.names else {}

    @contextmanager
    def submitted(self) -> Iterator[None]:
        """Its jobs submitted for the block (a command's sweep), cancelled however the block ends."""
        try:
            self.submit()
            yield
        finally:
            self.cancel()

    def submit(self) -> None:
        from acousticbench.serve import slurm
        from acousticbench.serve.specs import get_spec

        options = env_words("ACOUSTICBENCH_SBATCH_OPTIONS")
        command = os.environ.get("ACOUSTICBENCH_SLURM_SERVER_COMMAND") or None  # a server of one's own ({port})
        if command:
            env_words("ACOUSTICBENCH_SLURM_SERVER_COMMAND")  # split in each job: checked here, before any is sent
        for key, serve_name in self.names.items():
            job = slurm.submit(get_spec(serve_name, self.archive), self.registry, replica_count(), options,
                               self.archive, command)
            self.jobs.append(job)
            warn(f"--serve slurm: job {job} serves {key[0]} ({replica_count()} replica(s)), registering in "
                 f"{self.registry / serve_name}")

    def cancel(self) -> None:
        if self.jobs:
            from acousticbench.serve import slurm

            jobs, self.jobs = self.jobs, []
            slurm.cancel(jobs)
            warn(f"--serve slurm: cancelled job(s) {', '.join(jobs)}")


def _serve_name(model: str, archive: Path) -> str | None:
    from acousticbench.run.catalog import get_model

    return get_model(model, archive).settings.get("serve_name")
