#!/usr/bin/env python3
"""Check the runs of a results folder for scripts/test_slurm.sh and scripts/test_docker.sh: each finished, every
question answered exactly once, and (with --used/--ended) how many replicas answered and how many ended mid-run, or
(with --container) that the serving manifest names the image that served it. One line per problem; exit 1."""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path


def problems(run: Path, args: argparse.Namespace) -> list[str]:
    config = json.loads((run / "config.json").read_text())
    lines = [json.loads(line) for line in (run / "responses.jsonl").read_text().splitlines() if line.strip()]
    ids = Counter(r["id"] for r in lines)
    found = [f"{run.name}: {q} recorded {n} times" for q, n in ids.items() if n > 1]
    found += [f"{run.name}: {r['id']} is {r['status']}: {r.get('error')}" for r in lines if r["status"] == "error"]
    if "finished_at" not in config:
        found.append(f"{run.name}: did not finish")
    if args.expect is not None and len(ids) != args.expect:
        found.append(f"{run.name}: {len(ids)} questions recorded, not {args.expect}")
    lanes = config.get("concurrency", {}).get("endpoints", [])
    used = sum(1 for lane in lanes if lane["answered"])
    ended = sum(1 for lane in lanes if lane.get("ended"))
    if args.used is not None and used < args.used:
        found.append(f"{run.name}: {used} replica(s) answered, not {args.used}: {lanes}")
    if args.ended is not None and ended != args.ended:
        found.append(f"{run.name}: {ended} replica(s) ended mid-run, not {args.ended}")
    log = (run / "run.log").read_text()
    if args.resumed and "interrupted" not in log:
        found.append(f"{run.name}: run.log shows no interruption to resume from")
    replicas = config["backend"].get("replicas") or []
    served_from = (config.get("manifest") or {}).get("container_digest")
    if args.container is not None and served_from != args.container:
        found.append(f"{run.name}: the serving manifest names the image {served_from}, not {args.container}")
    elif args.container is None and (not replicas or not all(r.get("job") and r.get("node") for r in replicas)):
        found.append(f"{run.name}: config.json names no job and node of its replicas: {replicas}")
    served = f"image {served_from}" if args.container else \
        f"replicas {[(r.get('job'), r.get('node'), r.get('server_version')) for r in replicas]}"
    print(f"{run.name}: {len(ids)} questions once each, {used} replica(s) answered, {ended} ended; {served}")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("results", type=Path)
    parser.add_argument("--expect", type=int, help="questions per run")
    parser.add_argument("--used", type=int, help="at least this many replicas answered")
    parser.add_argument("--ended", type=int, help="exactly this many replicas ended mid-run")
    parser.add_argument("--runs", type=int, help="exactly this many runs")
    parser.add_argument("--resumed", action="store_true", help="each run was interrupted and resumed")
    parser.add_argument("--container", help="the image id the serving manifest must name (one container, no SLURM)")
    args = parser.parse_args()
    runs = sorted(p for p in args.results.iterdir() if p.is_dir())
    found = [] if args.runs is None or len(runs) == args.runs else [f"{len(runs)} runs, not {args.runs}"]
    found += [line for run in runs for line in problems(run, args)] if runs else ["no run"]
    for line in found:
        print(f"problem: {line}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
