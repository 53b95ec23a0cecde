#!/usr/bin/env python3
"""Make the AudioICL spoken digits once with espeak-ng and write them into the package (the build only reads them).

Run it only to change the digits: every AudioICL clip that speaks a digit changes with them, so afterwards rebuild the
pack, update OPEN_MANIFEST_SHA256 in acousticbench/benchmarks/audioicl/pack.py and regenerate the AudioICL reference trajectories.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from acousticbench.core.audio import to_pcm16
from acousticbench.benchmarks.audioicl.build.plan import SR
from acousticbench.benchmarks.audioicl.build.speech import DIGITS, FOLDER, SOURCE, VOICES, WORDS, digit_path

TRIES = 3  # espeak-ng 1.51 once spoke one utterance differently on a fresh machine: every try must agree


def espeak() -> str:
    path = shutil.which("espeak-ng")
    if path is None:
        sys.exit("error: espeak-ng is needed to make the spoken digits: apt-get install -y espeak-ng.")
    return path


def espeak_version(exe: str) -> str:
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False)
    found = re.search(r"\d+\.\d+(?:\.\d+)?", out.stdout)
    return found.group(0) if found else "unknown"


def spoken(exe: str, d: int, voice: int) -> tuple[np.ndarray, int]:
    """espeak-ng's own samples (int16, its own rate) for the word of digit `d` in VOICES[voice]."""
    import soundfile as sf

    name, wpm, pitch = VOICES[voice]
    fd, path = tempfile.mkstemp(suffix=".wav")
    os.close(fd)
    try:
        subprocess.run([exe, "-v", name, "-s", str(wpm), "-p", str(pitch), "-w", path, WORDS[d]],
                       check=True, capture_output=True, timeout=30)
        samples, rate = sf.read(path, dtype="int16")
    finally:
        os.unlink(path)
    return samples, rate


def agreed(exe: str, d: int, voice: int) -> tuple[np.ndarray, int]:
    takes = [spoken(exe, d, voice) for _ in range(TRIES)]
    if any(t[1] != takes[0][1] or not np.array_equal(t[0], takes[0][0]) for t in takes[1:]):
        sys.exit(f"error: espeak-ng spoke '{WORDS[d]}' ({VOICES[voice][0]}) differently in {TRIES} tries; run again.")
    return takes[0]


def trimmed(x: np.ndarray, below_peak_db: float = 40.0, pad_s: float = 0.01) -> np.ndarray:
    """Cut the silence before and after the loudest part, keeping `pad_s`; fade the cut edges; peak 1."""
    level = np.abs(x)
    above = np.flatnonzero(level >= level.max() * 10 ** (-below_peak_db / 20))
    pad = int(pad_s * SR)
    y = x[max(0, above[0] - pad) : above[-1] + pad + 1].copy()
    ramp = min(int(0.005 * SR), y.size // 2)
    y[:ramp] *= np.linspace(0, 1, ramp)
    y[y.size - ramp :] *= np.linspace(1, 0, ramp)
    return y / np.abs(y).max()


def main(argv: list[str] | None = None) -> int:
    import soundfile as sf
    import soxr

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=FOLDER, help=f"folder for the files (default {FOLDER})")
    args = parser.parse_args(argv)
    exe = espeak()
    args.out.mkdir(parents=True, exist_ok=True)
    for d in DIGITS:
        for voice in range(len(VOICES)):
            samples, rate = agreed(exe, d, voice)
            x = samples.astype(np.float64) / 32768.0
            x = soxr.resample(x, rate, SR) if rate != SR else x
            # FLAC of PCM16: lossless and about half a WAV; the builder reads these very samples back
            target = args.out / digit_path(d, voice).name
            sf.write(str(target), to_pcm16(trimmed(x)), SR, subtype="PCM_16", format="FLAC")
    source = {"espeak_ng": espeak_version(exe), "voices": [list(v) for v in VOICES], "words": list(WORDS),
              "sample_rate": SR, "trimmed": "40 dB below the peak, 10 ms kept, 5 ms fades, peak 1 (PCM16 32767)",
              "made_by": "scripts/make_spoken_digits.py"}
    (args.out / SOURCE).write_text(json.dumps(source, indent=1) + "\n", encoding="utf-8")
    print(f"Wrote {len(DIGITS) * len(VOICES)} spoken digits to {args.out}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
