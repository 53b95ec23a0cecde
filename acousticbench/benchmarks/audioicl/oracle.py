"""The AudioICL Oracle: solves an episode from its audio and labelled demos alone, inducing the rule from the demos."""
from __future__ import annotations

import statistics
from functools import lru_cache

import numpy as np

from acousticbench.benchmarks.audioicl import listen, oracle_symbols
from acousticbench.benchmarks.audioicl.oracle_episode import Episode, int_label, read_episode
from acousticbench.core.errors import BackendError
from acousticbench.core.records import Prompt


def solve(prompt: Prompt) -> str:
    """The Oracle's answer to an AudioICL prompt."""
    episode = read_episode(prompt)
    solvers = {"AudioCount": count, "AudioCountHard": count, "AudioLength": length, "AudioLengthHard": length,
               "AudioRemap": remap, "AnomalyDetect": anomaly, "AudioOperator": oracle_symbols.operator,
               "AudioOperatorHard": oracle_symbols.operator, "MorseCode": oracle_symbols.morse}
    return solvers[prompt.task](episode)


# (curve, on, off): ways the Oracle may count events; the demos pick one
_COUNTERS = (("onset", 0.25, 0.1), ("onset", 0.3, 0.1), ("onset", 0.2, 0.08), ("onset", 0.35, 0.15),
             ("onset", 0.5, 0.25), ("level", 0.5, 0.25), ("level", 0.4, 0.2))


@lru_cache(maxsize=4096)
def _counts(path: str) -> tuple[int, ...]:
    x = listen.load(path)
    curves = {"onset": listen.onset_curve(x), "level": listen.level_curve(x)}
    return tuple(listen.count_rises(curves[c], on, off) for c, on, off in _COUNTERS)


def count(episode: Episode) -> str:
    """Count the events with the level thresholds that reproduce the most demo labels."""
    fits = [sum(_counts(d.path)[i] == int_label(d) for d in episode.demos) for i in range(len(_COUNTERS))]
    best = max(range(len(_COUNTERS)), key=lambda i: (fits[i], -i))
    return str(_counts(episode.query.path)[best])


@lru_cache(maxsize=4096)
def _durations(path: str) -> tuple[float, float]:
    """(seconds with sound, seconds in all)."""
    x = listen.load(path)
    return listen.sounding_seconds(x), x.size / listen.SR


def length(episode: Episode) -> str:
    """Which duration (with sound, or in all) the labels follow and in what unit, fitted on the demos."""
    best: tuple | None = None
    for measure in (0, 1):  # sound first: when both fit (one demo, no silence), it is the simpler reading
        pairs = [(_durations(d.path)[measure], int_label(d)) for d in episode.demos]
        pairs = [(m, label) for m, label in pairs if label]
        unit = statistics.median(m / label for m, label in pairs) if pairs else 1.0
        fit = sum(round(m / unit) == label for m, label in pairs)
        key = (fit, -measure)
        if best is None or key > best[0]:
            best = (key, measure, unit)
    _, measure, unit = best
    return str(round(_durations(episode.query.path)[measure] / unit))


@lru_cache(maxsize=4096)
def _parts(path: str) -> tuple[np.ndarray, ...]:
    x = listen.load(path)
    for gap, floor in ((0.04, 35.0), (0.04, 25.0), (0.04, 45.0), (0.02, 35.0)):
        found = listen.segments(x, gap, floor)
        if len(found) == 3:
            return tuple(x[a:b] for a, b in found)
    third = x.size // 3  # no clear gaps: three equal parts
    return tuple(x[i * third : (i + 1) * third] for i in range(3))


def remap(episode: Episode) -> str:
    """Match each part of the query's MIX to sound A or B and spell it with their letters."""
    query = episode.query
    refs = {role: listen.load(path) for role, path in query.clips.items() if role in ("A", "B")}
    if set(refs) != {"A", "B"} or "MIX" not in query.clips:
        raise BackendError("the Oracle needs the A, B and MIX clips of an AudioRemap query.", retryable=False)
    letters = []
    for part in _parts(query.clips["MIX"]):
        role = max(("A", "B"), key=lambda r: listen.likeness(part, refs[r]))
        letters.append(query.labels.get(role) or role)
    return "".join(letters).upper()


@lru_cache(maxsize=4096)
def _features(path: str) -> np.ndarray:
    x = listen.load(path)
    return np.concatenate([listen.band_levels(x), listen.modulation(x)])


def anomaly(episode: Episode) -> str:
    """Nearest class centre in band levels and modulation, each feature scaled by its spread within a class."""
    groups: dict[str, list[np.ndarray]] = {"Normal": [], "Anomalous": []}
    for demo in episode.demos:
        for role, path in demo.clips.items():
            label = (demo.labels.get(role) or role).capitalize()
            if label in groups:
                groups[label].append(_features(path))
    if not groups["Normal"] or not groups["Anomalous"]:
        raise BackendError("the Oracle needs a Normal and an Anomalous demo clip.", retryable=False)
    centres = {k: np.mean(v, axis=0) for k, v in groups.items()}
    spread = [np.std(v, axis=0) for v in groups.values() if len(v) > 1]
    scale = np.maximum(np.mean(spread, axis=0) if spread else 0.0, 1.0)  # 1 dB: no feature counts for more than that
    query = _features(episode.query.path)
    return min(centres, key=lambda k: float(np.sum(((query - centres[k]) / scale) ** 2)))
