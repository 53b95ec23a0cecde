#!/usr/bin/env python3
"""Print each task's rival cues (acousticbench/benchmarks/acoustic/shortcuts/rivals.py) and how often each agrees with the key on
eval, overall and per level, with the attribute's own measure per level and source kind; Markdown for the README."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from acousticbench.benchmarks.acoustic.shortcuts.rivals import RIVALS, Row, agreement, agreements, task_rows  # noqa: E402
from acousticbench.benchmarks.acoustic.stimuli import ATTRIBUTES  # noqa: E402
from acousticbench.core.errors import UserError  # noqa: E402


def rival_lines(task: str, rows: list[Row]) -> list[str]:
    table, both = agreements(task, rows, list(RIVALS[task])), agreements(task, rows, list(RIVALS[task]), None)
    lines = []
    for cue, figures in table.items():
        levels = " / ".join(f"{f:.2f}" for f in figures[1:])
        lines.append(f"| {task} | {ATTRIBUTES[task].ATTRIBUTE} | {cue} ({RIVALS[task][cue]}) | {figures[0]:.3f} | {levels} "
                     f"| {both[cue][0]:.3f} |")
    return lines


def measure_lines(task: str, rows: list[Row]) -> list[str]:
    """The attribute's own measure on train and eval together, per source kind: which levels the audio supports."""
    lines = []
    for source in sorted({r.source for r in rows}):
        mine = [r for r in rows if r.source == source]
        figures = [agreement([r for r in mine if r.level == lv], "measure") for lv in range(1, 6)]
        lines.append(f"| {task} | {source} | {len(mine)} | " + " / ".join(f"{f:.3f}" for f in figures) + " |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--archive", type=Path, default=Path("archive"), help="the pack (default ./archive)")
    parser.add_argument("--task", default=",".join(RIVALS), help="comma-separated task codes (default: every task)")
    args = parser.parse_args()
    rivals = ["| task | attribute | rival cue (a listener hears) | eval | eval, levels 1 / 2 / 3 / 4 / 5 | train and eval |",
              "|---|---|---|---|---|---|"]
    measures = ["| task | source | questions | the attribute's measure on levels 1 / 2 / 3 / 4 / 5 |", "|---|---|---|---|"]
    try:
        for task in args.task.split(","):
            rows = task_rows(args.archive, task)
            rivals += rival_lines(task, rows)
            measures += measure_lines(task, rows)
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print("\n".join(rivals) + "\n\n" + "\n".join(measures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
