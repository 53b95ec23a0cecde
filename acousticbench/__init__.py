"""AcousticBench: an evaluation harness for Large Audio-Language Models.

    >>> import acousticbench
    >>> result = acousticbench.evaluate(acousticbench.RunSettings(model="Oracle", task="rad", seeds=[42, 43],
    ...                                                          max_samples=20))
    >>> [(run.seed, run.accuracy) for run in result]
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acousticbench.core.version import __version__

if TYPE_CHECKING:
    from collections.abc import Sequence

    from acousticbench.api import Evaluation
    from acousticbench.core.reporter import Reporter
    from acousticbench.core.settings import BenchmarkOptions, RunSettings

__all__ = ["ConsoleReporter", "Reporter", "Run", "RunSettings", "SilentReporter", "__version__", "build_packs",
           "compare", "evaluate", "export_packs", "extract_pack", "import_packs", "leaderboard", "load_runs",
           "models_table", "promote_references", "register_benchmark", "register_model", "rejudge", "report", "rerun",
           "serve_check", "serve_model", "serve_plan", "served_models", "task_lines", "verify_packs"]
# imported when first asked for (PEP 562): `import acousticbench` stays light
_LAZY = {"RunSettings": "acousticbench.core.settings", "register_benchmark": "acousticbench.benchmarks",
         "register_model": "acousticbench.run.catalog", "Reporter": "acousticbench.core.reporter",
         "ConsoleReporter": "acousticbench.core.reporter", "SilentReporter": "acousticbench.core.reporter",
         "Run": "acousticbench.api", "load_runs": "acousticbench.api", "leaderboard": "acousticbench.api.tools",
         "compare": "acousticbench.api.tools", "report": "acousticbench.api.tools",
         "promote_references": "acousticbench.api.tools", "rerun": "acousticbench.api.rerun",
         "rejudge": "acousticbench.api.relabel", "models_table": "acousticbench.api.tools",
         "task_lines": "acousticbench.api.tools", "build_packs": "acousticbench.api.packs",
         "verify_packs": "acousticbench.api.packs", "extract_pack": "acousticbench.api.packs",
         "export_packs": "acousticbench.api.packs", "import_packs": "acousticbench.api.packs",
         "serve_model": "acousticbench.api.serving", "serve_plan": "acousticbench.api.serving",
         "serve_check": "acousticbench.api.serving", "served_models": "acousticbench.api.serving"}


def evaluate(settings: RunSettings | None = None, *, options: Sequence[BenchmarkOptions] = (),
             reporter: Reporter | None = None, progress: bool | None = None, **fields: Any) -> Evaluation:
    """Run models on tasks and seeds as `acousticbench run` does, and return every run's records and metrics.

    `settings` is a RunSettings (models, tasks, seeds and every harness setting); `options` holds benchmark options
    objects (AcousticOptions: split, judge, ...; ICLOptions: shot_counts, prompt_style, scoring, ...). Keyword fields
    are a shorthand for both: each goes to the object that declares it (`evaluate(model="Oracle", task="rad",
    max_samples=20, judge="rules")`); a field no object declares is a TypeError naming every one, and a value the
    command line would refuse raises acousticbench.core.errors.UserError with the same one line.

    Returns an Evaluation: `.runs`, one Run per model x task (x variant) x seed with `model`, `cell`, `seed`,
    `run_dir`, `accuracy`, `n`, `metrics` (metrics.json as a pydantic object), `records` (responses.jsonl, sorted by
    id), `error` and `spec`; `.status` is the command line's exit status (0 fine, 1 something needs attention).

    It prints nothing: its lines and progress go to `reporter` (ConsoleReporter() prints what `acousticbench run`
    prints); `progress=True` without a reporter is ConsoleReporter(progress=True)."""
    from acousticbench import api  # the engine is imported on the first call, never by `import acousticbench`

    return api.evaluate(settings, options=options, reporter=reporter, progress=progress, **fields)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
