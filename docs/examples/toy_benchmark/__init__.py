"""Toy: which of two tones lasts longer, a benchmark added from outside the harness (docs/extending.md)."""
from acousticbench.benchmarks import register_benchmark

register_benchmark("Toy", __name__)  # ACOUSTICBENCH_PLUGINS=toy_benchmark: the command line imports it
