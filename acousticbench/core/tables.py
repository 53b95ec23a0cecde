"""Presentation pieces the leaderboard, the report and every benchmark's own sections share: number formatting, HTML
tables, SVG axes and series colours. Ground floor: imports nothing of the harness."""
from __future__ import annotations

import statistics
from html import escape

PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")
PAD = 28  # room for an axis's tick labels, in pixels


def mean_known(values: list[float | None]) -> float | None:
    """The mean of the values that are known (not None); None when none is."""
    known = [v for v in values if v is not None]
    return statistics.fmean(known) if known else None


def mean_std(values: list[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for one value): how a cell reads over seeds."""
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def pct(x: float | None) -> str:
    """A rate as a percentage with one decimal; '-' when unknown."""
    return "-" if x is None else f"{100 * x:.1f}"


def cell_text(mean_std: tuple[float, float] | None, interval, without_errors: float | None) -> str:
    """'50.0 ± 1.2 [45.1, 54.9]' (interval: an object with low and high), with '(w/o errors 52.0)' where the runs
    had errors; '-' for no run."""
    if not mean_std:
        return "-"
    mean, std = mean_std
    text = f"{pct(mean)} ± {pct(std)}" + (f" [{pct(interval.low)}, {pct(interval.high)}]" if interval else "")
    return text + (f" (w/o errors {pct(without_errors)})" if without_errors is not None else "")


def md_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table, one line per row."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows]) + "\n"


def html_table(table_id: str, header: list[str], rows: list[list[str]], caption: str) -> str:
    """A captioned HTML table; the cells are HTML already (escape what came from a file), the header is text."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return (f'<p class="caption">{escape(caption)}</p><table id="{table_id}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>")


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def legend(names: list[str]) -> str:
    """A colour key, in the order `colour` gives the series."""
    return '<div class="legend">' + "".join(
        f'<span><i style="background:{colour(i)}"></i>{escape(m)}</span>' for i, m in enumerate(names)) + "</div>"


class Axes:
    """Maps data to panel pixels."""

    def __init__(self, x0, x1, y0, y1, w, h, pad=PAD):
        self.x0, self.x1, self.y0, self.y1, self.w, self.h, self.pad = x0, x1, y0, y1, w, h, pad

    def x(self, v: float) -> float:
        return round(self.pad + (v - self.x0) / (self.x1 - self.x0) * (self.w - self.pad - 8), 1)

    def y(self, v: float) -> float:
        return round(self.h - self.pad + 6 - (v - self.y0) / (self.y1 - self.y0) * (self.h - self.pad - 6 - 14), 1)

    def frame(self, xticks, yticks, xlabel: str, xnames: list[str] | None = None) -> str:
        parts = [f'<line class="ax" x1="{self.x(self.x0)}" y1="{self.y(self.y0)}" x2="{self.x(self.x1)}" '
                 f'y2="{self.y(self.y0)}"/>',
                 f'<line class="ax" x1="{self.x(self.x0)}" y1="{self.y(self.y0)}" x2="{self.x(self.x0)}" '
                 f'y2="{self.y(self.y1)}"/>']
        names = xnames or [f"{t:g}" for t in xticks]  # tick labels other than the positions (a level's step)
        parts += [f'<text class="tick" x="{self.x(t)}" y="{self.y(self.y0) + 11}" text-anchor="middle">{name}</text>'
                  for t, name in zip(xticks, names)]
        parts += [f'<text class="tick" x="{self.x(self.x0) - 3}" y="{self.y(t) + 3}" text-anchor="end">{t:g}</text>'
                  for t in yticks]
        parts.append(f'<text class="tick" x="{self.x((self.x0 + self.x1) / 2)}" y="{self.h - 2}" '
                     f'text-anchor="middle">{escape(xlabel)}</text>')
        return "".join(parts)
