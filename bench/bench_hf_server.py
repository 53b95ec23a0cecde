#!/usr/bin/env python3
"""Benchmark our transformers server with Tiny-Qwen2-Audio on this machine, and the harness's overhead against it.

    .venv/bin/python bench/bench_hf_server.py [--questions 40] [--clip-seconds 1.0] [--repeats 3]

1. Server alone: the harness's own request bodies (two input_audio clips + the rad prompt, max_tokens 32), sent
   one after another (the server answers one at a time), then 4 at once: requests per second, seconds per request.
2. Harness against the same running server: run_one() (what run.py does after its imports: pick questions, read
   and base64 the WAVs, the openai SDK request, judge, write records and metrics) at concurrency 1 and 4.
   Overhead per question = harness wall time per question - server time per question. Medians of the repeats.
"""
from __future__ import annotations

import argparse
import base64
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def build_pack(root: Path, n: int, clip_s: float) -> Path:
    """n two-clip questions of noise, each clip its own file (no cache can help)."""
    from acousticbench.benchmarks.acoustic.pack.synthetic import write_noise_pack

    return write_noise_pack(root, "rad", n, clip_s, diagnostics=False)


def start_server() -> tuple[subprocess.Popen, str]:
    from acousticbench.models.health import health_status as health
    from acousticbench.models.local_server import free_port

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "acousticbench.serve.hf_server", "--model", "tiny_qwen2_audio",
                             "--port", str(port)], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    while health(url) != 200:
        if proc.poll() is not None:
            raise SystemExit("the server did not start")
        time.sleep(0.2)
    return proc, url


def request_bodies(pack: Path) -> list[dict]:
    """What the harness sends for each question: the clips as base64 WAV parts, then the question text."""
    from acousticbench.benchmarks.acoustic.pack import load_questions

    bodies = []
    for q in load_questions(pack, "rad"):
        parts = [{"type": "input_audio", "input_audio": {"data": base64.b64encode((pack / a).read_bytes()).decode(),
                                                         "format": "wav"}} for a in q.audio]
        bodies.append({"model": "acousticbench/tiny-qwen2-audio", "seed": 42, "temperature": 0.0, "max_tokens": 32,
                       "messages": [{"role": "user", "content": [*parts, {"type": "text", "text": q.prompt}]}]})
    return bodies


def server_rate(url: str, bodies: list[dict], parallel: int) -> float:
    """Seconds for all bodies, `parallel` in flight."""
    import httpx

    with httpx.Client(base_url=url, timeout=120) as client:
        client.post("/v1/chat/completions", json=bodies[0])  # warm-up
        started = time.perf_counter()
        with ThreadPoolExecutor(parallel) as pool:
            codes = list(pool.map(lambda b: client.post("/v1/chat/completions", json=b).status_code, bodies))
        elapsed = time.perf_counter() - started
    assert codes == [200] * len(bodies), codes
    return elapsed


def harness_time(url: str, pack: Path, concurrency: int) -> float:
    from acousticbench.run.sweep import run_one
    from acousticbench.benchmarks.acoustic.spec import acoustic_spec

    with tempfile.TemporaryDirectory() as results:
        spec = acoustic_spec(model="Tiny-Qwen2-Audio", task="rad", archive=pack, results_dir=Path(results), judge="rules",
                       endpoint=url, concurrency=concurrency)
        started = time.perf_counter()
        result = run_one(spec, progress=False)
        elapsed = time.perf_counter() - started
    assert not result.metrics.statuses.get("error"), result.metrics.statuses
    return elapsed


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--questions", type=int, default=40)
    p.add_argument("--clip-seconds", type=float, default=1.0)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    n = args.questions
    with tempfile.TemporaryDirectory() as tmp:
        pack = build_pack(Path(tmp) / "pack", n, args.clip_seconds)
        proc, url = start_server()
        try:
            bodies = request_bodies(pack)
            serial = statistics.median(server_rate(url, bodies, 1) for _ in range(args.repeats))
            burst = statistics.median(server_rate(url, bodies, 4) for _ in range(args.repeats))
            harness1 = statistics.median(harness_time(url, pack, 1) for _ in range(args.repeats))
            harness4 = statistics.median(harness_time(url, pack, 4) for _ in range(args.repeats))
        finally:
            proc.terminate()
            proc.wait()
    print(f"{n} two-clip rad questions, {args.clip_seconds:g} s clips, Tiny-Qwen2-Audio, max_tokens 32, "
          f"medians of {args.repeats}")
    print(f"server alone, one at a time: {n / serial:6.1f} requests/s ({serial / n * 1000:.1f} ms per request)")
    print(f"server alone, 4 in flight:   {n / burst:6.1f} requests/s ({burst / n * 1000:.1f} ms per request; "
          "one generate at a time, the next request decoded meanwhile)")
    # overhead against the server fed the same way: harness wall time per question - server time per question
    for c, wall, server in ((1, harness1, serial), (4, harness4, burst)):
        print(f"harness, concurrency {c}:     {n / wall:6.1f} questions/s ({wall / n * 1000:.1f} ms per question; "
              f"overhead {(wall - server) / n * 1000:+.1f} ms per question)")


if __name__ == "__main__":
    main()
