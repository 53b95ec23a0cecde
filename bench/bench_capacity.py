#!/usr/bin/env python3
"""Benchmark --concurrency auto against servers of a set capacity: the command a user runs,
`run.py --model Voxtral-Mini-3B --task rad --seed 42 --judge rules` (default concurrency), timed from process start to
exit, against local OpenAI-compatible servers that answer in 200 ms and take at most 16 or 64 requests at once (one
more gets 429 with Retry-After: 1, as a rate-limited API or a full vLLM), and against one without a limit.

    .venv/bin/python bench/bench_capacity.py [--archive DIR] [--repeats 5] [--task rad] [--delay 0.2]
                                             [--concurrency auto] [--vllm-endpoint URL] [--probe-delay S]

Then a sweep of two served models, each against its own server without a limit, against one model alone, the two
taken in turn (target: <= 1.20x). Per server, medians over the repeats: requests/s, 429s, questions lost (error
records), requests per question, the command's time over the capacity floor (questions x delay / capacity; for the
server without a limit, the floor at 64 in flight, as bench_command.py) and the run's own (first request to last
answer, as the server saw them), and what the harness says the server sustained. Targets (issue 25): capacity 16 no
question lost, <= 1.10 requests per question, <= 1.25x the floor; capacity 64 <= 1.15x. --vllm-endpoint adds a
server of unknown capacity (real vLLM, e.g. `./scripts/docker_serve.sh NAME --local`): auto against fixed 8 and 64.
--probe-delay S makes each GET of the servers answer S seconds late, as a server far away: what the probe before the
first request costs. --archive defaults to ./archive.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from bench_engine import start_server  # noqa: E402  the same lean server process, with a capacity
MODEL, SECOND = "Voxtral-Mini-3B", "Qwen2-Audio-7B-Instruct"  # two served models, each with its own endpoint
TARGETS = {16: 1.25, 64: 1.15}


def stats(url: str, reset: bool = False) -> dict:
    """The server's counts; `reset` starts its first-arrival and last-reply clocks again."""
    request = urllib.request.Request(url + "/stats", headers={"X-Reset": "1"} if reset else {})
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


def one_run(args, urls: dict[str, str], results: Path, concurrency: str) -> dict:
    """One command from process start to exit (one model per entry of `urls`: model -> its server), with what the
    servers counted and what the run folders say."""
    try:
        before = {url: stats(url, reset=True) for url in urls.values()}
    except OSError:  # a server without /stats (real vLLM): what the harness counted
        before = None
    command = [sys.executable, str(REPO / "run.py"), "--model", ",".join(urls), "--task", args.task, "--seed", "42",
               "--judge", "rules", "--archive", str(args.archive), "--results-dir", str(results),
               "--concurrency", concurrency] + (["--max-samples", str(args.max_samples)] if args.max_samples else [])
    env = {**os.environ, **{variable(model): url for model, url in urls.items()}}
    started, clock = time.perf_counter(), time.time()
    out = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=env)
    wall = time.perf_counter() - started
    if out.returncode not in (0, 1):
        raise SystemExit(f"the command failed (exit {out.returncode}):\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    runs = [p for p in results.iterdir() if p.is_dir()]
    lines = [json.loads(line) for run in runs for line in (run / "responses.jsonl").read_text().splitlines()]
    lanes = [json.loads((run / "config.json").read_text())["concurrency"]["endpoints"][0] for run in runs]
    measured = {"wall_s": wall, "questions": len(lines), "lost": sum(r["status"] == "error" for r in lines),
                "sustained": statistics.median(lane["sustained"] for lane in lanes)}
    if before is None:
        return {**measured, "requests": sum(lane["requests"] for lane in lanes), "start_s": float("nan"),
                "end_s": float("nan"), "refused": sum(lane["overloaded"] for lane in lanes),
                "run_s": float("nan")}
    after = {url: stats(url) for url in urls.values()}
    first = min(a["first_arrival"] for a in after.values()) - clock
    last = clock + wall - max(a["last_reply"] for a in after.values())
    return {**measured, "start_s": first, "end_s": last, "run_s": wall - first - last,
            "requests": sum(a["served"] + a["refused"] - before[u]["served"] - before[u]["refused"]
                            for u, a in after.items()),
            "refused": sum(a["refused"] - before[u]["refused"] for u, a in after.items())}


def variable(model: str) -> str:
    from acousticbench.run.catalog import MODELS
    from acousticbench.core.environment import endpoint_variable

    return endpoint_variable(MODELS[model].settings["serve_name"])


def report(name: str, runs: list[dict], floor_s: float | None, target: float | None) -> None:
    med = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    n = runs[0]["questions"]
    walls = ", ".join(f"{r['wall_s']:.2f}" for r in runs)
    line = (f"{name}: {n} questions, {med['requests'] / med['wall_s']:.0f} requests/s, {med['refused']:.0f} 429s, "
            f"{max(r['lost'] for r in runs)} questions lost (worst run), {med['requests'] / n:.3f} requests per "
            f"question, sustained {med['sustained']:.0f}; {med['wall_s']:.2f} s from process start to exit "
            f"({walls}); process start to first request {med['start_s']:.2f} s, last answer to exit {med['end_s']:.2f} s")
    if floor_s:
        line += (f"; floor {floor_s:.2f} s -> command {med['wall_s'] / floor_s:.2f}x, run {med['run_s'] / floor_s:.2f}x"
                 + (f" (target <= {target:.2f}x)" if target else ""))
    print(line, flush=True)


def sweep(args, workdir: Path) -> None:
    """Two models, each against its own server without a limit, in one command, against one of them alone."""
    (one, first), (two, second) = (start_server(args.delay, workdir, probe_delay_s=args.probe_delay),
                                   start_server(args.delay, workdir, probe_delay_s=args.probe_delay))
    alone: list[dict] = []
    both: list[dict] = []
    try:
        for i in range(args.repeats):  # taken in turn: a machine whose speed drifts moves both alike, not the ratio
            alone.append(one_run(args, {MODEL: first}, workdir / f"results-alone-{i}", args.concurrency))
            both.append(one_run(args, {MODEL: first, SECOND: second}, workdir / f"results-sweep-{i}", args.concurrency))
    finally:
        for server in (one, two):
            server.terminate()
            server.wait()
    report(f"one model alone, --concurrency {args.concurrency}", alone, None, None)
    report(f"two models in one sweep, --concurrency {args.concurrency}", both, None, None)
    ratio = statistics.median(b["wall_s"] / a["wall_s"] for a, b in zip(alone, both))  # each against the run before it
    print(f"sweep of two models / one model alone: {ratio:.2f}x (median of each sweep over the one-model run just "
          f"before it; target <= 1.20x)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", type=Path, default=REPO / "archive")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--task", default="rad")
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--concurrency", default="auto", help="what the command is given (default auto)")
    parser.add_argument("--capacities", default="16,64,0", help="servers to run against; 0: no limit")
    parser.add_argument("--vllm-endpoint", help="also a real server of unknown capacity (vLLM)")
    parser.add_argument("--max-samples", type=int, help="only the first N questions (a slow server: vLLM on a CPU)")
    parser.add_argument("--probe-delay", type=float, default=0.0, help="each GET of the servers answers this much "
                        "later (a server far away): what probing it costs before the first request")
    parser.add_argument("--no-sweep", dest="sweep", action="store_false",
                        help="skip the sweep of two models against two servers without a limit")
    args = parser.parse_args()
    if not (args.archive / "MANIFEST.json").is_file():
        subprocess.run([sys.executable, str(REPO / "run.py"), "--build-archive", "--archive", str(args.archive)],
                       check=True, cwd=REPO)
    with tempfile.TemporaryDirectory(prefix="bench_capacity-") as tmp:
        for capacity in [int(c) for c in args.capacities.split(",") if c.strip()]:
            server, url = start_server(args.delay, Path(tmp), capacity or None, args.probe_delay)
            try:
                runs = [one_run(args, {MODEL: url}, Path(tmp) / f"results-{capacity}-{i}", args.concurrency)
                        for i in range(args.repeats)]
            finally:
                server.terminate()
                server.wait()
            floor = runs[0]["questions"] * args.delay / (capacity or 64)
            name = f"capacity {capacity}" if capacity else "no limit (floor at 64 in flight)"
            report(f"{name}, --concurrency {args.concurrency}", runs, floor, TARGETS.get(capacity))
        if args.sweep:
            sweep(args, Path(tmp))
        if args.vllm_endpoint:
            for concurrency in ("auto", "8", "64"):
                runs = [one_run(args, {MODEL: args.vllm_endpoint}, Path(tmp) / f"results-vllm-{concurrency}-{i}",
                                concurrency) for i in range(args.repeats)]
                report(f"vLLM at {args.vllm_endpoint}, --concurrency {concurrency}", runs, None, None)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the end (other work shares them)")


if __name__ == "__main__":
    main()
