"""The learned shortcut test: a random forest over every generic feature that is not the task's attribute,
fitted on train, scored on eval, with the features the fit leans on ranked by permutation importance."""
# Trees find what one threshold or a linear fit cannot: a rate from a count and a span, a cue that answers on one
# source kind only. Training rows are doubled with their swapped twin (every "d:" column negated, the answer flipped),
# so the fit cannot lean on which clip comes first. Permutation importance shuffles a feature's "d:" and "m:" columns
# together on eval and reports the mean drop in eval accuracy over REPEATS shuffles. Seeded: the same table gives the
# same figures. A forest rather than boosting: one thread, so its fit costs the same on a busy machine (boosting's
# OpenMP threads took minutes on two shared cores). scikit-learn is the `audit` extra, imported here only.

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from acousticbench.benchmarks.acoustic.shortcuts.audit import accuracy, fit_threshold
from acousticbench.benchmarks.acoustic.shortcuts.learned_rows import Table
from acousticbench.core.errors import UserError

SEED = 35
TREES = 300
CANDIDATES = 15  # permutation importance is measured for the features the forest splits on most
REPEATS = 5
TOP = 5
INSTALL = 'pip install -e ".[audit]"'


@dataclass(frozen=True)
class Lone:
    """How well one generic feature alone (clip 1 minus clip 2) answers a task on eval, by the better of two rules."""

    feature: str
    accuracy: float
    why: str | None  # why the learner leaves it out (the attribute, or the attribute with another feature), or None


@dataclass(frozen=True)
class LearnedAudit:
    """How well the non-attribute generic features answer one task on eval, alone and together, and which carry it."""

    task: str
    accuracy: float  # eval accuracy of the forest fitted on train
    n_eval: int  # eval questions
    n_features: int  # generic features the learner saw (each as its "d:" and "m:" column)
    importance: tuple[tuple[str, float], ...]  # (feature, mean drop in eval accuracy when shuffled), largest first
    lone: tuple[Lone, ...]  # every feature alone but the attribute's own, best first

    @property
    def best_lone(self) -> Lone:
        return self.lone[0] if self.lone else Lone("-", 0.5, None)

    def passes(self, bound: float) -> bool:
        """Neither the forest nor any lone feature scores above `bound`."""
        return self.accuracy <= bound and self.best_lone.accuracy <= bound


def base(column: str) -> str:
    """The generic feature a "d:" or "m:" column is of."""
    return column.split(":", 1)[1]


def declared_reason(column: str, declared: dict[str, str]) -> str | None:
    """Why `column` is one of the attribute's own features: a pattern matches the column ("d:level.*") or its feature
    ("event.count", "mfcc.*"); None when none does."""
    for pattern, why in declared.items():
        if fnmatch.fnmatchcase(column, pattern) or fnmatch.fnmatchcase(base(column), pattern):
            return why
    return None


def classifier():
    """The learner, a fresh unfitted one; a UserError naming the install when scikit-learn is missing."""
    try:
        from sklearn.ensemble import RandomForestClassifier
    except ImportError:
        raise UserError(f"the learned audit needs scikit-learn: {INSTALL} (or run `python bench/shortcut_audit.py "
                        "--no-learner` for the cheap cues alone)") from None
    return RandomForestClassifier(n_estimators=TREES, min_samples_leaf=2, max_features=0.3, random_state=SEED, n_jobs=1)


def with_swaps(x: np.ndarray, is_a: np.ndarray, columns: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The rows and their swapped twins: clip 2 first (or the ears mirrored) negates "d:" and flips the answer."""
    flip = np.array([-1.0 if c.startswith("d:") else 1.0 for c in columns])
    return np.vstack([x, x * flip]), np.concatenate([is_a, ~is_a])


def importance(model, x: np.ndarray, is_a: np.ndarray, columns: list[str]) -> list[tuple[str, float]]:
    """Per feature, the mean drop in accuracy when its columns are shuffled together over the rows, largest first."""
    rng = np.random.default_rng(SEED)
    baseline = float(np.mean(model.predict(x) == is_a))
    groups: dict[str, list[int]] = {}
    for j, column in enumerate(columns):
        groups.setdefault(base(column), []).append(j)
    impurity = {name: sum(model.feature_importances_[j] for j in js) for name, js in groups.items()}
    groups = {name: groups[name] for name in sorted(groups, key=lambda n: (-impurity[n], n))[:CANDIDATES]}
    drops = []
    for name, js in groups.items():
        total = 0.0
        for _ in range(REPEATS):
            shuffled = x.copy()
            shuffled[:, js] = x[rng.permutation(len(x))][:, js]
            total += baseline - float(np.mean(model.predict(shuffled) == is_a))
        drops.append((name, total / REPEATS))
    return sorted(drops, key=lambda d: (-d[1], d[0]))


def lone_rules(table: Table, attribute: dict[str, str], joint: dict[str, str]) -> list[Lone]:
    """Every "d:" column but the attribute's own alone: the better of the best threshold and the better sign, both
    chosen on train and scored on eval (shortcuts/audit.py's rules), best first."""
    train_a, eval_a = table.is_a[table.train], table.is_a[~table.train]
    found = []
    for j, column in enumerate(table.columns):
        if not column.startswith("d:") or declared_reason(column, attribute):
            continue
        train, evaluation = table.x[table.train, j], table.x[~table.train, j]
        threshold, polarity = fit_threshold(train, train_a)
        sign = 1 if accuracy(train, train_a, 0.0, 1) >= 0.5 else -1
        best = max(accuracy(evaluation, eval_a, threshold, polarity), accuracy(evaluation, eval_a, 0.0, sign))
        found.append(Lone(base(column), best, declared_reason(column, joint)))
    return sorted(found, key=lambda f: (-f.accuracy, f.feature))


def learned_audit(task: str, table: Table, attribute: dict[str, str], joint: dict[str, str]) -> LearnedAudit:
    """Every feature but the attribute's own alone, then the forest on train's rows of every column neither the
    attribute's own nor the attribute together with another (`joint`), scored on eval."""
    left_out = attribute | joint
    keep = [j for j, c in enumerate(table.columns) if declared_reason(c, left_out) is None]
    columns = [table.columns[j] for j in keep]
    train, evaluation = table.x[table.train][:, keep], table.x[~table.train][:, keep]
    eval_a = table.is_a[~table.train]
    lone = tuple(lone_rules(table, attribute, joint)) if len(train) and len(evaluation) else ()
    if not columns or not len(train) or not len(evaluation):
        return LearnedAudit(task, 0.5, len(evaluation), 0, (), lone)
    model = classifier().fit(*with_swaps(train, table.is_a[table.train], columns))
    score = float(np.mean(model.predict(evaluation) == eval_a))
    ranked = importance(model, evaluation, eval_a, columns)
    return LearnedAudit(task, score, len(evaluation), len({base(c) for c in columns}), tuple(ranked[:TOP]), lone)


def learned_offenders(audits: list[LearnedAudit], bound: float) -> list[str]:
    """One line per feature alone, and per learner, above `bound`: the learner's names the features it leans on."""
    lines = []
    for a in audits:
        if a.best_lone.accuracy > bound:
            lines.append(f"SHORTCUT {a.task}: the generic feature {a.best_lone.feature} alone scores "
                         f"{a.best_lone.accuracy:.3f} on eval (bound {bound:.2f})")
        if a.accuracy > bound:
            lines.append(f"SHORTCUT {a.task}: the learner over non-attribute features scores {a.accuracy:.3f} on eval "
                         f"(bound {bound:.2f}), leaning most on " + ", ".join(n for n, _ in a.importance[:3]))
    return lines


def learned_summary(audits: list[LearnedAudit]) -> str:
    """Per task: the best generic feature alone, the learner's eval accuracy and its top features by importance."""
    lines = [f"{'task':<5} {'best single generic feature':<28} {'eval':>6} {'forest':>6}  top features by permutation "
             "importance (eval accuracy lost when shuffled)"]
    for a in audits:
        top = ", ".join(f"{name} {drop:+.3f}" for name, drop in a.importance) or "-"
        lines.append(f"{a.task:<5} {a.best_lone.feature:<28} {a.best_lone.accuracy:>6.3f} {a.accuracy:>6.3f}  {top}")
    lines.append(f"eval accuracy; forest = a random forest ({TREES} trees) over every generic feature that is neither the "
                 "attribute nor the attribute with another one (clip 1 minus clip 2 and their mean), fitted on train")
    return "\n".join(lines)


def declared_lines(task: str, attribute: dict[str, str], joint: dict[str, str]) -> list[str]:
    """The task's declared features, each pattern with why: the attribute's own, and those held to the bound alone."""
    own = [f"    attribute: {pattern} ({why})" for pattern, why in attribute.items()]
    return [f"  {task}:", *own, *(f"    alone only: {pattern} ({why})" for pattern, why in joint.items())]


def learned_pack(root: Path, tasks: list[str], workers: int) -> list[LearnedAudit]:
    """The learned audit of every task of `tasks` in the pack at `root`, with each task's declarations."""
    from acousticbench.benchmarks.acoustic.shortcuts.learned_measures import ALONE_ONLY, ATTRIBUTE_FEATURES
    from acousticbench.benchmarks.acoustic.shortcuts.learned_rows import task_tables

    classifier()  # the install hint before minutes of features
    tables = task_tables(root, tasks, workers)
    return [learned_audit(task, table, ATTRIBUTE_FEATURES.get(task, {}), ALONE_ONLY.get(task, {}))
            for task, table in zip(tasks, tables)]
