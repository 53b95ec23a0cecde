#!/usr/bin/env python3
"""Benchmark --concurrency auto against servers that batch: the batching test server in a few shapes (auto against
the best of several fixed levels) and real vLLM on this CPU (auto against a plain asyncio client at a fixed high level
with the harness's own request bodies), warm and cold, prefix caching on and off.

    .venv/bin/python bench/bench_vllm.py [--archive DIR] [--repeats 3] [--shapes NAME,...] [--no-vllm]
                                         [--batching-task all] [--vllm-task rad] [--plain 256]

Each figure is a median over the repeats of goodput (answers per second) over the request phase, first request to
last answer as the server saw it (the batching server's /stats; vLLM's /metrics, read ten times a second), so the
harness's start-up and exit are not in it; runs of the compared clients are taken in turn. It prints the share of
the limit auto reached and the level it settled on (the one it held longest). Targets (issue 37): >= 0.90 of the
best fixed level on every batching shape, >= 0.90 of the plain client on vLLM.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))
from bench_capacity import stats  # noqa: E402
from bench_engine import start_server  # noqa: E402
from vllm_client import VllmServer, capture_bodies, plain_client  # noqa: E402

MODEL, VLLM_MODEL = "Voxtral-Mini-3B", "Tiny-Qwen2-Audio-vLLM"
# name -> (servers/batching.py Shape: a, b, max_batch, steps, prefill, cached prefill; the fixed levels to beat)
SHAPES = {
    "gpu-256": ("0.1,0.0006,256,5", (128, 256, 384)),  # latency grows slowly with the batch: best above 128
    "batch-64": ("0.02,0.001,64,5", (32, 64, 128)),  # a small engine with a queue beyond 64
    "compute-bound": ("0.002,0.001,256,5", (16, 32, 64)),  # each sequence costs: full from a few at once
    "prefix-cache": ("0.04,0.0005,128,5,0.01,0.001", (64, 128, 256)),  # a new prompt's prefill is most of a step
}


def harness(args, model: str, url: str, task: str, concurrency: str, results: Path, phase) -> dict:
    """One run.py command; its goodput over the request phase `phase` measures, and where auto settled."""
    from bench_capacity import variable

    command = [sys.executable, str(REPO / "run.py"), "--model", model, "--task", task, "--seed", "42", "--judge",
               "rules", "--archive", str(args.archive), "--results-dir", str(results), "--concurrency", concurrency]
    with phase as seen:
        out = subprocess.run(command, capture_output=True, text=True, cwd=REPO,
                             env={**os.environ, variable(model): url})
    if out.returncode not in (0, 1):
        raise SystemExit(f"the command failed (exit {out.returncode}):\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    import json

    runs = [p for p in results.iterdir() if p.is_dir()]
    lines = [json.loads(line) for run in runs for line in (run / "responses.jsonl").read_text().splitlines()]
    answered = sum(r["status"] != "error" for r in lines)
    lanes = [json.loads((run / "config.json").read_text())["concurrency"]["endpoints"][0] for run in runs]
    return {"goodput": answered / seen.seconds, "lost": len(lines) - answered,
            "settled": max(lane["sustained"] for lane in lanes), "mean": max(lane["in_flight_mean"] for lane in lanes)}


class LocalPhase:
    """The request phase as the test server counted it (its /stats clocks)."""

    def __init__(self, url: str):
        self.url = url

    def __enter__(self):
        stats(self.url, reset=True)
        return self

    def __exit__(self, *exc):
        seen = stats(self.url)
        self.seconds = max(seen["last_reply"] - seen["first_arrival"], 1e-6)


def batching(args, workdir: Path) -> None:
    for name in args.shapes.split(","):
        shape, levels = SHAPES[name]
        server, url = start_server(0.0, workdir, extra=("--batching", shape))
        try:
            runs: dict[str, list[dict]] = {str(level): [] for level in levels} | {"auto": []}
            for i in range(args.repeats):  # in turn: a machine whose speed drifts moves every level alike
                for level in runs:
                    runs[level].append(harness(args, MODEL, url, args.batching_task, level,
                                               workdir / f"{name}-{level}-{i}", LocalPhase(url)))
        finally:
            server.terminate()
            server.wait()
        med = {level: statistics.median(r["goodput"] for r in got) for level, got in runs.items()}
        best = max((level for level in med if level != "auto"), key=med.get)
        auto = runs["auto"]
        print(f"batching {name} ({shape}), --task {args.batching_task}: "
              + ", ".join(f"{level} {med[level]:.0f}/s" for level in med)
              + f"; auto / best fixed ({best}) = {med['auto'] / med[best]:.2f} (target >= 0.90); auto settled on "
              f"{statistics.median(r['settled'] for r in auto):.0f} ({[r['settled'] for r in auto]}), "
              f"{statistics.median(r['mean'] for r in auto):.0f} in flight on average; "
              f"{max(r['lost'] for got in runs.values() for r in got)} questions lost", flush=True)


def vllm(args, workdir: Path) -> None:
    bodies = capture_bodies(REPO, args.archive, args.vllm_task, workdir)
    for caching in ("on", "off"):
        with VllmServer(caching == "on", workdir) as server:
            for warmth in ("warm", "cold"):
                if caching == "off" and warmth == "cold":
                    continue  # without a prefix cache there is nothing to warm
                plain, auto, fixed = [], [], []
                plain_client(server.url, bodies, args.plain)  # a first run: the engine's own first batches
                for i in range(args.repeats):
                    if warmth == "cold":
                        server.reset_prefix_cache()
                    with server.phase(len(bodies)) as seen:
                        plain_client(server.url, bodies, args.plain)
                    plain.append(len(bodies) / seen.seconds)
                    if warmth == "cold":
                        server.reset_prefix_cache()
                    auto.append(harness(args, VLLM_MODEL, server.url, args.vllm_task, "auto",
                                        workdir / f"vllm-{caching}-{warmth}-{i}", server.phase(len(bodies))))
                    if warmth == "cold":
                        server.reset_prefix_cache()
                    fixed.append(harness(args, VLLM_MODEL, server.url, args.vllm_task, str(args.plain),
                                         workdir / f"vllm-{caching}-{warmth}-{i}-fixed", server.phase(len(bodies))))
                share = statistics.median(a["goodput"] / p for a, p in zip(auto, plain))
                goodputs = ", ".join(format(a["goodput"], ".1f") for a in auto)
                print(f"vLLM, prefix caching {caching}, {warmth}, --task {args.vllm_task} ({len(bodies)} questions): "
                      f"plain client at {args.plain} {statistics.median(plain):.1f}/s "
                      f"({', '.join(format(p, '.1f') for p in plain)}), auto "
                      f"{statistics.median(a['goodput'] for a in auto):.1f}/s ({goodputs}); auto / plain = {share:.2f} "
                      f"(median of each run over the plain run before it; target >= 0.90); auto settled on "
                      f"{[a['settled'] for a in auto]}, {[a['mean'] for a in auto]} in flight on average; the "
                      f"harness at a fixed {args.plain}: {statistics.median(f['goodput'] for f in fixed):.1f}/s, "
                      f"{statistics.median(f['goodput'] / p for f, p in zip(fixed, plain)):.2f} of the plain client "
                      "(what the harness's own work costs a server sharing its CPU)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", type=Path, default=REPO / "archive")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--shapes", default=",".join(SHAPES), help=f"batching shapes to run: {', '.join(SHAPES)}")
    parser.add_argument("--batching-task", default="all")
    parser.add_argument("--vllm-task", default="rad")
    parser.add_argument("--plain", type=int, default=256, help="the plain client's requests in flight")
    parser.add_argument("--no-vllm", dest="vllm", action="store_false", help="only the batching server")
    parser.add_argument("--no-batching", dest="batching", action="store_false", help="only real vLLM")
    args = parser.parse_args()
    if not (args.archive / "MANIFEST.json").is_file():
        subprocess.run([sys.executable, str(REPO / "run.py"), "--build-archive", "--archive", str(args.archive)],
                       check=True, cwd=REPO)
    with tempfile.TemporaryDirectory(prefix="bench_vllm-") as tmp:
        if args.batching and args.shapes:
            batching(args, Path(tmp))
        if args.vllm:
            vllm(args, Path(tmp))
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the end (other work shares them)")


if __name__ == "__main__":
    main()
