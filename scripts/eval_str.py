#!/usr/bin/env python3
"""One benchmark's own command, kept at the path its users know; it lives in its package (eval_str.py there)."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from acousticbench.benchmarks.audioicl.eval_str import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
