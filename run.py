#!/usr/bin/env python3
"""Entry point: `python run.py --help`."""
import gc
import sys

from acousticbench.cli import main

if __name__ == "__main__":
    code = main()
    gc.freeze()  # the interpreter's exit would otherwise walk every object the command made, only to free them
    sys.exit(code)
