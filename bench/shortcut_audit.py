#!/usr/bin/env python3
"""Print the shortcut audit of a pack: every cheap feature as a one-feature rule, fitted on train, scored on eval."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from acousticbench.errors import UserError  # noqa: E402
from acousticbench.benchmarks.acoustic.shortcuts.audit import BOUND, audit_pack, offenders, physical_lines, table  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--archive", type=Path, default=Path("archive"), help="the pack to audit (default ./archive)")
    parser.add_argument("--task", default=None, help="comma-separated task codes (default: every task of the pack)")
    args = parser.parse_args()
    try:
        findings = audit_pack(args.archive, args.task.split(",") if args.task else None)
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(table(findings))
    print("\nphysical features (follow from the attribute, exempt from the bound):")
    print("\n".join(physical_lines(dict.fromkeys(f.task for f in findings))))
    shortcuts = offenders(findings)
    for f in shortcuts:
        print(f"SHORTCUT {f.task}: {f.feature} scores {f.accuracy:.3f} on eval (bound {BOUND:.2f})")
    print(f"\n{len(shortcuts)} non-physical feature(s) above {BOUND:.2f}.")
    return 1 if shortcuts else 0


if __name__ == "__main__":
    sys.exit(main())
