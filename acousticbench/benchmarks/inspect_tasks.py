"""The `inspect_ai` entry point (pyproject.toml): importing it registers every benchmark's inspect tasks, so that
`inspect eval acousticbench/rad` (or acousticbench/AudioCount) finds them. Each benchmark package that has an
`inspect_tasks` module contributes its own; this module names none of them."""
from __future__ import annotations

import importlib
import importlib.util

from acousticbench.benchmarks import BENCHMARKS

for _package in BENCHMARKS.values():
    if importlib.util.find_spec(f"{_package}.inspect_tasks") is not None:
        importlib.import_module(f"{_package}.inspect_tasks")
