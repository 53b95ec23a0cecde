"""The calibration before the first scored question: a tone pair (two 1 kHz tones 20 dB apart; which is louder?),
made with the standard library, whose answer the harness knows; it is not a question of the pack."""
from __future__ import annotations

import io
import math
import random
import struct
import wave

RATE = 16_000
TONE_HZ, TONE_S, RAMP_S = 1000.0, 0.5, 0.02
LOUD, APART_DB = 0.3, 20.0
MAX_ATTEMPTS = 3  # then the run goes on, and config.json says the calibration was not passed
PROMPT = ("Calibration (not scored): which tone is louder? A: the first one; B: the second one. "
          "Set a comfortable volume, then answer.")
WHAT = f"tone pair: two {TONE_HZ:g} Hz tones of {TONE_S:g} s, {APART_DB:g} dB apart; which is louder"


def tone_wav(amplitude: float) -> bytes:
    """A PCM16 mono WAV of the tone at `amplitude` (peak, full scale 1), with raised-cosine ramps against clicks."""
    n, ramp = int(RATE * TONE_S), int(RATE * RAMP_S)
    frames = bytearray()
    for i in range(n):
        edge = min(1.0, i / ramp, (n - 1 - i) / ramp)
        gain = 0.5 - 0.5 * math.cos(math.pi * edge)
        frames += struct.pack("<h", round(32767 * amplitude * gain * math.sin(2 * math.pi * TONE_HZ * i / RATE)))
    buf = io.BytesIO()
    with wave.open(buf, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(RATE)
        out.writeframes(bytes(frames))
    return buf.getvalue()


def tone_pair(seed: int, attempt: int) -> tuple[list[bytes], str]:
    """The two clips of calibration attempt `attempt` and which is louder ("A" or "B"), from the run seed."""
    louder = random.Random(f"calibration:{seed}:{attempt}").choice("AB")
    loud, soft = tone_wav(LOUD), tone_wav(LOUD * 10 ** (-APART_DB / 20))
    return ([loud, soft] if louder == "A" else [soft, loud]), louder
