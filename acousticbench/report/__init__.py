"""`run.py --report`: one self-contained HTML file of a results folder: the leaderboards, psychometric curves and
thresholds, AudioICL k-shot curves, diagnostics, and a browser of every answer with its clips and reference."""
from __future__ import annotations

import html
import os
import time
from dataclasses import dataclass
from pathlib import Path

from acousticbench.errors import UserError


@dataclass(frozen=True)
class Built:
    path: Path
    runs: int
    records: int
    bytes: int
    seconds: float
    missing_clips: int


def build_report(results_dirs: list[Path], out: Path, embed_audio: bool = False,
                 references: Path | None = None) -> Built:
    from acousticbench.leaderboard import icl_rows, table_rows
    from acousticbench.report import figures, page, summaries, tables
    from acousticbench.report.answers import ClipSources, browser_data
    from acousticbench.report.gather import gather

    started = time.perf_counter()
    runs = gather(results_dirs, references)
    if not runs:
        raise UserError(f"no finished runs under {', '.join(map(str, results_dirs))}: run a model first "
                        "(python run.py --model Oracle --task rad), or pass the folder that holds the run folders.")
    by_dir = {run.entry.run_dir: run for run in runs}
    acoustic = [r.entry for r in runs if r.benchmark != "AudioICL"]
    icl = [r.entry for r in runs if r.benchmark == "AudioICL"]
    parts: dict[str, str] = {}
    if acoustic:
        tasks, rows = table_rows(acoustic)
        parts["leaderboard"] = tables.leaderboard(tasks, rows)
        lora = summaries.lora_rows(tasks, rows)
        if lora:
            parts["lora"] = tables.lora(tasks, lora)
        cells = summaries.psychometric_cells(tasks, rows, by_dir)
        if cells:
            parts["psychometric"] = tables.thresholds(tasks, cells) + page.psychometric_grid(cells)
        diagnostics = summaries.diagnostics_rows(tasks, rows, by_dir)
        if diagnostics:
            parts["diagnostics"] = tables.diagnostics(tasks, diagnostics)
    if icl:
        rows = icl_rows(icl)
        series = summaries.kshot_series(rows)
        models = list(dict.fromkeys(r["model"] for r in rows))
        parts["audioicl"] = (figures.legend(models) + '<div class="grid">'
                             + "".join(figures.kshot_panel(t, m, models) for t, m in series.items()) + "</div>"
                             + tables.audioicl(rows))
    clips = ClipSources(out, embed_audio)
    data = browser_data(runs, clips)
    n_records = len(data["records"]["run"])
    subtitle = (f"{len(runs)} runs, {n_records} answers, from {html.escape(', '.join(map(str, results_dirs)))}; "
                f"written {time.strftime('%Y-%m-%d %H:%M')}. Clips "
                + ("embedded." if embed_audio else "linked by relative path: keep the archive where it is, or "
                   "rebuild with --embed-audio for a portable file."))
    text = page.render(parts, data, "AcousticBench report", subtitle)
    out = Path(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out)
    except OSError as err:
        raise UserError(f"cannot write the report to {out} ({err.strerror or err}): choose another path with --out.") from None
    return Built(out, len(runs), n_records, len(text.encode("utf-8")), time.perf_counter() - started, clips.missing)
