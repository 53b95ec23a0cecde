"""docker_serve.sh (`acousticbench serve`): start, stop, list or describe the server of an open-weight model; it prints
what serve/endpoint.py and serve/overview.py return, and progress goes to stderr."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from acousticbench.core.errors import UserError, run_command
from acousticbench.serve.endpoint import ServeOptions
from acousticbench.serve.specs import LORA_PREFIX, get_spec


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


def options_of(args: argparse.Namespace) -> ServeOptions:
    return ServeOptions(port=args.port, gpus=args.gpus, tp=args.tp, dp=args.dp, wait=args.wait, archive=args.archive,
                        host_network=args.host_network)


def _print(lines) -> int:
    print("\n".join(lines.lines))
    return 0 if lines.ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown and not args.slurm:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    return run_command(lambda: _command(args, unknown),
                       interrupted="the container keeps starting in the background; --stop removes it.")


def _command(args: argparse.Namespace, sbatch_options: list[str]) -> int:
    from acousticbench.serve import endpoint, overview

    options = options_of(args)
    if args.list:
        return _print(overview.model_status(args.archive))
    if args.check:
        return _print(overview.machine_check(get_spec(args.name, args.archive) if args.name else None, options,
                                             Path.home()))
    if not args.name:
        raise UserError("name a model to serve (e.g. voxtral_mini_3b), or use --list.")
    spec = get_spec(args.name, args.archive)
    how = "slurm" if args.slurm else "local" if args.local else "docker"
    if args.local:
        endpoint.refuse_parallel_locally(options)
    if args.stop and not (args.dry_run and how == "docker"):
        print(endpoint.stop_model(spec, how))
        return 0
    if args.dry_run and not args.slurm:
        return _print(overview.plan(spec, options, Path.home(), local=args.local))
    if args.slurm:
        served = endpoint.start_on_slurm(spec, options, args.replicas, sbatch_options, args.registry,
                                         args.server_command)
        print(served.job)
    elif args.local:
        served = endpoint.start_locally(spec, options)
    else:
        served = endpoint.start_in_docker(spec, options, Path.home())
    print(served.export_line)  # stdout carries only the export line (and a job id), for eval "$(...)"
    return 0


if __name__ == "__main__":
    sys.exit(main())
