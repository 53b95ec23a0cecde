"""Numpy signal generators of the open AcousticBench pack: one module per attribute, each with the measurement the Oracle uses."""
from __future__ import annotations

from types import ModuleType

from acousticbench.benchmarks.acoustic.stimuli import brightness, counting, direction, duration, loudness, pitch, reverberation, tempo
from acousticbench.benchmarks.acoustic.stimuli.trial import Answer, Attribute, Trial

ATTRIBUTES: dict[str, ModuleType] = {
    "pit": pitch,
    "lou": loudness,
    "dur": duration,
    "tem": tempo,
    "rad": reverberation,
    "dir": direction,
    "cnt": counting,
    "bri": brightness,
}

__all__ = ["ATTRIBUTES", "Answer", "Attribute", "Trial"]
