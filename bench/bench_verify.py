"""Benchmark: `verify_checksums` against `sha256sum` over the same files, with a warm page cache."""
from __future__ import annotations

import argparse
import hashlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from acousticbench.benchmarks.acoustic import pack  # noqa: E402
from acousticbench.benchmarks.acoustic.pack.verify import verify_checksums  # noqa: E402
from acousticbench.core.audio import write_wav  # noqa: E402
from acousticbench.benchmarks.acoustic.records import Question  # noqa: E402
from acousticbench.benchmarks.acoustic.tasks import TASKS  # noqa: E402


def build_synthetic_pack(root: Path, seed: int = 0) -> None:
    """A pack shaped like the open one: 8 tasks x 475 questions, ~6,500 one-second WAVs of ~32 KB."""
    rng = np.random.default_rng(seed)
    hashes, tasks = {}, {}
    for code, task in TASKS.items():
        (root / code / "audio").mkdir(parents=True, exist_ok=True)
        questions: list[Question] = []
        for i in range(475):
            qid = f"{code}_{i + 1:04d}"
            if i >= 450:  # order-swapped twin: the files of an earlier question, reversed
                twin = questions[i - 450]
                audio, sums = list(reversed(twin.audio)), dict(twin.sha256)
            else:
                n_files = 1 if (task.clips == 1 or 425 <= i < 450) else 2
                audio = _write_clips(root, code, qid, n_files, 2 if task.clips == 1 else 1, rng)
                sums = {p: hashlib.sha256((root / p).read_bytes()).hexdigest() for p in audio}
                if task.clips == 2 and n_files == 1:
                    audio = audio * 2  # identical pair: one file heard twice
            questions.append(Question(
                id=qid, task=code, split="train" if i % 2 else "eval", kind="scored" if i < 400 else "diagnostic",
                prompt=task.prompt(), audio=audio, answer=None if 425 <= i < 450 else "AB"[i % 2],
                meta={"attribute": task.attribute, "level": i % 5 + 1, "f0_hz": 440.0 + i, "gain_db": -12.5},
                sha256=sums,
            ).sealed())
        hashes[code] = pack.write_questions(root, code, questions)
        tasks[code] = {"title": task.title, "clips": task.clips, "n_scored": 400, "n_diagnostic": 75}
    pack.write_manifest(root, "AcousticBench-synthetic", "0", tasks, hashes)


def _write_clips(root: Path, code: str, qid: str, n: int, channels: int, rng) -> list[str]:
    paths = []
    for k in range(n):
        rel = f"{code}/audio/{qid}_{k + 1}.wav"
        shape = (16_000, channels) if channels > 1 else (16_000,)
        write_wav(root / rel, rng.uniform(-0.5, 0.5, shape).astype(np.float32))
        paths.append(rel)
    return paths


def pack_files(root: Path, tasks: list[str]) -> list[str]:
    """Exactly the files verification reads: the manifest, each questions file, each distinct audio file."""
    files = [pack.MANIFEST]
    for task in tasks:
        files.append(pack.questions_relpath(task))
        files.extend(dict.fromkeys(p for q in pack.load_questions(root, task) for p in q.audio))
    return list(dict.fromkeys(files))


def time_sha256sum(root: Path, files: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(["sha256sum", "--", *files], cwd=root, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def time_openssl(root: Path, files: list[str]) -> float | None:
    """For context only: OpenSSL uses the CPU's SHA extensions, which coreutils' sha256sum may not."""
    if shutil.which("openssl") is None:
        return None
    start = time.perf_counter()
    subprocess.run(["openssl", "dgst", "-sha256", *files], cwd=root, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def time_verify(root: Path, tasks: list[str]) -> float:
    start = time.perf_counter()
    report = verify_checksums(root, tasks)
    elapsed = time.perf_counter() - start
    if report.failures:
        raise SystemExit("\n".join(report.lines()))
    return elapsed


def measure(root: Path, repeat: int) -> None:
    tasks = list(pack.load_manifest(root)["tasks"])
    files = pack_files(root, tasks)
    size = sum((root / f).stat().st_size for f in files)
    print(f"pack: {root}  tasks: {len(tasks)}  files: {len(files)}  {size / 2**20:.0f} MiB")
    time_sha256sum(root, files), time_verify(root, tasks)  # warm the page cache and the imports
    shasum, verify = [], []
    for _ in range(repeat):  # interleaved so drift on a shared machine hits both alike
        shasum.append(time_sha256sum(root, files))
        verify.append(time_verify(root, tasks))
    s, v = statistics.median(shasum), statistics.median(verify)
    print(f"sha256sum        median {s:.3f} s  ({size / 2**20 / s:.0f} MiB/s)  runs: {_fmt(shasum)}")
    print(f"verify_checksums median {v:.3f} s  ({size / 2**20 / v:.0f} MiB/s)  runs: {_fmt(verify)}")
    print(f"harness speed = {100 * s / v:.0f}% of sha256sum (acceptance: >= 70%)")
    openssl = [t for t in (time_openssl(root, files) for _ in range(repeat)) if t is not None]
    if openssl:
        o = statistics.median(openssl)
        print(f"for context: openssl dgst -sha256 median {o:.3f} s; harness = {100 * o / v:.0f}% of its speed")


def _fmt(times: list[float]) -> str:
    return " ".join(f"{t:.3f}" for t in times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--archive", type=Path, default=Path("archive"), help="pack to measure (default ./archive)")
    parser.add_argument("--synthetic", action="store_true", help="measure a generated pack of the same shape instead")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each (default 5)")
    args = parser.parse_args()
    if not args.synthetic and (args.archive / pack.MANIFEST).is_file():
        measure(args.archive, args.repeat)
        return
    with tempfile.TemporaryDirectory(prefix="bench_verify_") as tmp:
        root = Path(tmp) / "archive"
        started = time.perf_counter()
        if args.synthetic:
            build_synthetic_pack(root)
        else:
            try:
                from acousticbench.benchmarks.acoustic.pack.build import build_open_pack
            except ImportError:
                raise SystemExit(f"no pack at {args.archive} and no pack builder yet: pass --archive DIR or --synthetic.")
            print(f"no pack at {args.archive}: building the open pack into {root}")
            build_open_pack(root)
        print(f"built in {time.perf_counter() - started:.1f} s")
        measure(root, args.repeat)


if __name__ == "__main__":
    main()
