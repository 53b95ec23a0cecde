"""Does the audio arrive: per model, the start-of-run canary's verdicts over its runs (config.json's canary) and the
records whose server counted far fewer audio tokens than were sent (metrics.json's audio_received), for the report."""
from __future__ import annotations

from collections import Counter
from html import escape

from acousticbench.benchmarks import Entry, Section
from acousticbench.core.tables import html_table

BLURB = ("Before a served or API model's runs, eight tone probes show whether its audio, both clips and both channels "
         "reach it; where its server reports the audio tokens it consumed, each record's count is set against the "
         "seconds sent. A run marked † in the leaderboard is one the canary found its audio did not reach.")
HEADER = ["Model", "Runs", "Canary", "What it found", "Records checked", "Audio not received"]


def _rows(entries: list[Entry]) -> list[list[str]]:
    by_model: dict[str, list[Entry]] = {}
    for e in entries:
        if e.config is not None:
            by_model.setdefault(e.model, []).append(e)
    rows = []
    for model, runs in by_model.items():
        canaries = [(e.config or {}).get("canary") or {} for e in runs]
        verdicts = Counter(c.get("verdict", "not asked") for c in canaries)
        found = sorted({e.listener for e in runs if e.listener and e.listener.startswith("canary")})
        counted = [getattr(e.metrics, "audio_received", None) or {} for e in runs]
        checked, missing = sum(c.get("checked", 0) for c in counted), sum(c.get("not_received", 0) for c in counted)
        if set(verdicts) <= {"skipped", "not asked"} and not checked:
            continue  # a local model, or runs from before the checks: nothing to say
        rows.append([escape(model), str(len(runs)), escape(", ".join(f"{v} {n}" for v, n in sorted(verdicts.items()))),
                     escape("; ".join(found) or "-"), str(checked), str(missing)])
    return rows


def sections(entries: list[Entry]) -> list[Section]:
    """The report's section; none when no run was checked."""
    rows = _rows(entries)
    if not rows:
        return []
    return [Section("s-arrival", "Does the audio arrive?", escape(BLURB),
                    html_table("arrival", HEADER, rows, "Per model: canary verdicts over its runs, records checked "
                               "against the audio tokens its server reported"))]
