"""The report page: one HTML file with its styles, script, figures and data inline, and a Content-Security-Policy that
forbids every network request (clips load from relative file paths or from data: URLs)."""
from __future__ import annotations

import json
from html import escape
from importlib import resources

from acousticbench.report import figures

CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
       "media-src 'self' file: data:")
BROWSER = """
<div class="filters">
  <label>Model <select id="f-model"><option value="">all</option></select></label>
  <label>Task <select id="f-task"><option value="">all</option></select></label>
  <label>Seed <select id="f-seed"><option value="">all</option></select></label>
  <label>Status <select id="f-status"><option value="">all</option></select></label>
  <label>Scored <select id="f-correct"><option value="">all</option><option value="right">right</option>
    <option value="wrong">wrong</option><option value="none">no correct option</option></select></label>
  <label><input type="checkbox" id="f-flips"> flips between seeds</label>
  <label><input type="checkbox" id="f-ref"> disagrees with the reference</label>
  <label>Id <input id="f-id" size="12" placeholder="rad_0001"></label>
</div>
<div class="pager"><span id="count"></span> <button id="prev">‹ previous</button><button id="next">next ›</button></div>
<table id="answers"><thead><tr><th>Id</th><th>Model</th><th>Task</th><th>Seed</th><th>Level</th><th>Status</th>
<th>Raw answer</th><th>Chosen</th><th>Correct</th><th>Scored</th><th>Reference</th><th>Seeds</th></tr></thead>
<tbody></tbody></table>
<div id="detail"></div>
"""


def _asset(name: str) -> str:
    return resources.files("acousticbench.report").joinpath("assets", name).read_text(encoding="utf-8")


def _section(anchor: str, title: str, note: str, body: str) -> str:
    return f'<section id="{anchor}"><h2>{escape(title)}</h2><p class="note">{note}</p>{body}</section>'


def psychometric_grid(cells) -> str:
    rows: dict[str, list] = {}
    for cell in cells:
        rows.setdefault(cell.row, []).append(cell)
    return "".join(f'<div class="model-row"><h3>{escape(row)}</h3><div class="grid">'
                   + "".join(figures.psychometric_panel(c) for c in panels) + "</div></div>"
                   for row, panels in rows.items())


def render(parts: dict, data: dict, title: str, subtitle: str) -> str:
    """`parts`: the sections' ready HTML (absent keys: sections without data are left out)."""
    sections = []
    if "leaderboard" in parts:
        sections.append(("s-leaderboard", "AcousticBench leaderboard", "The paper's main table: accuracy over scored "
                         "questions, a null answer counted wrong, mean ± std over seeds (paper: seeds 42-44, "
                         "<code>--split all</code>).", parts["leaderboard"]))
    if "lora" in parts:
        sections.append(("s-lora", "LoRA lift", "Each finetune <code>&lt;base&gt;+&lt;adapter&gt;</code> against its "
                         "base, both run with <code>--split eval</code> (the half the adapters were not trained on).",
                         parts["lora"]))
    if "psychometric" in parts:
        sections.append(("s-psychometric", "Psychometric curves", "Accuracy by difficulty level (Wilson 95% bars), "
                         "the fitted two-alternative psychometric function (guess rate 0.5, a lapse rate; maximum "
                         "likelihood), and the level where it falls to 75% correct (red dot; bar: parametric-bootstrap "
                         "95% interval). Seeds pooled.", parts["psychometric"]))
    if "audioicl" in parts:
        sections.append(("s-audioicl", "AudioICL: accuracy by number of shots", "Mean over seeds, ± std bars; every "
                         "model on one axis per task.", parts["audioicl"]))
    if "diagnostics" in parts:
        sections.append(("s-diagnostics", "Diagnostics", "What the accuracy does not show: the ceiling, response "
                         "bias and position bias.", parts["diagnostics"]))
    sections.append(("s-browser", "Every answer", "Filter, then click a row for its clips, prompt, raw answer, how "
                     "the label was obtained, and the reference run's answer (disagreements highlighted).", BROWSER))
    nav = "".join(f'<a href="#{a}">{escape(t)}</a>' for a, t, _, _ in sections)
    payload = json.dumps(data, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            f"<title>{escape(title)}</title><style>{_asset('report.css')}</style></head><body>"
            f"<header><h1>{escape(title)}</h1><p>{subtitle}</p><nav>{nav}</nav></header>"
            + "".join(_section(*s) for s in sections)
            + f'<script type="application/json" id="report-data">{payload}</script>'
            f"<script>{_asset('report.js')}</script></body></html>\n")
