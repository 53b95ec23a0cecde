"""The level of every clip: its own roved level over its own roved background noise, so that level answers only `lou`."""
# Why roving, and why around the middle of two levels. A clip's overall RMS and the RMS of its sounding part
# (its events, or its sound while it lasts) differ by how much of the clip sounds: with equal overall RMS a clip
# with twice the events has 3 dB softer events (the leak of issue 14); with equal event level it has 3 dB more
# RMS. No gain can equalise both, so each clip is scaled to put the MIDDLE of the two (in dB) at its roved level:
# every level feature then differs by at most half that gap, 1.5 dB at the largest scored step (count or length
# ratio 2) and 0.3 to 0.7 dB averaged over the five scored levels of tem, dur and cnt. The level is then drawn
# per clip, independently and uniformly over ROVE_DB = 30 dB (as psychoacoustic experiments rove level, only wider): the
# level difference of a pair is triangular over +-30 dB, so the best level rule scores about 0.5 + 0.7 / 30,
# 0.52 on average and 0.55 at the largest step, where 20 dB of roving would give 0.54 and 0.57. What stays is
# scale-free and physical: the share of the clip that sounds, and with it the crest factor.
# The background is a room's, not the sound's: white noise at an absolute level drawn per clip too (FLOOR_DBFS),
# so how far the sound stands above it is roved twice over. A floor tied to the sound carries the share that
# sounds: tied to the overall level it puts sparse events further above it (floor-to-peak answered cnt at 1.00),
# tied to the events it fills more of a sparse clip (the spectral centroid answered cnt at 0.77); one fixed
# floor is measured a little higher where less of the clip is silent (0.65 to 0.75 on dur, rad and cnt).
# Headroom: the loudest peak stays below -2 dBFS (events and short reverberant bursts peak up to 22 dB above
# their middle level, hence SPARSE_MID_DB); the quietest sounding part stays 33 dB above the loudest floor.

from __future__ import annotations

import numpy as np

from acousticbench.benchmarks.acoustic.stimuli.signal import SR, db, rms

ROVE_DB = 30.0
MID_DB = -34.0  # the centre of the rove for sustained sounds: the middle of overall and sounding level, dBFS
SPARSE_MID_DB = -39.0  # the same for clips of short events or one short burst, whose peaks stand higher
FLOOR_DBFS = (-96.0, -84.0)  # the background noise, drawn per clip; PCM16 rounding adds a constant -101 dBFS
LOUDNESS_NOISE_DB = -45.0  # loudness scales the whole clip: its floor sits this far below the sound's overall RMS
SOUNDING_DB = 20.0  # a 10 ms frame within this of the loudest frame is part of the sound
FRAME_S = 0.01


def sounding_rms(x: np.ndarray) -> float:
    """RMS over the 10 ms frames within SOUNDING_DB of the loudest one (all channels together)."""
    hop = int(round(FRAME_S * SR))
    power = np.square(np.asarray(x, dtype=np.float64))
    power = power.reshape(power.shape[0], -1).mean(axis=1)
    frames = power[: power.size // hop * hop].reshape(-1, hop).mean(axis=1)
    loud = frames >= frames.max() * 10 ** (-SOUNDING_DB / 10)
    return float(np.sqrt(frames[loud].mean()))


def mid_level_db(x: np.ndarray) -> float:
    """The middle (in dB) of the overall level and the level of the sounding part."""
    return 0.5 * (db(rms(x)) + db(sounding_rms(x)))


def with_noise_floor(x: np.ndarray, rng: np.random.Generator, noise_rms: float) -> np.ndarray:
    """Add white noise of RMS `noise_rms`; stereo gets the same (diotic) noise in both channels."""
    noise = rng.standard_normal(x.shape[0])
    noise *= noise_rms / rms(noise)
    return x + (noise[:, None] if x.ndim == 2 else noise)


def finish(x: np.ndarray, rng: np.random.Generator, mid_db: float = MID_DB) -> np.ndarray:
    """The last step of every generator but loudness: a level roved for this clip alone, then the background."""
    level, floor = mid_db + rng.uniform(-ROVE_DB / 2, ROVE_DB / 2), rng.uniform(*FLOOR_DBFS)
    return with_noise_floor(x * 10 ** ((level - mid_level_db(x)) / 20), rng, 10 ** (floor / 20))


def finish_at_rms(x: np.ndarray, rng: np.random.Generator, target_rms: float) -> np.ndarray:
    """Loudness: noise floor, then an exact overall RMS, since level is what the question asks about."""
    noisy = with_noise_floor(x, rng, rms(x) * 10 ** (LOUDNESS_NOISE_DB / 20))
    return noisy * (target_rms / rms(noisy))
