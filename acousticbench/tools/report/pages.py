"""The report of a large results folder: past INLINE_ANSWERS answers the page holds the tables, curves and the paired
view, and every answer lies on a page of its row and task beside it (<report>-answers/), each a report page of its
own (the same browser over that cell's seeds); a cell page whose runs did not change since it was written is kept."""
from __future__ import annotations

import hashlib
import html
import json
import os
import re
from collections import defaultdict
from pathlib import Path
from collections.abc import Iterator
from typing import Any

from acousticbench.benchmarks import Section
from acousticbench.core.tables import html_table
from acousticbench.tools.model_grid import cell_of, model_rows, pairs_by_item, row_key, row_manifests, row_names
from acousticbench.tools.report.gather import Run
from acousticbench.tools.report.paired import Scored, paired_data
from acousticbench.tools.results_index import change_key

INLINE_ANSWERS = 50_000  # up to this many scored answers the report is one self-contained file with every answer inside
KEY = re.compile(rb'<meta name="acousticbench-cell" content="([0-9a-f]{64})">')


def folder_of(out: Path) -> Path:
    """Where the cell pages of the report `out` lie: report.html -> report-answers/."""
    return out.with_name(out.stem + "-answers")


def cells(runs: list[Run]) -> dict[tuple[str, str], list[Run]]:
    """(row name, cell) -> its runs, every seed of the row on that task together."""
    names = row_names(run.entry for run in runs)
    out: dict[tuple[str, str], list[Run]] = defaultdict(list)
    for run in runs:
        out[(names[row_key(run.entry)], cell_of(run.entry))].append(run)
    return dict(out)


def _file_name(row: str, cell: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", f"{row}-{cell}").strip("-")[:60]
    digest = hashlib.sha256(_link_key(row, cell).encode()).hexdigest()[:8]  # rows whose slugs meet stay apart
    return f"{slug}-{digest}.html"


def _link_key(row: str, cell: str) -> str:
    return f"{row}\0{cell}"


def _key(runs: list[Run], out: Path, embed_audio: bool) -> str:
    """What a cell page is made of: its runs' files as they are now, their references, where the report lies (clips
    are linked relative to it) and the harness that drew it."""
    from acousticbench.core.version import __version__

    parts = [__version__, os.path.abspath(out.parent), embed_audio]
    for run in sorted(runs, key=lambda r: str(r.entry.run_dir)):
        ref = run.reference_file
        parts.append([str(run.entry.run_dir), change_key(run.entry.run_dir), ref,
                      os.stat(ref).st_mtime_ns if ref and os.path.exists(ref) else None])
    return hashlib.sha256(json.dumps(parts, allow_nan=False).encode()).hexdigest()


def _written_key(path: Path) -> str | None:
    try:
        with path.open("rb") as fh:
            found = KEY.search(fh.read(4096))
    except OSError:
        return None
    return found.group(1).decode() if found else None


def write_cell_pages(runs: list[Run], out: Path, embed_audio: bool, title: str) -> tuple[dict[str, str], int, int]:
    """Each cell's page, written where its runs changed: (row + NUL + cell -> its path relative to the report, pages
    written, clips missing)."""
    from acousticbench.tools.report import page
    from acousticbench.tools.report.answers import ClipSources, browser_data

    folder = folder_of(out)
    folder.mkdir(parents=True, exist_ok=True)
    links, written, missing = {}, 0, 0
    for (row, cell), group in cells(runs).items():
        path = folder / _file_name(row, cell)
        links[_link_key(row, cell)] = f"{folder.name}/{path.name}"
        key = _key(group, path, embed_audio)
        if _written_key(path) == key:
            continue  # its runs are as they were: the page stands
        clips = ClipSources(path, embed_audio)
        data = browser_data(group, clips)
        back = f'<a href="../{html.escape(out.name)}">{html.escape(out.name)}</a>'
        subtitle = (f"{html.escape(row)} on {html.escape(cell)}: {len(group)} runs, {len(data['records']['run'])} "
                    f"answers; the tables and curves of every run are in {back}.")
        text = page.render([], data, f"{title}: {row} on {cell}", subtitle)
        text = text.replace("<head>", f'<head><meta name="acousticbench-cell" content="{key}">', 1)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
        written, missing = written + 1, missing + clips.missing
    return links, written, missing


def summary_data(runs: list[Run], links: dict[str, str]) -> dict[str, Any]:
    """The main page's data: no answers, the paired view from the results index (each scored answer's outcome, as
    `acousticbench leaderboard --paired` reads them), and where each cell's answers are."""
    names = row_names(run.entry for run in runs)
    nouns = {cell_of(run.entry): _noun(run.entry.benchmark) for run in runs}
    empty = {name: [] for name in ("run", "q", "status", "response", "label", "correct", "method", "by", "error",
                                   "notes", "ref", "flip", "latency", "paired")}
    return {"runs": [], "texts": [], "clips": [], "questions": [], "records": empty, "pages": links,
            "paired": paired_data(_scored(runs, names), nouns, row_manifests(run.entry for run in runs),
                                  model_rows(run.entry for run in runs)[1])}


def _scored(runs: list[Run], names: dict) -> Iterator[Scored]:
    """Every scored answer of the runs that pair by item (model_grid.pairs_by_item: never a control, nor an adaptive
    run), one run's at a time: never every answer of the folder at once."""
    for e in (run.entry for run in runs if pairs_by_item(run.entry)):
        row, cell = names[row_key(e)], cell_of(e)
        for item, right in _scores(e):
            yield Scored(row, cell, (e.manifest, item), e.seed, right)


def _scores(e) -> list[tuple[str, bool]]:
    """(id, right) of a run's scored answers: from the results index, or from its file (a run being written)."""
    from acousticbench.benchmarks import get_benchmark
    from acousticbench.core.stats import scored_outcomes
    from acousticbench.run.results import RESPONSES

    if e.scores is not None:
        return e.scores()
    outcome = get_benchmark(e.benchmark).outcome
    return [(item, score == 1.0) for item, score in scored_outcomes(e.run_dir / RESPONSES, outcome)]


def _noun(benchmark: str) -> str:
    from acousticbench.benchmarks import get_benchmark

    return get_benchmark(benchmark).item_noun


def pages_section(runs: list[Run], links: dict[str, str]) -> Section:
    """In place of the answer browser: a row per cell with its seeds, answers and the link to its page."""
    rows = []
    for (row, cell), group in cells(runs).items():
        href = html.escape(links[_link_key(row, cell)])
        seeds = sorted({run.entry.seed for run in group})
        rows.append([html.escape(row), html.escape(cell), str(len(seeds)), str(sum(run.entry.n for run in group)),
                     f'<a href="{href}">{href}</a>'])
    return Section("s-browser", "Every answer", f"Past {INLINE_ANSWERS:,} scored answers each row's answers on each "
                   "task lie on a page of their own beside this one (the same browser: filters, the clips, the prompt, "
                   "the raw answer, the other seeds' answers, the reference); this page loads none of them.",
                   html_table("answer-pages", ["Model", "Task", "Seeds", "Scored answers", "Page"], rows,
                              "A page per model and task"))
