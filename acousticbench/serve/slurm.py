"""Serving on a SLURM cluster: an sbatch array of a model's servers (the settings of --local), each on a free port of
its node, registering itself in a registry folder once /health answers and removing itself when it ends."""
from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from acousticbench.core.environment import cache_dir
from acousticbench.core.errors import UserError
from acousticbench.models import replicas
from acousticbench.models.health import health_status
from acousticbench.serve.specs import ServerSpec

JOB_PREFIX = replicas.JOB_PREFIX


def default_registry() -> Path:
    """$ACOUSTICBENCH_ENDPOINTS_FROM, else ~/.cache/acousticbench/replicas (a home folder every node sees)."""
    given = os.environ.get(replicas.VARIABLE)
    return Path(given).expanduser() if given else cache_dir() / "replicas"


def job_name(spec: ServerSpec) -> str:
    return JOB_PREFIX + spec.serve_name


def _slurm(argv: list[str]) -> str:
    """A SLURM client's output; its failure is one line with what it said."""
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        raise UserError(f"{argv[0]} is not installed here: run this on a SLURM login node (or start a one-node "
                        "cluster with ./scripts/slurm_cluster.sh start and export the SLURM_CONF it prints).") from None
    if out.returncode != 0:
        raise UserError(f"{' '.join(argv[:2])} failed: {(out.stderr or out.stdout).strip()[-400:]}")
    return out.stdout.strip()


def submit(spec: ServerSpec, registry: Path, replica_count: int, sbatch_options: list[str], archive: Path,
           server_command: str | None = None) -> str:
    """sbatch an array of `replica_count` servers of `spec`; returns the array's job id."""
    if replica_count < 1:
        raise UserError(f"--replicas {replica_count}: give 1 or more.")
    try:
        shlex.split(server_command or "")  # each job splits it: a command it cannot split would end every replica
    except ValueError as err:
        raise UserError(f"the server command {server_command!r} cannot be split into words ({err}): close its "
                        "quotes.") from None
    registry = registry.resolve()
    logs = replicas.folder_of(registry, spec.serve_name) / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    replica = [sys.executable, "-m", "acousticbench.serve.slurm", spec.serve_name, str(registry),
               "--archive", str(archive.resolve())] + (["--server-command", server_command] if server_command else [])
    # the server runs in the job's foreground; exec keeps the process tree that scancel signals as small as it is
    script = "#!/bin/bash\nexec " + " ".join(shlex.quote(a) for a in replica) + "\n"
    argv = ["sbatch", "--parsable", f"--job-name={job_name(spec)}", f"--array=0-{replica_count - 1}",
            f"--output={logs}/%A_%a.log", f"--chdir={Path.cwd()}", *sbatch_options]
    try:
        out = subprocess.run(argv, input=script, capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        return _slurm(["sbatch"])  # says sbatch is missing
    if out.returncode != 0:
        raise UserError(f"sbatch failed: {(out.stderr or out.stdout).strip()[-400:]}")
    return out.stdout.strip().split(";")[0]


def cancel(job_ids: list[str]) -> None:
    if job_ids:
        _slurm(["scancel", *job_ids])


def cancel_named(spec: ServerSpec) -> str:
    """--stop: every job of this user that serves `spec`."""
    user = os.environ.get("USER") or os.environ.get("LOGNAME") or str(os.getuid())
    jobs = _slurm(["squeue", "-h", "-u", user, "-n", job_name(spec), "-o", "%A"]).split()
    cancel(sorted(set(jobs)))
    return f"cancelled {len(set(jobs))} job(s) serving {spec.serve_name}" if jobs else \
        f"no job serves {spec.serve_name}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("", 0))
        return sock.getsockname()[1]


def _server_argv(name: str, port: int, archive: Path, server_command: str | None) -> tuple[list[str], dict]:
    if server_command:  # a server of one's own: {port} is its port
        return shlex.split(server_command.replace("{port}", str(port))), {}
    from acousticbench.serve.local import local_command
    from acousticbench.serve.specs import get_spec

    return local_command(get_spec(name, archive), port, archive, host="0.0.0.0")


def run_replica(name: str, registry: Path, archive: Path, server_command: str | None = None,
                wait_s: float = 3600.0) -> int:
    """Inside one array task: start the server, register it once healthy, and unregister before it stops (on
    SIGTERM from scancel or the time limit, or when it exits on its own)."""
    key = (f"{os.environ['SLURM_ARRAY_JOB_ID']}_{os.environ['SLURM_ARRAY_TASK_ID']}"
           if os.environ.get("SLURM_ARRAY_TASK_ID") else os.environ.get("SLURM_JOB_ID", str(os.getpid())))
    port = free_port()
    argv, env = _server_argv(name, port, archive, server_command)
    server = subprocess.Popen(argv, env={**os.environ, **env}, stdin=subprocess.DEVNULL)
    stopping = []

    def unregister_and_stop(signum, _frame) -> None:
        stopping.append(signum)
        replicas.remove(registry, name, key)  # first: the harness stops sending before the server goes
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, unregister_and_stop)
    signal.signal(signal.SIGINT, unregister_and_stop)
    host = os.environ.get("ACOUSTICBENCH_REPLICA_HOST") or socket.gethostname()
    url = f"http://{host}:{port}"
    try:
        deadline = time.monotonic() + wait_s
        while health_status(f"http://127.0.0.1:{port}") != 200:
            if server.poll() is not None or stopping or time.monotonic() > deadline:
                print(f"replica {key}: the server did not come up (exit {server.poll()})", flush=True)
                return 1
            time.sleep(0.5)
        replicas.write(registry, name, key, url, job=key)
        print(f"replica {key}: {name} at {url} is registered in {replicas.folder_of(registry, name)}", flush=True)
        return server.wait()
    finally:
        replicas.remove(registry, name, key)
        if server.poll() is None:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m acousticbench.serve.slurm", description=__doc__)
    p.add_argument("name")
    p.add_argument("registry", type=Path)
    p.add_argument("--archive", type=Path, default=Path("archive"))
    p.add_argument("--server-command")
    args = p.parse_args(argv)
    return run_replica(args.name, args.registry, args.archive, args.server_command)


if __name__ == "__main__":
    sys.exit(main())
