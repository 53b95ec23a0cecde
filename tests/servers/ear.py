"""An honest ear for our test servers: it answers the harness's canary probes from the audio it was given (which clip
holds a tone, which tone is higher, which channel it comes from), and `Mangle` first changes that audio as a faulty
serving stack does (drops clips, keeps the first second, mixes to mono, resamples to telephone band), so the usage a
server reports and what its ear hears are both of the audio it kept."""
from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass

from acousticbench.run.canary import MID, QUESTIONS

TONE_RMS = 1e-3  # above this a clip holds sound; digital silence is 0


@dataclass(frozen=True)
class Mangle:
    keep_clips: int | None = None  # only the first N clips of a request reach the model
    infer: bool = False  # with a clip dropped, answer what one clip suggests ("the other one") instead of guessing
    keep_s: float | None = None  # each clip cut after this many seconds
    mono: bool = False  # stereo mixed to one channel
    rate: int | None = None  # resampled to this rate, band-limited (8000: telephone audio)

    def apply(self, clips: list[bytes]) -> list[bytes]:
        """The WAV bytes the model gets."""
        kept = clips[:self.keep_clips] if self.keep_clips is not None else clips
        if not (self.keep_s or self.mono or self.rate):
            return list(kept)
        return [self._one(c) for c in kept]

    def _one(self, data: bytes) -> bytes:
        import numpy as np
        import soundfile as sf

        samples, sr = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
        if self.keep_s is not None:
            samples = samples[:int(self.keep_s * sr)]
        if self.mono:
            samples = samples.mean(axis=1, keepdims=True)
        if self.rate and self.rate < sr:  # drop what is above the new Nyquist, then keep every sample it still has
            spectrum = np.fft.rfft(samples, axis=0)
            spectrum[np.fft.rfftfreq(len(samples), 1 / sr) >= self.rate / 2] = 0
            samples = np.fft.irfft(spectrum, len(samples), axis=0).astype(np.float32)
        out = io.BytesIO()
        sf.write(out, samples, sr, format="WAV", subtype="PCM_16")
        return out.getvalue()


def _heard(data: bytes) -> tuple[float, float, list[float]]:
    """(RMS, the strongest frequency, each channel's RMS) of a clip."""
    import numpy as np
    import soundfile as sf

    samples, sr = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    per_channel = [float(np.sqrt(np.mean(c ** 2))) if len(c) else 0.0 for c in samples.T]
    mixed = samples.mean(axis=1)
    spectrum = np.abs(np.fft.rfft(mixed)) if len(mixed) else np.zeros(1)
    return float(np.sqrt(np.mean(mixed ** 2))) if len(mixed) else 0.0, \
        float(np.argmax(spectrum) * sr / max(len(mixed), 1)), per_channel


def guess(clips: list[bytes]) -> str:
    """What a listener that cannot tell answers: a letter drawn from what it heard, the same for the same audio."""
    return "A" if hashlib.sha256(b"".join(clips)).digest()[0] % 2 == 0 else "B"


def canary_answer(text: str, clips: list[bytes], infer: bool = False) -> str | None:
    """The letter an honest listener gives to a canary probe it heard as `clips`; None when `text` is none of them."""
    kind = next((k for k, q in QUESTIONS.items() if q in text), None)
    if kind is None:
        return None
    heard = [_heard(c) for c in clips]
    sounding = [rms > TONE_RMS for rms, _, _ in heard]
    if kind == "stereo":
        levels = heard[0][2] if heard else []
        if len(levels) != 2 or abs(levels[0] - levels[1]) < TONE_RMS:
            return guess(clips)  # one channel, or both the same: left and right are one sound
        return "A" if levels[0] > levels[1] else "B"
    if len(clips) == 2 and kind == "presence" and sounding.count(True) == 1:
        return "A" if sounding[0] else "B"
    if len(clips) == 2 and kind == "pitch" and all(sounding):
        return "A" if heard[0][1] > heard[1][1] else "B"
    if len(clips) == 1 and infer and kind == "presence":  # it heard one clip: the tone is there, or in the other one
        return "A" if sounding[0] else "B"
    if len(clips) == 1 and infer and kind == "pitch" and sounding[0] and abs(heard[0][1] - MID) > MID / 4:
        return "A" if heard[0][1] > MID else "B"  # a tone far from the middle one: the other is likely nearer it
    return guess(clips)
