"""AcousticBench: an evaluation harness for Large Audio-Language Models."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from acousticbench.api import Evaluation

from acousticbench.core.version import __version__  # noqa: E402 (one place: provenance reads it there)
__all__ = ["__version__", "evaluate"]


def evaluate(model: str | Sequence[str], task: str | Sequence[str] = "all", seeds: int | Sequence[int] = 42,
             **settings: Any) -> Evaluation:
    """Run models on tasks and seeds as `python run.py` does, and return every run's records and metrics.

    `model`, `task` and `seeds` are run.py's --model, --task and --seeds (a name or a list); every other run flag is a
    keyword, spelled as its flag without the dashes: archive, results_dir, split, max_samples, concurrency, judge,
    judge_model, judge_endpoint, shots, prompt_style, resume, max_error_rate, endpoint, api_model,
    compare_reference, ... (TypeError names them all for a misspelt one). Values are checked by run.py's own parser,
    the same specs are built and the same sweep runs, so each run gets the same folder and files (responses.jsonl,
    config.json, metrics.json) and prints the same lines. A setting run.py would refuse raises
    acousticbench.core.errors.UserError with run.py's one line.

    Returns an Evaluation: `.runs`, one Run per model x task (x k) x seed with `model`, `cell`, `seed`, `run_dir`,
    `accuracy`, `n`, `metrics` (metrics.json as a pydantic object), `records` (responses.jsonl, sorted by id) and
    `error`; `.status` is run.py's exit status (0 fine, 1 something needs attention).

        >>> import acousticbench
        >>> result = acousticbench.evaluate(model="Oracle", task="rad", seeds=[42, 43], max_samples=20)
        >>> [(run.seed, run.accuracy) for run in result.runs]
    """
    from acousticbench import api  # the engine is imported on the first call, never by `import acousticbench`

    return api.evaluate(model, task, seeds, **settings)
