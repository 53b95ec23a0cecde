"""Rival cues of the open pack: for each task, the obvious cues other than its attribute (a listener who hears "busier"
instead of "more", "louder" instead of "longer"), measured from the audio, and how often each agrees with the key."""
# A cue agrees with the key on a two-clip question when the first clip has more of it and the answer is A (or less
# and B); equal values count one half. dir's one stereo clip has no second clip: its cue agrees when it lies above
# the train questions' median and the sound is on the left. Near 0.5 on every level: the cue tells nothing.

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from acousticbench.benchmarks.acoustic.pack import load_questions
from acousticbench.benchmarks.acoustic.records import Question
from acousticbench.benchmarks.acoustic.stimuli import ATTRIBUTES
from acousticbench.benchmarks.acoustic.stimuli.signal import db, envelope_db, mono, rms, sounding
from acousticbench.core.audio import SAMPLE_RATE, read_audio

ON_DB, OFF_DB, SOUNDING_DB = 15.0, 30.0, 20.0  # an event starts above peak-15 dB after a fall below peak-30 dB
ENVELOPE_S = 0.01
STEP = 40  # the envelope is read every 2.5 ms
# Each task's rivals, and why a listener might answer with them instead of the attribute.
RIVALS: dict[str, dict[str, str]] = {
    "pit": {"rms_db": "louder", "span_s": "longer", "centroid_hz": "brighter", "onset_s": "later"},
    "lou": {"span_s": "longer", "centroid_hz": "brighter", "crest_db": "peakier", "onset_s": "later"},
    "dur": {"rms_db": "louder overall", "sounding_db": "louder while it sounds", "centroid_hz": "brighter",
            "onset_s": "later"},
    "tem": {"count": "more events", "event_s": "longer events", "gap_s": "longer silences", "span_s": "longer train",
            "sounding_s": "more sound", "duty": "denser sound", "rms_db": "louder"},
    "rad": {"span_s": "longer", "envelope_sd_db": "a wider spread of levels", "fluctuation_db": "a rougher envelope",
            "rms_db": "louder", "centroid_hz": "brighter", "onset_s": "later"},
    "dir": {"rms_db": "louder", "centroid_hz": "brighter", "span_s": "longer", "onset_s": "later"},
    "cnt": {"rate_hz": "busier (events per second of span)", "gap_s": "longer gaps", "span_s": "longer",
            "event_s": "longer events", "sounding_s": "more sound", "rms_db": "louder"},
    "bri": {"rms_db": "louder", "span_s": "longer", "onset_s": "later", "crest_db": "peakier"},
}


def events(x: np.ndarray) -> list[tuple[float, float]]:
    """(start, end) in seconds of each event: onsets with a level hysteresis, each ending where it falls SOUNDING_DB
    below the loudest moment."""
    env = envelope_db(x, ENVELOPE_S)[::STEP]
    peak, rate = env.max(), SAMPLE_RATE / STEP
    above, below, loud = env >= peak - ON_DB, env <= peak - OFF_DB, env >= peak - SOUNDING_DB
    found, armed, start = [], True, None
    for i in np.flatnonzero(above | below | ~loud):
        if above[i] and armed and start is None:
            start, armed = i, False
        elif not loud[i] and start is not None:
            found.append((start / rate, i / rate))
            start = None
        if below[i]:
            armed = True
    if start is not None:
        found.append((start / rate, env.size / rate))
    return found


def clip_cues(clip: np.ndarray) -> dict[str, float]:
    """Every rival cue of one clip (a stereo clip is measured on the mean of its channels)."""
    x = mono(clip)
    found = events(x)
    starts, ends = np.array([s for s, _ in found]), np.array([e for _, e in found])
    first, last = sounding(x)
    span = float(ends[-1] - starts[0])
    power = np.abs(np.fft.rfft(x)) ** 2
    env = envelope_db(x, ENVELOPE_S)[::STEP]
    loud = env >= env.max() - SOUNDING_DB
    return {
        "rms_db": db(rms(x)),
        "sounding_db": float(10 * np.log10(np.mean(np.square(x[first : last + 1])) + 1e-20)),
        "crest_db": db(float(np.abs(x).max())) - db(rms(x)),
        "centroid_hz": float(np.sum(np.fft.rfftfreq(x.size, 1 / SAMPLE_RATE) * power) / np.sum(power)),
        "onset_s": first / SAMPLE_RATE,
        "span_s": (last - first) / SAMPLE_RATE,
        "count": float(len(found)),
        "rate_hz": len(found) / span if span > 0 else 0.0,
        "gap_s": float(np.mean(starts[1:] - ends[:-1])) if len(found) > 1 else 0.0,
        "event_s": float(np.mean(ends - starts)),
        "sounding_s": float(np.sum(ends - starts)),
        "duty": float(np.sum(ends - starts)) / span if span > 0 else 0.0,
        "envelope_sd_db": float(np.std(env[loud])),
        "fluctuation_db": float(np.mean(np.abs(np.diff(env)[loud[1:] & loud[:-1]]))),  # step to step, 2.5 ms apart
    }


@dataclass(frozen=True)
class Row:
    """One scored question: its level, split, source kind and key, and each cue's first-minus-second (dir: value)."""

    level: int
    split: str
    source: str
    first: bool  # the answer is A
    cues: dict[str, float]


def question_row(task: str, q: Question, root: Path) -> Row:
    clips = [read_audio(root / rel, sr=SAMPLE_RATE)[0] for rel in q.audio]
    cues = [clip_cues(clip) for clip in clips]
    attribute = ATTRIBUTES[task]
    measured = [attribute.measure(clip, SAMPLE_RATE) for clip in clips]
    names = [*RIVALS[task], "measure"]
    values = [{**c, "measure": m} for c, m in zip(cues, measured)]
    difference = {n: values[0][n] - (values[1][n] if len(values) == 2 else 0.0) for n in names}
    shared = q.meta.get("shared") or {}
    source = shared.get("source") or shared.get("event") or "tone"
    return Row(int(q.meta["level"]), q.split, str(source), q.answer == "A", difference)


def task_rows(root: Path, task: str) -> list[Row]:
    return [question_row(task, q, root) for q in load_questions(root, task) if q.kind == "scored"]


def agreement(rows: list[Row], cue: str, threshold: float = 0.0) -> float:
    """Share of `rows` whose cue points to the key (above `threshold` and A, or below and B); ties count one half."""
    if not rows:
        return float("nan")
    hits = [0.5 if r.cues[cue] == threshold else float((r.cues[cue] > threshold) == r.first) for r in rows]
    return float(np.mean(hits))


def threshold_of(task: str, rows: list[Row], cue: str) -> float:
    """0 for a two-clip task (first minus second); dir: the median of its train questions."""
    if task != "dir":
        return 0.0
    return float(np.median([r.cues[cue] for r in rows if r.split == "train"]))


def agreements(task: str, rows: list[Row], cues: list[str], split: str | None = "eval") -> dict[str, list[float]]:
    """Per cue: its agreement on `split` (None: both), overall first, then on levels 1..5."""
    chosen = [r for r in rows if split is None or r.split == split]
    table = {}
    for cue in cues:
        cut = threshold_of(task, rows, cue)
        table[cue] = [agreement(chosen, cue, cut)] + [agreement([r for r in chosen if r.level == lv], cue, cut)
                                                      for lv in range(1, 6)]
    return table
