"""The shortcut audit of a pack: every cheap cue alone, and all of a task's non-attribute cues together, fitted on train
and scored on eval."""
# A pair question's row is clip 1 minus clip 2 of every cue of shortcuts/features.py (its level pairs included); the
# one stereo clip of `dir` gives left minus right. Alone: two rules per cue, both fitted on train only, the best
# threshold on that difference (either polarity) and "A when the first clip's (left channel's) cue is larger" with its
# direction chosen on train. Together: a regularised logistic regression over every cue that is not one of the
# attribute's own measures (shortcuts/measures.py, printed with their figures as confounds), shortcuts/joint.py.

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from acousticbench.benchmarks.acoustic.pack import load_manifest, load_questions
from acousticbench.core.audio import read_audio
from acousticbench.benchmarks.acoustic.shortcuts.features import FEATURES, PAIRS, clip_features
from acousticbench.benchmarks.acoustic.shortcuts.joint import joint_accuracy
from acousticbench.benchmarks.acoustic.shortcuts.measures import ATTRIBUTE_MEASURES
from acousticbench.benchmarks.acoustic.tasks import TASKS

BOUND = 0.60  # the most any non-attribute cue, alone or jointly, may score on eval (chance 0.5; n = 200 per task)
COLUMNS = (*FEATURES, *PAIRS)
Rows = tuple[np.ndarray, np.ndarray]  # (one row of COLUMNS per question, is the answer A)


@dataclass(frozen=True)
class Finding:
    """How well one cue alone answers one task on eval."""

    task: str
    feature: str
    threshold_accuracy: float  # the best threshold on train, scored on eval
    sign_accuracy: float  # "A when clip 1's cue is larger" (or smaller, as train says), scored on eval
    measure: str | None  # why the cue is one of the attribute's own measures, or None

    @property
    def accuracy(self) -> float:
        return max(self.threshold_accuracy, self.sign_accuracy)


@dataclass(frozen=True)
class TaskAudit:
    """Every cue of one task alone, and the non-attribute cues together."""

    task: str
    findings: tuple[Finding, ...]
    joint: float  # eval accuracy of the logistic fit over every non-attribute cue
    penalty: float  # its L2 penalty, chosen on train

    @property
    def best(self) -> Finding:
        """The non-attribute cue that scores highest alone."""
        return max((f for f in self.findings if f.measure is None), key=lambda f: f.accuracy)

    def passes(self) -> bool:
        """No cue beside the attribute scores above BOUND, alone or jointly."""
        return self.best.accuracy <= BOUND and self.joint <= BOUND


def question_row(clips: list[np.ndarray], sr: int) -> np.ndarray:
    """COLUMNS of clip 1 minus clip 2, or of the left channel minus the right for one stereo clip."""
    per_channel = [row for clip in clips for row in clip_features(clip, sr)]
    first, second = per_channel[0], per_channel[1]
    return np.array([first[name] - second[name] for name in COLUMNS])


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


def audit_task(task: str, train: Rows, evaluation: Rows) -> TaskAudit:
    """Every cue alone, then the non-attribute ones jointly, from the (rows, is_a) of the train and eval halves."""
    (train_x, train_y), (eval_x, eval_y) = train, evaluation
    measures = ATTRIBUTE_MEASURES.get(task, {})
    findings = []
    for j, name in enumerate(COLUMNS):
        threshold, polarity = fit_threshold(train_x[:, j], train_y)
        sign = 1 if accuracy(train_x[:, j], train_y, 0.0, 1) >= 0.5 else -1
        findings.append(Finding(task, name, accuracy(eval_x[:, j], eval_y, threshold, polarity),
                                accuracy(eval_x[:, j], eval_y, 0.0, sign), measures.get(name)))
    free = [j for j, name in enumerate(COLUMNS) if name not in measures]
    joint, penalty = joint_accuracy((train_x[:, free], train_y), (eval_x[:, free], eval_y))
    return TaskAudit(task, tuple(findings), joint, penalty)


def audit(tasks: Iterable[str], rows_of: Callable[[str], dict[str, Rows]]) -> list[TaskAudit]:
    """An audit per task; `rows_of(task)` gives split -> (rows, is_a) of its scored questions."""
    audits = []
    for task in tasks:
        splits = rows_of(task)
        audits.append(audit_task(task, splits["train"], splits["eval"]))
    return audits


def pack_rows(root: Path, task: str) -> dict[str, Rows]:
    """split -> (rows, is_a) of the scored questions of a task in the pack at `root`: its questions file read once."""
    rows: dict[str, list] = {"train": [], "eval": []}
    is_a: dict[str, list[bool]] = {"train": [], "eval": []}
    for question in load_questions(root, task):
        if question.kind == "scored" and question.split in rows:
            clips = [read_audio(root / rel) for rel in question.audio]
            rows[question.split].append(question_row([samples for samples, _ in clips], clips[0][1]))
            is_a[question.split].append(question.answer == "A")
    return {split: (np.array(rows[split]).reshape(-1, len(COLUMNS)), np.array(is_a[split])) for split in rows}


def audit_pack(root: Path, tasks: Iterable[str] | None = None) -> list[TaskAudit]:
    """An audit per task of `tasks` (default: every task of the pack) of the pack at `root`."""
    tasks = list(tasks or [task for task in TASKS if task in load_manifest(root)["tasks"]])
    return audit(tasks, lambda task: pack_rows(root, task))


def offenders(audits: list[TaskAudit]) -> list[str]:
    """One line per task whose best lone cue or joint fit scores above BOUND: each is a shortcut."""
    lines = []
    for a in audits:
        if a.best.accuracy > BOUND:
            lines.append(f"SHORTCUT {a.task}: {a.best.feature} alone scores {a.best.accuracy:.3f} on eval (bound {BOUND:.2f})")
        if a.joint > BOUND:
            lines.append(f"SHORTCUT {a.task}: the non-attribute cues together score {a.joint:.3f} on eval (bound {BOUND:.2f})")
    return lines


def summary(audits: list[TaskAudit]) -> str:
    """Per task: the best non-attribute cue alone and the joint fit, both on eval."""
    lines = [f"{'task':<5} {'best single non-attribute cue':<34} {'eval':>6} {'joint':>6}"]
    for a in audits:
        lines.append(f"{a.task:<5} {a.best.feature:<34} {a.best.accuracy:>6.3f} {a.joint:>6.3f}")
    lines.append(f"eval accuracy; joint = L2 logistic regression over every non-attribute cue (penalty chosen on train); "
                 f"bound {BOUND:.2f}")
    return "\n".join(lines)


def table(audits: list[TaskAudit]) -> str:
    """Cues down, tasks across: eval accuracy of the better rule; "M" marks one of the attribute's own measures."""
    cell = {(a.task, f.feature): f for a in audits for f in a.findings}
    tasks = [a.task for a in audits]
    width = max(len(c) for c in COLUMNS) + 1
    lines = [f"{'cue':<{width}}" + "".join(f"{t:>8}" for t in tasks)]
    for name in COLUMNS:
        marks = (f"{cell[t, name].accuracy:.3f}" + ("M" if cell[t, name].measure else " ") for t in tasks)
        lines.append(f"{name:<{width}}" + "".join(f"{m:>8}" for m in marks))
    lines.append("eval accuracy of the better of two one-cue rules fitted on train; M = the attribute's own measure")
    return "\n".join(lines)


def measure_lines(audits: list[TaskAudit]) -> list[str]:
    """Per task: its attribute's own measures, grouped by why, each with its eval figure (a confound, not hidden)."""
    lines = []
    for a in audits:
        reasons: dict[str, list[str]] = {}
        for f in a.findings:
            if f.measure:
                reasons.setdefault(f.measure, []).append(f"{f.feature} {f.accuracy:.2f}")
        lines.append(f"  {a.task}: " + "; ".join(f"{', '.join(names)} ({why})" for why, names in reasons.items()))
    return lines
