"""Demonstration order and reply format: with --demo-order permuted each seed shows an episode's demos in an order of
its own (drawn from the episode id and the seed, so it is the same on every machine), and the report reads the
spread of accuracy over those orders and, apart from correctness, how often a reply is nothing but a label."""
from __future__ import annotations

import random
import statistics
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path

from acousticbench.benchmarks.audioicl.episodes import Episode
from acousticbench.benchmarks.audioicl.scoring import normalize
from acousticbench.benchmarks.entry import Entry, ModelOrder, Section
from acousticbench.core.tables import html_table, pct


def order_of(episode_id: str, k: int, seed: int) -> list[int]:
    """The demos' original positions in the order this seed shows them."""
    order = list(range(k))
    random.Random(f"{episode_id}|{seed}").shuffle(order)  # a str seed is hashed (sha512): the same everywhere
    return order


def permuted(episode: Episode, seed: int) -> Episode:
    return episode.model_copy(update={"demos": [episode.demos[i] for i in order_of(episode.id, len(episode.demos), seed)]})


def well_formed(response: str | None, prediction: str | None) -> bool:
    """The reply is the label and nothing else (case, spaces and the public scorer's punctuation aside)."""
    return prediction is not None and normalize(response) == normalize(prediction)


def compliance(records: Sequence) -> tuple[float | None, int]:
    """(well-formed replies / answered episodes, answered episodes)."""
    answered = [r for r in records if r.status == "answered"]
    if not answered:
        return None, 0
    return sum(well_formed(r.response, r.prediction) for r in answered) / len(answered), len(answered)


def order_rows(entries: list[Entry], order: ModelOrder, records: Mapping[Path, Sequence]) -> list[list[str]]:
    """Per model, task and k over its seeds (each an order where demos are permuted): accuracy's mean, range and
    std, the episodes whose answer changed between orders, and the format compliance."""
    groups: dict[tuple, list[Entry]] = {}
    for e in entries:
        groups.setdefault((e.model, e.task, e.variant, e.identity), []).append(e)
    rows = []
    for (model, task, k, _), group in sorted(groups.items(), key=lambda g: (order(g[0][0]), str(g[0]))):
        accs = [e.accuracy for e in group if e.accuracy is not None]
        answers: dict[str, set] = {}
        for e in group:
            for r in records.get(e.run_dir, ()) if e.run_dir else ():
                answers.setdefault(r.id, set()).add(r.prediction)
        changed = sum(len(a) > 1 for a in answers.values())
        formats = [getattr(e.metrics, "format_compliance", None) for e in group]
        formats = [f for f in formats if f is not None]
        permuted_runs = sum(getattr(e.metrics, "demo_order", "file") == "permuted" for e in group)
        spread = (f"{pct(min(accs))}-{pct(max(accs))} (std {pct(statistics.stdev(accs))})" if len(accs) > 1
                  else "-")
        rows.append([escape(model), escape(task), str(k), f"{len(group)}" + (" permuted" if permuted_runs else " file"),
                     pct(statistics.fmean(accs)) if accs else "-", spread,
                     f"{changed}/{len(answers)}" if len(group) > 1 else "-",
                     pct(statistics.fmean(formats)) if formats else "-"])
    return rows


def section(entries: list[Entry], order: ModelOrder, records: Mapping[Path, Sequence]) -> Section:
    header = ["Model", "Task", "k", "Orders (seeds)", "Accuracy %", "Range over orders", "Episodes answered "
              "differently", "Well-formed replies %"]
    return Section("s-audioicl-order", "AudioICL: demonstration order and reply format",
                   "With --demo-order permuted each seed shows the demos in its own order: the range and std over "
                   "seeds are the spread over orders (with the file's order they are seed noise alone). Well-formed: "
                   "the answered reply is the label and nothing else, whether right or wrong.",
                   html_table("audioicl-order", header, order_rows(entries, order, records),
                              "Accuracy over demonstration orders and format compliance, per task and k"))
