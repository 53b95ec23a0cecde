"""An adaptive run on the one run path: its Prepared (no fixed items, its tracks as the source, config.json's
`adaptive` section stating the method, the stop rules and the prior) and its summary line."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from acousticbench.benchmarks import Prepared
from acousticbench.benchmarks.acoustic.adaptive.folder import BENCHMARK, PACK
from acousticbench.benchmarks.acoustic.adaptive.stimuli import CATCH_AT, CATCH_EVERY, difference, grid_of
from acousticbench.benchmarks.acoustic.adaptive.threshold import threshold_text
from acousticbench.benchmarks.acoustic.adaptive.tracks import MIN_TRIALS_TO_STOP, AdaptiveSource
from acousticbench.benchmarks.acoustic.stimuli import ATTRIBUTES
from acousticbench.benchmarks.acoustic.tasks import TASKS
from acousticbench.core import provenance


def adaptive_config(spec: Any) -> dict[str, Any]:
    """config.json's `adaptive`: what tools need to keep these runs apart from the pack's (`variant`) and to know how
    the trials were placed."""
    options, grid, module = spec.options, grid_of(spec.task), ATTRIBUTES[spec.task]
    return {"variant": f"adaptive-{options.adaptive}", "method": options.adaptive, "tracks": options.adaptive_tracks,
            "trials_per_track": options.adaptive_trials, "stop_width": options.adaptive_width,
            "stop_width_after": MIN_TRIALS_TO_STOP, "unit": module.UNIT,
            "rounds": ("trial k of every track is placed from the answers to every track's trials before k"
                       if options.adaptive == "psi" else "each track from its own answers"),
            "differences": {"lowest": difference(spec.task, grid.stimuli[0]),
                            "highest": difference(spec.task, grid.stimuli[-1]), "count": len(grid.stimuli),
                            "spacing": "log" + (" (count ratios of 2 to 12 events)" if spec.task == "cnt" else "")},
            "catch": {"every": CATCH_EVERY, "at": CATCH_AT, "difference": module.CATCH_STEP},
            "prior": grid.prior(), "pack": PACK}


def prepare_adaptive(spec: Any, make_prompt: Callable[..., Any]) -> Prepared:
    """No questions up front: the tracks make them into the run folder's pack/ as they go, each asked with the
    benchmark's `make_prompt`."""
    config = {"adaptive": adaptive_config(spec),
              "archive": {"path": PACK, "absolute_path": None, "manifest_sha256": "", "benchmark": BENCHMARK,
                          "note": "made by the run, in its folder"},
              "n_questions": None, "prompt_template_sha256": provenance.prompt_hash([TASKS[spec.task].prompt()])}
    return Prepared([], (), config, source=AdaptiveSource(spec, make_prompt))


def summary_line(found: Any) -> str:
    """'adaptive psi threshold 0.42 semitones [0.31, 0.57] over 220 trials; 11 catch trials, 11 right'."""
    data = found if isinstance(found, dict) else found.model_dump()
    catch = f"{data['catch_trials']} catch trials, {data['catch_correct']} right"
    if not data["reached"]:
        return f"adaptive {data['method']}: threshold {data['note']} ({data['trials']} trials; {catch})"
    width = (f" (--adaptive-width met after {data['requests']} of {data['planned']} requests)"
             if data.get("stopped_by") == "width" else "")
    return f"adaptive {data['method']} threshold {threshold_text(data)} over {data['trials']} trials{width}; {catch}"
