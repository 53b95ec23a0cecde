#!/usr/bin/env python3
"""Print the shortcut audit of a pack: every cheap cue alone and all non-attribute cues jointly, then every generic
feature alone and a random forest over the non-attribute ones, all fitted on train and scored on eval; exit 1 when any
task's best lone cue or feature, joint fit or forest is above the bound."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from acousticbench.core.errors import UserError  # noqa: E402
from acousticbench.benchmarks.acoustic.shortcuts.audit import BOUND, audit_pack, measure_lines, offenders, summary, table  # noqa: E402
from acousticbench.benchmarks.acoustic.shortcuts.learned import declared_lines, learned_offenders, learned_pack, learned_summary  # noqa: E402
from acousticbench.benchmarks.acoustic.shortcuts.learned_measures import ALONE_ONLY, ATTRIBUTE_FEATURES  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--archive", type=Path, default=Path("archive"), help="the pack to audit (default ./archive)")
    parser.add_argument("--task", default=None, help="comma-separated task codes (default: every task of the pack)")
    parser.add_argument("--cues", action="store_true", help="also print every cue's figure on every task")
    parser.add_argument("--no-learner", action="store_true",
                        help="the cheap cues only: no generic features, no forest (needs no scikit-learn)")
    parser.add_argument("--workers", type=int, default=2, help="processes computing the generic features (default 2)")
    args = parser.parse_args()
    try:
        audits = audit_pack(args.archive, args.task.split(",") if args.task else None)
        tasks = [a.task for a in audits]
        learned = [] if args.no_learner else learned_pack(args.archive, tasks, args.workers)
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.cues:
        print(table(audits) + "\n")
    print(summary(audits))
    print("\nthe attribute's own measures (confounds that follow from it; out of the bound and the joint fit):")
    print("\n".join(measure_lines(audits)))
    if learned:
        print("\n" + learned_summary(learned))
        print("\nthe generic features declared per task (the attribute's own: out of everything; alone only: held to "
              "the bound alone, out of the forest):")
        print("\n".join(line for t in tasks for line in declared_lines(t, ATTRIBUTE_FEATURES.get(t, {}), ALONE_ONLY.get(t, {}))))
    shortcuts = offenders(audits) + learned_offenders(learned, BOUND)
    print("\n" + "\n".join(shortcuts) if shortcuts else "")
    print(f"{len(shortcuts)} shortcut(s) above {BOUND:.2f}.")
    return 1 if shortcuts else 0


if __name__ == "__main__":
    sys.exit(main())
