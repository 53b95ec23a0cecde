#!/usr/bin/env python3
"""Entry point: `python run.py --help`."""
import sys

from acousticbench.cli import main

if __name__ == "__main__":
    sys.exit(main())
