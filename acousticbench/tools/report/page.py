"""The report page: one HTML file with its styles, script, figures and data inline, and a Content-Security-Policy that
forbids every network request (clips load from relative file paths or from data: URLs)."""
from __future__ import annotations

from html import escape
from importlib import resources

from acousticbench.benchmarks import Section
from acousticbench.core.jsontext import json_text

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
<div class="pager"><span id="count"></span> <button id="prev">‹ previous</button><button id="next">next ›</button>
  <span class="note">j / ↓ next answer, k / ↑ previous</span></div>
<div class="browse"><div class="list">
<table id="answers" data-scripted="1"><thead><tr><th>Id</th><th>Model</th><th>Task</th><th>Seed</th><th>Level</th>
<th>Status</th><th>Raw answer</th><th>Chosen</th><th>Correct</th><th>Scored</th><th>Reference</th><th>Seeds</th></tr></thead>
<tbody></tbody></table></div>
<div id="detail"><p class="note">Click an answer (or press j) to see it here.</p></div></div>
"""
PAIRED = """
<div class="filters"><label>Model A <select id="p-a"></select></label>
  <label>Model B <select id="p-b"></select></label></div>
<p id="p-note" class="note"></p>
<p id="p-served" class="note"></p>
<table id="paired"><thead><tr><th>Task</th><th>Questions paired</th><th>Seeds</th><th>A %</th><th>B %</th>
<th>A − B [95% interval]</th><th>p</th><th>q (BH)</th><th>Different</th>
<th title="the true difference, in points, this many questions and seeds find at 80% power (alpha 0.05), taking the spread of the per-question differences seen here">Detectable (80% power)</th>
<th>A better</th><th>B better</th>
<th>A unpaired</th><th>B unpaired</th></tr></thead><tbody></tbody></table>
<div id="p-lists"></div>
"""
SCRIPTS = ("tables.js", "report.js", "paired.js")  # in this order: the browser uses the tables, the paired view both


def _asset(name: str) -> str:
    return resources.files("acousticbench.tools.report").joinpath("assets", name).read_text(encoding="utf-8")


def _section(section: Section) -> str:
    return (f'<section id="{section.id}"><h2>{escape(section.title)}</h2><p class="note">{section.blurb}</p>'
            f"{section.html}</section>")


def render(sections: list[Section], data: dict, title: str, subtitle: str, answers: Section | None = None) -> str:
    """The benchmarks' sections, the paired view where there are two models, then the answer browser (or `answers`
    in its place: a large folder's links to its answer pages), under one header with a link to each."""
    paired = [Section("s-paired", "Model against model", "Pick two rows (a model run one way: its judge, scoring, "
                      "served model, pack and questions; runs made differently are rows of their own): per task the "
                      "questions paired by id on the same pack, each question's answers averaged over the seeds both "
                      "ran (a seed is never a new pair; n counts questions), the difference A − B with its 95% "
                      "interval (Newcombe's score interval for paired proportions over questions), an exact "
                      "sign-flip test (one seed each: McNemar's exact test), and its Benjamini-Hochberg q over every comparison in the report, so that calling only "
                      "q &lt; 0.05 keeps false discoveries across the grid at 5% (<code>acousticbench compare</code> "
                      "and <code>acousticbench leaderboard --paired</code> compute the same). Detectable: the true "
                      "difference, in points, that this many questions and seeds find at 80% power (alpha 0.05), "
                      "taking the spread of the per-question differences seen here ('none with n=…' where not even 100 "
                      "points would be found). Only scored answers "
                      "count." + (f" {escape(data['paired']['left_out'])}" if data["paired"].get("left_out") else ""),
                      PAIRED)]
    sections = [*sections, *(paired if len(data["paired"]["models"]) > 1 else []),
                answers or Section("s-browser", "Every answer", "Filter, then click a row for its clips, prompt, raw "
                                   "answer, how the label was obtained, the clips' physical parameters, and the "
                                   "reference run's answer (disagreements highlighted). Click a header to sort.",
                                   BROWSER)]
    nav = "".join(f'<a href="#{s.id}">{escape(s.title)}</a>' for s in sections)
    payload = json_text(data, separators=(",", ":")).replace("</", "<\\/")  # a reply's invalid Unicode as escapes
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            f"<title>{escape(title)}</title><style>{_asset('report.css')}</style></head><body>"
            f"<header><h1>{escape(title)}</h1><p>{subtitle}</p><nav>{nav}</nav></header>"
            + "".join(_section(s) for s in sections)
            + f'<script type="application/json" id="report-data">{payload}</script>'
            + "".join(f"<script>{_asset(name)}</script>" for name in SCRIPTS) + "</body></html>\n")
