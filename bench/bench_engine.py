#!/usr/bin/env python3
"""Benchmark the engine over real HTTP: throughput against a 200 ms server, harness CPU per question, peak memory.

    .venv/bin/python bench/bench_engine.py [--questions 3800] [--concurrency 64] [--repeats 3] [--clip-seconds 1.0]

The local OpenAI-compatible server runs in its own process, so the CPU figure is the harness's alone: everything
run_one() does (pick questions, open the backend, read the WAVs, base64, the openai SDK request, judge, write each
record, metrics), after the imports: for the CPU figure also the psychometric fit's numpy, which a run imports in a
worker thread while the questions are out (the throughput phase keeps it in the run, as a user's run has it). Each
measurement runs in a fresh process (its ru_maxrss is the whole run's peak memory); medians are printed.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SERVER = REPO / "tests" / "servers" / "openai_server.py"
VARIABLE = "ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT"


def build_pack(root: Path, n_questions: int, clip_s: float) -> Path:
    """n_questions two-clip questions of noise, each clip its own file (no cache can help)."""
    from acousticbench.benchmarks.acoustic.pack.synthetic import write_noise_pack

    return write_noise_pack(root, "rad", n_questions, clip_s, diagnostics=False)


def start_server(delay_s: float, workdir: Path, capacity: int | None = None,
                 probe_delay_s: float = 0.0, extra: tuple[str, ...] = ()) -> tuple[subprocess.Popen, str]:
    """The lean test server answering after `delay_s`; with `capacity`, a 429 with Retry-After: 1 beyond it; with
    `probe_delay_s`, each GET (/health, /v1/models, /version) that much later, as a server far away; `extra`: more of
    its flags (--batching SHAPE)."""
    port_file = workdir / f"port-{time.monotonic_ns()}"  # one per server: a stale file would name a dead port
    extra = [*extra] + (["--capacity", str(capacity), "--retry-after", "1"] if capacity else [])
    extra += ["--probe-delay", str(probe_delay_s)] if probe_delay_s else []
    proc = subprocess.Popen([sys.executable, str(SERVER), "--delay", str(delay_s), "--port-file", str(port_file), *extra])
    deadline = time.monotonic() + 20
    while not port_file.exists():
        if time.monotonic() > deadline or proc.poll() is not None:
            raise SystemExit("the benchmark server did not start")
        time.sleep(0.05)
    return proc, f"http://127.0.0.1:{port_file.read_text()}"


def worker(archive: Path, results: Path, concurrency: int, all_imports_first: bool) -> None:
    """One measured run in this process: prints wall time, CPU seconds and peak RSS as JSON."""
    import acousticbench.models.openai_compat  # noqa: F401  imports are a one-off, not a per-question cost

    if all_imports_first:  # the metrics' imports too: a one-off, none of it per question
        from acousticbench.benchmarks import get_benchmark

        get_benchmark("AcousticBench").warm_up()
    from acousticbench.run.sweep import run_one
    from acousticbench.benchmarks.acoustic.spec import acoustic_spec

    spec = acoustic_spec(model="Voxtral-Mini-3B", task="rad", archive=archive, results_dir=results, concurrency=concurrency)
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    result = run_one(spec, progress=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    print(json.dumps({"n": result.metrics.scored.n, "statuses": result.metrics.statuses, "wall_s": wall,
                      "cpu_s": user + system, "sys_s": system, "process_cpu_s": after.ru_utime + after.ru_stime,
                      "maxrss_mb": after.ru_maxrss / 1024}))


def measure(archive: Path, results: Path, url: str, concurrency: int, all_imports_first: bool) -> dict:
    env = {**os.environ, VARIABLE: url, "ACOUSTICBENCH_RETRY_BASE_DELAY": "0"}
    out = subprocess.run([sys.executable, __file__, "--worker", str(archive), str(results), str(concurrency),
                          str(int(all_imports_first))],
                         capture_output=True, text=True, env=env, cwd=REPO)
    if out.returncode != 0:
        raise SystemExit(f"benchmark run failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def phase(name: str, delay_s: float, args, archive: Path, workdir: Path, all_imports_first: bool = False) -> list[dict]:
    server, url = start_server(delay_s, workdir)
    try:
        runs = [measure(archive, workdir / f"results-{name}-{i}", url, args.concurrency, all_imports_first)
                for i in range(args.repeats)]
    finally:
        server.terminate()
        server.wait()
    for run in runs:
        assert run["n"] == args.questions and run["statuses"] == {"answered": args.questions}, run
    return runs


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        return worker(Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=3800)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--clip-seconds", type=float, default=1.0, help="length of each clip (open pack: 0.8-1.5 s)")
    parser.add_argument("--delay", type=float, default=0.2, help="server latency for the throughput phase")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        archive = build_pack(workdir / "archive", args.questions, args.clip_seconds)
        slow = phase("slow", args.delay, args, archive, workdir)
        fast = phase("instant", 0.0, args, archive, workdir, all_imports_first=True)
    ideal = args.concurrency / args.delay
    rate = statistics.median(args.questions / r["wall_s"] for r in slow)
    cpu_ms = statistics.median(1000 * r["cpu_s"] / args.questions for r in fast)
    sys_ms = statistics.median(1000 * r["sys_s"] / args.questions for r in fast)
    process_ms = statistics.median(1000 * r["process_cpu_s"] / args.questions for r in fast)
    rss = max(r["maxrss_mb"] for r in slow + fast)
    print(f"questions {args.questions}, concurrency {args.concurrency}, clips 2 x {args.clip_seconds:g} s, "
          f"{args.repeats} runs per phase (medians)")
    print(f"throughput vs a {args.delay * 1000:.0f} ms server: {rate:.0f} q/s = {rate / ideal:.0%} of the ideal "
          f"{ideal:.0f} q/s (target >= 94%)")
    print(f"harness CPU per question vs an instant server: {cpu_ms:.2f} ms (target <= 0.8 ms), of which "
          f"{sys_ms:.2f} ms in the kernel (loopback TCP); {process_ms:.2f} ms with interpreter start and imports; "
          f"instant-server throughput {statistics.median(args.questions / r['wall_s'] for r in fast):.0f} q/s")
    print(f"peak memory (ru_maxrss) of a whole run: {rss:.0f} MB (target < 300 MB)")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the end (other work shares them)")


if __name__ == "__main__":
    main()
