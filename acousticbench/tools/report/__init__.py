"""`run.py --report`: one self-contained HTML file of a results folder: each benchmark's sections (its leaderboard,
curves, diagnostics: Benchmark.report_sections), and a browser of every answer with its clips and reference."""
from __future__ import annotations

import html
import os
import time
from dataclasses import dataclass
from pathlib import Path

from acousticbench.core.errors import UserError


@dataclass(frozen=True)
class Built:
    path: Path
    runs: int
    records: int
    bytes: int
    seconds: float
    missing_clips: int


def build_report(results_dirs: list[Path], out: Path, embed_audio: bool = False,
                 references: Path | None = None, inline_answers: int | None = None) -> Built:
    """The report of the finished runs; past `inline_answers` answers (default pages.INLINE_ANSWERS) each row's
    answers on each task go to a page of their own beside it (pages.py)."""
    from acousticbench.benchmarks import get_benchmark
    from acousticbench.tools.leaderboard import by_benchmark, model_index, real_and_controls
    from acousticbench.tools import arrival, control_runs
    from acousticbench.tools.report import page, pages
    from acousticbench.tools.report.answers import ClipSources, browser_data
    from acousticbench.tools.report.gather import RecordsByRun, gather

    started = time.perf_counter()
    inline_answers = pages.INLINE_ANSWERS if inline_answers is None else inline_answers
    runs = gather(results_dirs, references)
    if not runs:
        raise UserError(f"no finished runs under {', '.join(map(str, results_dirs))}: run a model first "
                        "(`acousticbench run --model Oracle --task rad`), or pass the folder that holds the run "
                        "folders.")
    records = RecordsByRun(runs)  # each run's records read when a section asks, never all held at once
    shown, left = real_and_controls([r.entry for r in runs])  # a control's accuracy is never the model's
    sections = [section for name, entries in by_benchmark(shown)
                for section in get_benchmark(name).views.report_sections(entries, records, model_index)]
    sections += control_runs.sections([r.entry for r in runs], records, left)  # does the model listen: the controls
    sections += arrival.sections([r.entry for r in runs])  # does the audio arrive: the canary, the token counts
    out = Path(out)
    clips = ClipSources(out, embed_audio)
    if sum(run.entry.n for run in runs) > inline_answers:  # answers on pages of their own, beside the report
        links, _, missing = pages.write_cell_pages(runs, out, embed_audio, "AcousticBench report")
        data, answers = pages.summary_data(runs, links), pages.pages_section(runs, links)
        clips.missing += missing
        n_records = sum(run.entry.lines or 0 for run in runs)  # as the index counted them: no file read again
    else:
        data, answers = browser_data(runs, clips), None
        n_records = len(data["records"]["run"])
    own = [r for r in runs if r.entry.own_items]  # an adaptive run's trials are its own, not answers to the pack
    counted = f"{len(runs)} runs, {n_records} answers" + (f" ({len(own)} of the runs adaptive, their trials among the "
                                                          "answers)" if own else "")
    subtitle = (f"{counted}, from {html.escape(', '.join(map(str, results_dirs)))}; "
                f"written {time.strftime('%Y-%m-%d %H:%M')}. Clips "
                + ("embedded." if embed_audio else "linked by relative path: keep the archive where it is, or "
                   "rebuild with --embed-audio for a portable file."))
    text = page.render(sections, data, "AcousticBench report", subtitle, answers)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out)
    except OSError as err:
        raise UserError(f"cannot write the report to {out} ({err.strerror or err}): choose another path with --out.") from None
    return Built(out, len(runs), n_records, len(text.encode("utf-8")), time.perf_counter() - started, clips.missing)
