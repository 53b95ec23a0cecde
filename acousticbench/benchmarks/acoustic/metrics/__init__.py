"""Metrics: pure functions over Records (accuracy, Wilson interval, rates, diagnostics)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from acousticbench.core.stats import accuracy_stderr, cell_interval, interval_method, wilson_interval
from acousticbench.benchmarks.acoustic.records import JUDGE_FAILED, Diagnostics, Metrics, Record, SliceMetrics

MONO_LISTENER = "mono listener: chance by construction"


def listener_note(task: str, channels: int | None) -> str | None:
    """MONO_LISTENER for a one-clip stereo task (dir: B is the channel mirror of A) asked of a model that hears one
    channel, where left + right is the same for both answers; None otherwise."""
    from acousticbench.benchmarks.acoustic.tasks import TASKS

    return MONO_LISTENER if task in TASKS and TASKS[task].clips == 1 and channels == 1 else None


def _rate(count: int, n: int) -> float | None:
    return count / n if n else None


def slice_metrics(records: list[Record]) -> SliceMetrics:
    n = len(records)
    correct = sum(1 for r in records if r.correct)
    statuses = Counter(r.status for r in records)
    answered, errors = statuses["answered"], statuses["error"]
    return SliceMetrics(
        n=n,
        correct=correct,
        accuracy=_rate(correct, n),
        accuracy_answered=_rate(correct, answered),
        accuracy_without_errors=_rate(correct, n - errors),
        wilson95=wilson_interval(correct, n),
        ci95=cell_interval(correct, n),
        ci95_method=interval_method(n) if n else None,
        acc_stderr=accuracy_stderr((r.id, float(bool(r.correct))) for r in records),
        answered=answered,
        truncated=statuses["truncated"],
        errors=errors,
        parse_failure_rate=_rate(statuses["unparsed"], n),
        refusal_rate=_rate(statuses["refused"], n),
        truncation_rate=_rate(statuses["truncated"], n),
        error_rate=_rate(errors, n),
    )


def _grouped(records: Iterable[Record], key) -> dict[str, SliceMetrics]:
    groups: dict[str, list[Record]] = {}
    for r in records:
        groups.setdefault(str(key(r)), []).append(r)
    return {k: slice_metrics(v) for k, v in sorted(groups.items())}


def diagnostics(records: list[Record]) -> Diagnostics:
    by_probe: dict[str, list[Record]] = {}
    for r in records:
        by_probe.setdefault(r.meta.get("probe") or "", []).append(r)
    catch = by_probe.get("catch", [])
    identical = [r for r in by_probe.get("identical", []) if r.chosen is not None]
    chosen_by_id = {r.id: r.chosen for r in records}
    # a twin is consistent when its label flipped with the clip order (both must be answered)
    pairs = [
        (chosen_by_id[r.meta["twin_of"]], r.chosen)
        for r in by_probe.get("swap", [])
        if r.meta.get("twin_of") in chosen_by_id
    ]
    answered_pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
    wrong = position_errors(records, by_probe.get("swap", []))
    return Diagnostics(
        n_catch=len(catch),
        catch_accuracy=_rate(sum(1 for r in catch if r.correct), len(catch)),
        n_identical=len(by_probe.get("identical", [])),
        identical_p_a=_rate(sum(1 for r in identical if r.chosen == "A"), len(identical)),
        n_swap_pairs=len(pairs),
        swap_consistency=_rate(sum(1 for a, b in answered_pairs if a != b), len(answered_pairs)),
        n_position_wrong=len(wrong),
        position_p_a=_rate(sum(1 for r in wrong if r.chosen == "A"), len(wrong)),
    )


def position_errors(records: list[Record], twins: list[Record]) -> list[Record]:
    """The wrong answers that named an option on the order-swapped pairs (each twin and its original: one keyed A,
    one B). A listener that hears the difference with chance k and otherwise says A with chance b is wrong on an
    A-keyed question with (1 - k)(1 - b) and on its B-keyed twin with (1 - k) b, so the share of A among its wrong
    answers is b whatever k is: bias, not ability."""
    by_id = {r.id: r for r in records}
    pairs = [(by_id[t.meta["twin_of"]], t) for t in twins if t.meta.get("twin_of") in by_id]
    return [r for pair in pairs for r in pair if r.chosen is not None and r.correct is False]


def compute_metrics(records: list[Record], model: str, task: str, seed: int) -> Metrics:
    scored = [r for r in records if r.kind == "scored"]
    by_level = _grouped(scored, lambda r: r.meta.get("level"))
    return Metrics(
        model=model,
        task=task,
        seed=seed,
        scored=slice_metrics(scored),
        by_split=_grouped(scored, lambda r: r.split),
        by_level=by_level,
        diagnostics=diagnostics(records),
        judge_methods=dict(sorted(Counter(r.judge.method for r in records).items())),
        statuses=dict(sorted(Counter(r.status for r in records).items())),
        error_causes=dict(sorted(Counter(error_cause(r) for r in records if r.status == "error").items())),
        psychometric=_fit(level_counts(by_level), [r.meta for r in scored]),
    )


def level_counts(*by_levels: Mapping[str, SliceMetrics]) -> dict[int, tuple[int, int]]:
    """level -> (scored questions, correct), summed over `by_level` tables (Metrics.by_level), easiest first; the
    'None' slice (questions without a level) is left out."""
    counts: dict[int, tuple[int, int]] = {}
    for by_level in by_levels:
        for key, cell in by_level.items():
            if key.lstrip("-").isdigit():
                total = counts.get(int(key), (0, 0))
                counts[int(key)] = (total[0] + cell.n, total[1] + cell.correct)
    return dict(sorted(counts.items()))


def error_cause(record: Record) -> str:
    """judge: the model answered but the LLM judge gave no verdict; audio: its server counted far fewer audio tokens
    than were sent (run/received.py); request: the model gave no answer."""
    from acousticbench.core.records import AUDIO_NOT_RECEIVED

    error = record.error or ""
    return "judge" if error.startswith(JUDGE_FAILED) else "audio" if error.startswith(AUDIO_NOT_RECEIVED) else "request"


def _fit(counts, metas):
    # imported here: numpy loads in the worker thread that computes a finished run's metrics, not at start
    from acousticbench.benchmarks.acoustic.metrics.psychometric import fit_psychometric, in_units, level_steps

    return in_units(fit_psychometric(counts), *level_steps(metas))
