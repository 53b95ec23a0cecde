"""Toy: which of two tones lasts longer. A third benchmark added from outside the harness (docs/extending.md):
importing this package registers it; `ACOUSTICBENCH_PLUGINS=toy_benchmark` has the command line import it."""
from acousticbench.benchmarks import register_benchmark

register_benchmark("Toy", __name__)
