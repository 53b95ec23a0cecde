#!/usr/bin/env python3
"""`acousticbench leaderboard`, kept under its old name: the same flags and output."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from acousticbench.cli.subcommands import console  # noqa: E402

sys.exit(console(["leaderboard", *sys.argv[1:]]))
