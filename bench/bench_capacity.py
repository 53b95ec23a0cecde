#!/usr/bin/env python3
"""Benchmark --concurrency auto against servers of a set capacity: the command a user runs,
`run.py --model Voxtral-Mini-3B --task rad --seed 42 --judge rules` (default concurrency), timed from process start to
exit, against local OpenAI-compatible servers that answer in 200 ms and take at most 16 or 64 requests at once (one
more gets 429 with Retry-After: 1, as a rate-limited API or a full vLLM), and against one without a limit.

    .venv/bin/python bench/bench_capacity.py [--archive DIR] [--repeats 5] [--task rad] [--delay 0.2]
                                             [--concurrency auto] [--vllm-endpoint URL]

Per server, medians over the repeats: requests/s, 429s, questions lost (error records), requests per question, the
command's time over the capacity floor (questions x delay / capacity; for the server without a limit, the floor at
64 in flight, as bench_command.py) and the run's own (first request to last answer, as the server saw them), and what
the harness says the server sustained. Targets (issue 25): capacity 16 no question lost, <= 1.10 requests per
question, <= 1.25x the floor; capacity 64 <= 1.15x. --vllm-endpoint adds a server of unknown capacity (real vLLM,
e.g. `./scripts/docker_serve.sh NAME --local`): auto against fixed 8 and 64. --archive defaults to ./archive.
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
SERVER = REPO / "tests" / "servers" / "openai_server.py"
VARIABLE = "ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT"
TARGETS = {16: 1.25, 64: 1.15}


def start_server(workdir: Path, delay_s: float, capacity: int | None) -> tuple[subprocess.Popen, str]:
    port_file = workdir / f"port-{capacity}"
    extra = ["--capacity", str(capacity), "--retry-after", "1"] if capacity else []
    proc = subprocess.Popen([sys.executable, str(SERVER), "--delay", str(delay_s), "--port-file", str(port_file), *extra])
    deadline = time.monotonic() + 20
    while not port_file.exists():
        if time.monotonic() > deadline or proc.poll() is not None:
            raise SystemExit("the benchmark server did not start")
        time.sleep(0.05)
    return proc, f"http://127.0.0.1:{port_file.read_text()}"


def stats(url: str, reset: bool = False) -> dict:
    """The server's counts; `reset` starts its first-arrival and last-reply clocks again."""
    request = urllib.request.Request(url + "/stats", headers={"X-Reset": "1"} if reset else {})
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


def one_run(args, url: str, results: Path, concurrency: str) -> dict:
    """One command from process start to exit, with what the server counted and what the run folder says."""
    try:
        before = stats(url, reset=True)
    except OSError:  # a server without /stats (real vLLM)
        before = None
    command = [sys.executable, str(REPO / "run.py"), "--model", "Voxtral-Mini-3B", "--task", args.task, "--seed", "42",
               "--judge", "rules", "--archive", str(args.archive), "--results-dir", str(results),
               "--concurrency", concurrency]
    started, clock = time.perf_counter(), time.time()
    out = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env={**os.environ, VARIABLE: url})
    wall = time.perf_counter() - started
    if out.returncode not in (0, 1):
        raise SystemExit(f"the command failed (exit {out.returncode}):\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    runs = [p for p in results.iterdir() if p.is_dir()]
    lines = [json.loads(line) for run in runs for line in (run / "responses.jsonl").read_text().splitlines()]
    configs = [json.loads((run / "config.json").read_text()) for run in runs]
    lane = configs[0]["concurrency"]["endpoints"][0]
    start_s = end_s = float("nan")
    if before is not None:
        after = stats(url)
        requests = after["served"] + after["refused"] - before["served"] - before["refused"]
        refused = after["refused"] - before["refused"]
        start_s, end_s = after["first_arrival"] - clock, clock + wall - after["last_reply"]
    else:  # what the harness counted
        requests, refused = lane["requests"], lane["overloaded"]
    return {"wall_s": wall, "start_s": start_s, "end_s": end_s, "run_s": wall - start_s - end_s if before is not None else max(c["duration_s"] for c in configs),
            "questions": len(lines),
            "lost": sum(r["status"] == "error" for r in lines), "requests": requests, "refused": refused,
            "sustained": lane["sustained"]}


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", type=Path, default=REPO / "archive")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--task", default="rad")
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--concurrency", default="auto", help="what the command is given (default auto)")
    parser.add_argument("--capacities", default="16,64,0", help="servers to run against; 0: no limit")
    parser.add_argument("--vllm-endpoint", help="also a real server of unknown capacity (vLLM)")
    args = parser.parse_args()
    if not (args.archive / "MANIFEST.json").is_file():
        subprocess.run([sys.executable, str(REPO / "run.py"), "--build-archive", "--archive", str(args.archive)],
                       check=True, cwd=REPO)
    with tempfile.TemporaryDirectory(prefix="bench_capacity-") as tmp:
        for capacity in [int(c) for c in args.capacities.split(",") if c.strip()]:
            server, url = start_server(Path(tmp), args.delay, capacity or None)
            try:
                runs = [one_run(args, url, Path(tmp) / f"results-{capacity}-{i}", args.concurrency)
                        for i in range(args.repeats)]
            finally:
                server.terminate()
                server.wait()
            floor = runs[0]["questions"] * args.delay / (capacity or 64)
            name = f"capacity {capacity}" if capacity else "no limit (floor at 64 in flight)"
            report(f"{name}, --concurrency {args.concurrency}", runs, floor, TARGETS.get(capacity))
        if args.vllm_endpoint:
            for concurrency in ("auto", "8", "64"):
                runs = [one_run(args, args.vllm_endpoint, Path(tmp) / f"results-vllm-{concurrency}-{i}", concurrency)
                        for i in range(args.repeats)]
                report(f"vLLM at {args.vllm_endpoint}, --concurrency {concurrency}", runs, None, None)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the end (other work shares them)")


if __name__ == "__main__":
    main()
