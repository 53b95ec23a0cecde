"""The run command: every run of evaluate() as one sweep, its lines to the current reporter (a dry run: its plan)."""
from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from acousticbench.core.errors import UserError
from acousticbench.core.reporter import current, say, warn
from acousticbench.core.settings import SweepSettings


@dataclass(frozen=True)
class ReferenceCheck:
    """--compare-reference: where the references are and the match rate (percent) below which to exit 1."""

    root: Path | None
    tolerance: float | None  # None: 100 for local and open-weight models, report only for API models

    def folder(self) -> Path:
        from acousticbench.tools.reference import default_root

        return self.root or default_root()

    def threshold(self, model: str) -> float | None:
        from acousticbench.run.catalog import get_model

        if self.tolerance is not None:
            return self.tolerance
        return 100.0 if get_model(model).family in ("local", "open-weight") else None


def run(specs: list, sweep: SweepSettings, reference: ReferenceCheck | None = None, results_out: list | None = None,
        options: dict | None = None) -> int:
    """Every run of the command as one sweep: a line per finished run (to the current reporter, above its progress
    bars), a closing table when there are several; the sweep file (sweepfile.py) records them all. A dry run writes
    nothing. `results_out` receives every RunResult; `options`: each benchmark's options, for what it writes after
    the sweep."""
    if sweep.dry_run:
        return _dry_run(specs)
    from acousticbench.run.sweep import run_sweep
    from acousticbench.engine.progress import Progress
    from acousticbench.benchmarks import get_benchmark
    from acousticbench.tools.reference import reference_file
    from acousticbench.run.sweepfile import closing_table

    if reference:
        reference_option_warnings(specs)
    # a missing reference is known before any question is asked; a control or a variant has none to match (a
    # reference is a plain real run of its model): it is said, never compared
    apart = {spec: _not_a_reference_run(spec) for spec in specs} if reference else {}
    ref_files = {spec: reference_file(reference.folder(), spec.model, spec.cell, spec.seed,
                                      get_benchmark(spec.benchmark).made_as({"spec": spec.to_json()}))
                 for spec in specs if not apart[spec]} if reference else {}
    why: Counter = Counter()  # what made the exit status 1, said beside the closing table
    bars = Progress(current().progress())

    def on_result(result) -> None:
        if result.error:
            warn(f"error: {result.spec.label()} stopped: {result.error.rstrip('.')}. Fix the cause, then rerun "
                 "with --resume.")
            why["stopped"] += 1
            return
        say(_run_line(result))
        if result.unheard:  # said in one line when the canary found it, before the runs
            why["had audio that did not reach the model whole (the canary's probes)"] += 1
        if result.over_budget:
            warn(f"error: {result.spec.label()} finished with {result.over_budget}; its failures are error records "
                 f"in {result.run_dir / 'responses.jsonl'}: fix the cause, then rerun with --resume.")
            why["finished over the error budget (--max-error-rate)"] += 1
        if result.changed_clips:  # the pack changed under the run: its answers are not all of the pack it names
            changed = result.changed_clips
            warn(f"error: {result.spec.label()}: {len(changed)} question(s) not asked, their clips changed after "
                 f"the pack was checked (first: {changed[0].id}: {changed[0].error.split(':')[0]}); restore the "
                 "pack, then rerun with --resume.")
            why["met clips that changed after the pack was checked"] += 1
        if result.answered_elsewhere:  # another server than the one given answered: its answers need a look
            warn(f"warning: {result.spec.label()} was answered by {', '.join(result.answered_elsewhere)}, "
                 "where a redirect sent its requests, not by the endpoint given (config.json's backend says "
                 "which): check that it serves the model you mean before using these answers.")
            why["were answered by another server after a redirect"] += 1
        if result.grader_note and result.metrics.statuses.get("unparsed"):
            warn(f"note: {result.grader_note}.")
        if reference and apart[result.spec]:
            say(f"note: {result.spec.label()} is not compared with the reference: it is {apart[result.spec]}, "
                "and a reference is a plain real run of its model.")
        elif reference and _compare(result, ref_files[result.spec], reference.threshold(result.spec.model)):
            why["matched the reference below the tolerance"] += 1

    results = run_sweep(specs, on_result, progress=bars, sweep=sweep)
    if results_out is not None:
        results_out.extend(results)
    if len(results) > 1:
        say(closing_table(results))
    for line in sustained_lines(results):
        say(line)
    from acousticbench.benchmarks import faces

    every = faces()
    for bench, given in (options or {}).items():  # what a benchmark writes over the whole sweep (AudioICL: its CSV)
        every[bench].after_sweep(results, given)
    if why:  # '0 failed' above may still end in 1: say why, where the table ends
        say("Exit status 1: " + "; ".join(f"{count} run{'s' if count > 1 else ''} {what}" for what, count in
                                          why.items()) + " (the error lines above name each).")
    return 1 if why else 0


def _run_line(result) -> str:
    """The line a finished run prints: its benchmark's; a swap control's figure is the share of answers that followed
    the swapped clips (scored against what was sent), never an accuracy."""
    if result.spec.control != "swap":
        return result.benchmark.summary_line(result)
    followed, n = result.benchmark.headline(result.metrics)
    share = "n/a" if followed is None else f"{followed:.3f}"
    return (f"{result.spec.label()}: followed the swapped clips on {share} of {n} {result.benchmark.item_noun} "
            f"(answers naming the key of the clips as sent; a listening model follows) -> {result.run_dir}")


def _not_a_reference_run(spec) -> str:
    """What makes a run another thing than its model's plain real run ('a control run (silence)', 'a variant (demo
    order: permuted)'), or '' for a real run (on the first N questions or not)."""
    from acousticbench.benchmarks import run_identity_of

    run = run_identity_of({"benchmark": spec.benchmark, "spec": spec.to_json()})
    if run.control:
        return f"a control run ({run.control}: its audio replaced)"
    return f"a variant ({', '.join(f'{k}: {v}' for k, v in run.variants)})" if run.variants else ""


def sustained_lines(results: list) -> list[str]:
    """One line per remote model: what its server sustained (the last snapshot of its session's limits)."""
    from acousticbench.engine.slots import sustained_line

    latest: dict[str, dict] = {}
    for r in results:
        c = r.concurrency
        if c and c["remote"] and sum(e["requests"] for e in c["endpoints"]) >= sum(
                e["requests"] for e in latest.get(r.spec.model, c)["endpoints"]):
            latest[r.spec.model] = c
    return [sustained_line(model, summary) for model, summary in latest.items()]


def reference_option_warnings(specs: list) -> None:
    """--compare-reference on a model whose references were made with one value of a benchmark option (the LoRA
    finetunes: the half of the pack they were not trained on), run with another: say so before anything is asked."""
    from acousticbench.benchmarks import get_benchmark
    from acousticbench.core.settings import flag_of
    from acousticbench.run.catalog import get_model

    said = set()
    for spec in specs:
        asked = spec.to_json()
        for option, wanted in get_model(spec.model).reference_options:
            if option not in type(spec.options).model_fields or (spec.model, option, asked[option]) in said:
                continue  # an option of another benchmark's runs, or said already
            said.add((spec.model, option, asked[option]))
            if str(asked[option]) != wanted:
                flag = flag_of(type(spec.options), option)
                warn(f"warning: the references of {spec.model} were made with {flag} {wanted}; this run uses {flag} "
                     f"{asked[option]}, so its other {get_benchmark(spec.benchmark).item_noun} have no reference to "
                     f"match: rerun with {flag} {wanted} to compare like with like.")


def _compare(result, path: Path, threshold: float | None) -> int:
    from acousticbench.tools.reference import compare_to_reference, serving_differences, write_comparison

    comparison = compare_to_reference(result.records, path, result.spec.to_json(),
                                      result.benchmark.label_field)
    serving = serving_differences(result.run_dir, path)
    write_comparison(result.run_dir, comparison, serving)
    say(comparison.line())
    for line in serving:  # beside any change in answers, what was served otherwise than the reference
        say(f"  served otherwise than the reference: {line}")
    if comparison.note:
        say(f"Note: {comparison.note}.")
    for mismatch in comparison.mismatches[:10]:
        say(f"  {mismatch['id']}: reference {mismatch['reference']}, this run {mismatch['run']}")
    if len(comparison.mismatches) > 10:
        say(f"  ... and {len(comparison.mismatches) - 10} more in {result.run_dir / 'comparison.json'}")
    if threshold is not None and 100 * comparison.match_rate < threshold:
        warn(f"error: the match rate is below the tolerance of {threshold:g}%; every mismatch is in "
             f"{result.run_dir / 'comparison.json'}.")
        return 1
    return 0


def _dry_run(specs: list) -> int:
    from acousticbench.benchmarks import faces, get_benchmark
    from acousticbench.run.plan import format_plan, plan_run, power_lines

    caches: dict[str, dict] = {}
    plans, planned = [], []
    for spec in specs:
        bench = get_benchmark(spec.benchmark)
        prepared = bench.prepare(spec, caches.setdefault(bench.name, {}))
        items, face = prepared.items, faces()[bench.name]
        if prepared.source is None:
            say(f"# {spec.label()}: {len(items)} {bench.item_noun}, nothing sent")
            for item, prompt in items:
                say(f"{item.id}: {' | '.join(prompt.text.splitlines())}{face.describe_item(item)}")
            plans.append(plan_run(spec, items))
        else:  # an adaptive run makes its questions as it goes: planned at its most, each like its first
            say(f"# {spec.label()}: made while it runs, up to {prepared.source.planned()} {bench.item_noun} (counted "
                "below at that most, each like its first trial at the middle of its range), nothing sent")
            with tempfile.TemporaryDirectory() as scratch:
                plans.append(plan_run(spec, prepared.source.sample(Path(scratch))))
        # an item carries what its record's scored() reads (AcousticBench's diagnostics are never compared)
        planned.append((spec, {item.id for item, _ in items if bench.scored(item)}, bench.item_noun,
                        bench.own_items(prepared.config)))
    if not specs:
        raise UserError("no runs to render.")
    say(format_plan(plans))  # what matters before spending: requests, audio, tokens, price, time
    say("\n".join(power_lines(planned)))  # and what the runs can tell apart
    return 0
