"""The shortcut audit of a pack: every cheap feature as a one-feature rule, fitted on train and scored on eval, per task."""
# A pair question's feature is clip 1 minus clip 2; the one stereo clip of `dir` gives left minus right.
# Two rules per feature, both fitted on train only: the best threshold on that difference (either polarity),
# and "A when the first clip's (left channel's) feature is larger" with its direction chosen on train.
# A clip's own value is not scored apart: by the pair's symmetry it shifts half as much as the difference, under
# more spread. A feature that follows physically from the attribute is listed in PHYSICAL and exempt from the bound.

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from acousticbench.benchmarks.acoustic.pack import load_manifest, load_questions
from acousticbench.audio import read_audio
from acousticbench.benchmarks.acoustic.shortcuts.features import FEATURES, LEVEL, clip_features
from acousticbench.benchmarks.acoustic.tasks import TASKS

BOUND = 0.60  # the most any non-physical feature may score on eval (chance 0.5; n = 200 eval questions per task)
DUTY = "a sound that fills more of the clip (longer, more events, a longer tail) leaves less silence and is less peaky"
PARTIALS = "the partials move with f0"
ILD = "the interaural level difference is the attribute"
NEARER_EAR = "the nearer ear holds more sound over the same diotic background"
PHYSICAL: dict[str, dict[str, str]] = {
    "pit": {"zcr_hz": PARTIALS, "rolloff_hz": f"the rolloff lands on a partial, and {PARTIALS}",
            "crest_db": "a higher f0 puts fewer partials under the same envelope: a less peaky sum"},
    "lou": {**{name: "level is the attribute" for name in LEVEL}, "floor_db": "the whole clip, noise floor included, is louder"},
    "dur": {"offset_s": "a longer sound ends later", "span_s": "a longer sound sounds longer",
            "silent_fraction": DUTY, "crest_db": DUTY},
    "tem": {"silent_fraction": DUTY, "crest_db": DUTY, "offset_s": "the last beat of a faster train falls nearer the end",
            "span_s": "the last beat of a faster train falls nearer the end"},
    "rad": {"offset_s": "a longer tail ends later", "span_s": "a longer tail lengthens the sounding span",
            "silent_fraction": DUTY, "crest_db": DUTY},
    "dir": {**{name: ILD for name in (*LEVEL, "floor_to_peak_db")}, "crest_db": NEARER_EAR, "centroid_hz": NEARER_EAR,
            "onset_s": "the interaural time difference is the attribute", "offset_s": "the interaural time difference is the attribute"},
    "cnt": {"silent_fraction": DUTY, "crest_db": DUTY},
    "bri": {"centroid_hz": "brightness is the spectral centroid", "rolloff_hz": "a brighter tilt moves the rolloff up",
            "zcr_hz": "a brighter tilt crosses zero more often", "crest_db": "a brighter tilt spreads power over more partials"},
}


@dataclass(frozen=True)
class Finding:
    """How well one feature answers one task on eval."""

    task: str
    feature: str
    threshold_accuracy: float  # the best threshold on train, scored on eval
    sign_accuracy: float  # "A when clip 1's feature is larger" (or smaller, as train says), scored on eval
    physical: str | None  # why the feature follows from the attribute, or None

    @property
    def accuracy(self) -> float:
        return max(self.threshold_accuracy, self.sign_accuracy)


def question_row(clips: list[np.ndarray], sr: int) -> np.ndarray:
    """FEATURES of clip 1 minus clip 2, or of the left channel minus the right for one stereo clip."""
    per_channel = [row for clip in clips for row in clip_features(clip, sr)]
    first, second = per_channel[0], per_channel[1]
    return np.array([first[name] - second[name] for name in FEATURES])


def fit_threshold(values: np.ndarray, is_a: np.ndarray) -> tuple[float, int]:
    """The best rule "A if polarity * (value - threshold) > 0" on these data: (threshold, polarity)."""
    order = np.argsort(values, kind="stable")
    v, y = values[order], is_a[order].astype(int)
    a_below = np.concatenate(([0], np.cumsum(y)))  # A answers among the i smallest values
    i = np.arange(v.size + 1)
    splits = np.concatenate(([True], v[1:] > v[:-1], [True]))  # a threshold cannot separate equal values
    up = (i - a_below) + (y.sum() - a_below)  # correct when predicting A above the split
    best = []
    for polarity, correct in ((1, up), (-1, v.size - up)):
        k = int(np.argmax(np.where(splits, correct, -1)))
        threshold = -np.inf if k == 0 else np.inf if k == v.size else 0.5 * (v[k - 1] + v[k])
        best.append((int(correct[k]), threshold, polarity))
    _, threshold, polarity = max(best, key=lambda b: b[0])
    return threshold, polarity


def accuracy(values: np.ndarray, is_a: np.ndarray, threshold: float, polarity: int) -> float:
    """Share answered right by "A if polarity * (value - threshold) > 0"; a value on the threshold is a coin flip."""
    right = ((polarity * (values - threshold) > 0) == is_a).astype(float)
    return float(np.mean(np.where(values == threshold, 0.5, right)))


def audit_task(task: str, train: tuple[np.ndarray, np.ndarray], evaluation: tuple[np.ndarray, np.ndarray]) -> list[Finding]:
    """One Finding per feature from (rows, is_a) of the train and eval halves."""
    (train_x, train_y), (eval_x, eval_y) = train, evaluation
    findings = []
    for j, name in enumerate(FEATURES):
        threshold, polarity = fit_threshold(train_x[:, j], train_y)
        sign = 1 if accuracy(train_x[:, j], train_y, 0.0, 1) >= 0.5 else -1
        findings.append(Finding(task, name, accuracy(eval_x[:, j], eval_y, threshold, polarity),
                                accuracy(eval_x[:, j], eval_y, 0.0, sign), PHYSICAL[task].get(name)))
    return findings


def audit(tasks: Iterable[str], rows_of: Callable[[str], dict[str, tuple[np.ndarray, np.ndarray]]]) -> list[Finding]:
    """Findings for every task; `rows_of(task)` gives split -> (feature rows, is_a) of its scored questions."""
    findings = []
    for task in tasks:
        splits = rows_of(task)
        findings += audit_task(task, splits["train"], splits["eval"])
    return findings


def pack_rows(root: Path, task: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """split -> (feature rows, is_a) of the scored questions of a task in the pack at `root`: its questions file
    read once, then split in memory."""
    rows: dict[str, list] = {"train": [], "eval": []}
    is_a: dict[str, list[bool]] = {"train": [], "eval": []}
    for question in load_questions(root, task):
        if question.kind == "scored" and question.split in rows:
            clips = [read_audio(root / rel) for rel in question.audio]
            rows[question.split].append(question_row([samples for samples, _ in clips], clips[0][1]))
            is_a[question.split].append(question.answer == "A")
    return {split: (np.array(rows[split]).reshape(-1, len(FEATURES)), np.array(is_a[split])) for split in rows}


def audit_pack(root: Path, tasks: Iterable[str] | None = None) -> list[Finding]:
    """Findings for `tasks` (default: every task of the pack) of the pack at `root`."""
    tasks = list(tasks or [task for task in TASKS if task in load_manifest(root)["tasks"]])
    return audit(tasks, lambda task: pack_rows(root, task))


def offenders(findings: list[Finding]) -> list[Finding]:
    """Non-physical features above BOUND: each one is a shortcut."""
    return [f for f in findings if f.physical is None and f.accuracy > BOUND]


def physical_lines(tasks: Iterable[str]) -> list[str]:
    """One line per task: its physical features, grouped by the reason they follow from the attribute."""
    lines = []
    for task in tasks:
        reasons: dict[str, list[str]] = {}
        for name, why in PHYSICAL[task].items():
            reasons.setdefault(why, []).append(name)
        lines.append(f"  {task}: " + "; ".join(f"{', '.join(names)} ({why})" for why, names in reasons.items()))
    return lines


def table(findings: list[Finding]) -> str:
    """Features down, tasks across: eval accuracy of the better rule; "P" marks a physical feature."""
    tasks = list(dict.fromkeys(f.task for f in findings))
    cell = {(f.task, f.feature): f for f in findings}
    lines = [f"{'feature':<18}" + "".join(f"{t:>8}" for t in tasks)]
    for name in FEATURES:
        marks = (f"{cell[t, name].accuracy:.3f}" + ("P" if cell[t, name].physical else " ") for t in tasks)
        lines.append(f"{name:<18}" + "".join(f"{m:>8}" for m in marks))
    worst = [max((f for f in findings if f.task == t and not f.physical), key=lambda f: f.accuracy) for t in tasks]
    lines.append(f"{'max non-physical':<18}" + "".join(f"{w.accuracy:>7.3f} " for w in worst))
    lines.append(f"{'  (feature)':<18}" + "".join(f"{w.feature[:7]:>8}" for w in worst))
    lines.append(f"eval accuracy of the better of two rules fitted on train; P = physical (exempt); bound {BOUND:.2f}")
    return "\n".join(lines)
