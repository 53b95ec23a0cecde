"""What the AudioICL Oracle measures in a waveform: levels, events, sounding time, segments, likeness, spectra."""
from __future__ import annotations

import numpy as np

from acousticbench.benchmarks.acoustic.stimuli.signal import envelope_db

SR = 16_000


def load(path: str) -> np.ndarray:
    """Mono float64 at 16 kHz."""
    from acousticbench.core.audio import read_audio

    x, _ = read_audio(path, sr=SR)
    x = np.asarray(x, dtype=np.float64)
    return x.mean(axis=1) if x.ndim == 2 else x


def count_rises(d: np.ndarray, on: float, off: float) -> int:
    """Rises of a detection curve scaled to 0..1 above `on` after a fall below `off` (hysteresis)."""
    above, below = d >= on, d <= off
    idx = np.flatnonzero(above | below)
    state = above[idx]
    previous = np.concatenate(([False], state[:-1]))  # before the first sample we count as "below": armed
    return int(np.count_nonzero(state & ~previous))


def level_curve(x: np.ndarray, window_s: float = 0.005) -> np.ndarray:
    """Short-time level scaled from the noise floor (0) to the loudest moment (1)."""
    env = envelope_db(x, window_s)
    floor, peak = float(np.percentile(env, 20)), float(env.max())
    return (env - floor) / max(peak - floor, 1e-9)


def onset_curve(x: np.ndarray, margin_db: float = 10.0, frame: int = 256, hop: int = 64) -> np.ndarray:
    """How far each 4 ms step rises above the steady background, band by band (more than `margin_db` counts),
    scaled 0..1: events stand out in their own bands even where broadband noise hides them in the level."""
    n = 1 + (x.size - frame) // hop
    idx = np.arange(frame)[None, :] + hop * np.arange(n)[:, None]
    power = np.abs(np.fft.rfft(x[idx] * np.hanning(frame), axis=1)) ** 2 + 1e-20
    excess = np.maximum(10 * np.log10(power / np.median(power, axis=0)) - margin_db, 0.0).sum(axis=1)
    return excess / max(float(excess.max()), 1e-9)


def frame_rms(x: np.ndarray, frame_s: float = 0.01) -> np.ndarray:
    n = int(frame_s * SR)
    usable = x[: x.size // n * n].reshape(-1, n)
    return np.sqrt(np.mean(usable**2, axis=1))


def sounding_seconds(x: np.ndarray, below_peak_db: float = 40.0) -> float:
    """Seconds of 10 ms frames holding any sound: digital silence (and near-silence) does not count."""
    rms = frame_rms(x)
    return float(np.count_nonzero(rms > rms.max() * 10 ** (-below_peak_db / 20)) * 0.01)


def segments(x: np.ndarray, min_gap_s: float, below_peak_db: float = 35.0, window_s: float = 0.01) -> list[tuple[int, int]]:
    """(start, end) samples of sounding stretches; gaps shorter than `min_gap_s` (closures in a word) are bridged."""
    env = envelope_db(x, window_s)
    on = env >= env.max() - below_peak_db
    edges = np.flatnonzero(np.diff(np.concatenate(([0], on.astype(int), [0]))))
    runs = [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2])]
    merged: list[tuple[int, int]] = []
    for start, end in runs:
        if merged and start - merged[-1][1] < min_gap_s * SR:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return [(a, b) for a, b in merged if b - a >= 0.02 * SR]


def likeness(a: np.ndarray, b: np.ndarray) -> float:
    """Largest normalised cross-correlation over every lag: 1 for the same samples, whatever their level."""
    size = _lag_size(a, b)
    return _peak(np.fft.rfft(a, size), np.conj(np.fft.rfft(b, size)), size, np.linalg.norm(a) * np.linalg.norm(b))


def _lag_size(a: np.ndarray, b: np.ndarray) -> int:
    """The FFT size that holds every lag of a against b without wrapping."""
    return 1 << (a.size + b.size - 1).bit_length()


def _peak(spectrum: np.ndarray, conj_ref: np.ndarray, size: int, norms: float) -> float:
    return float(np.abs(np.fft.irfft(spectrum * conj_ref, size)).max() / (norms + 1e-12))


class Templates:
    """References matched against many pieces (the Oracle's spoken digits, every voice): each one's spectrum is taken
    once per FFT size and a piece's once per size, not once per comparison (the AudioICL Oracle's main cost), at
    likeness's own sizes."""

    def __init__(self, refs: list[np.ndarray]):
        self.refs, self.norms = refs, [float(np.linalg.norm(r)) for r in refs]
        self._spectra: dict[tuple[int, int], np.ndarray] = {}

    def best(self, a: np.ndarray) -> int:
        """The index of the reference most like `a` by likeness's measure."""
        pieces: dict[int, np.ndarray] = {}
        norm, scores = float(np.linalg.norm(a)), []
        for i, ref in enumerate(self.refs):
            size = _lag_size(a, ref)
            if size not in pieces:
                pieces[size] = np.fft.rfft(a, size)
            if (i, size) not in self._spectra:
                self._spectra[i, size] = np.conj(np.fft.rfft(ref, size))
            scores.append(_peak(pieces[size], self._spectra[i, size], size, norm * self.norms[i]))
        return int(np.argmax(scores))


def band_levels(x: np.ndarray, bands: int = 24, lo_hz: float = 60.0, hi_hz: float = 7600.0) -> np.ndarray:
    """Level (dB) in log-spaced bands of the average power spectrum over 64 ms frames."""
    n = 1024
    frames = x[: max(n, x.size // n * n)]
    frames = np.pad(frames, (0, max(0, n - frames.size))).reshape(-1, n) * np.hanning(n)
    power = np.mean(np.abs(np.fft.rfft(frames, axis=1)) ** 2, axis=0)
    freqs = np.fft.rfftfreq(n, 1 / SR)
    edges = np.geomspace(lo_hz, hi_hz, bands + 1)
    return np.array([10 * np.log10(np.mean(power[(freqs >= a) & (freqs < b)]) + 1e-20) for a, b in zip(edges, edges[1:])])


def modulation(x: np.ndarray) -> np.ndarray:
    """How the level moves: depth of the 5 ms envelope, its throb at 2-50 Hz, and the crest factor (dB)."""
    env = frame_rms(x, 0.005)
    env_spec = np.abs(np.fft.rfft(env - env.mean())) ** 2
    freqs = np.fft.rfftfreq(env.size, 0.005)
    throb = env_spec[(freqs >= 2) & (freqs <= 50)].sum() / (env.mean() ** 2 * env.size + 1e-20)
    crest = 20 * np.log10(np.abs(x).max() / (np.sqrt(np.mean(x**2)) + 1e-20) + 1e-20)
    return np.array([10 * np.log10(env.std() / (env.mean() + 1e-20) + 1e-6), 10 * np.log10(throb + 1e-9), crest])


def on_off_runs(x: np.ndarray, below_peak_db: float = 20.0) -> list[tuple[bool, float]]:
    """(tone on?, seconds) runs of a keyed tone, silence at the ends dropped."""
    env = envelope_db(x, 0.004)
    on = env >= env.max() - below_peak_db
    edges = np.flatnonzero(np.diff(on.astype(int))) + 1
    bounds = [0, *edges.tolist(), on.size]
    runs = [(bool(on[a]), (b - a) / SR) for a, b in zip(bounds, bounds[1:])]
    while runs and not runs[0][0]:
        runs.pop(0)
    while runs and not runs[-1][0]:
        runs.pop()
    return runs
