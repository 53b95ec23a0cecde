"""What --resume may continue: the latest folder of this very run, known by its config.json (the same model, task,
seed and benchmark, however its folder is named), and the records it keeps, each checked to be an answer of this run.
A folder that cannot be continued without losing or mixing answers is one line naming the file, and nothing changes."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from acousticbench.core.environment import same_name
from acousticbench.core.errors import UserError
from acousticbench.run.results import CONFIG, RESPONSES, numbered_records

UNCHANGED = "nothing was changed"


def belongs_to(spec: Any) -> Any:
    """A test of a config.json: is it a run of `spec` (model, task, seed, benchmark, variant and control)?"""
    wanted = {"benchmark": spec.benchmark, "task": spec.task, "seed": spec.seed, **spec.reference_fields()}

    def test(config: dict) -> bool:
        recorded = config.get("spec")
        if not isinstance(recorded, dict):
            return True  # too old or damaged to tell: resuming it is refused by name, never silently skipped
        model = recorded.get("model", spec.model)  # a key an older harness did not record is no difference
        return (isinstance(model, str) and same_name(model, spec.model) and recorded.get("control") == spec.control
                and all(recorded[key] == value for key, value in wanted.items() if key in recorded))

    return test


def unknown_settings(run_dir: Path) -> None:
    """A run folder with answers but no config.json: what they were asked with is unknown, so none is continued."""
    responses = run_dir / RESPONSES
    if not (run_dir / CONFIG).exists() and responses.is_file() and responses.stat().st_size:
        raise UserError(f"--resume: {run_dir / CONFIG} is missing, so the settings of the answers in {RESPONSES} are "
                        "unknown: restore config.json from a copy to continue it, or rerun without --resume to start a "
                        f"new run beside it; {UNCHANGED}.")


def kept_records(run_dir: Path, spec: Any, bench: Any, wanted: set[str], owns: Any = None) -> list:
    """The records --resume keeps: one per question with a final status. A line of another run (model, task, seed,
    benchmark), of a question this run does not ask, or two different answers to one question are refused by line
    number, before anything is written; an error record is asked again, and a copy of an answer is kept once. `owns`:
    the question ids a run that makes its items as it goes (adaptive) asks beyond `wanted`."""
    path = run_dir / RESPONSES
    final: dict[str, tuple[int, Any]] = {}
    for lineno, record in numbered_records(path, bench.record_type):
        where = f"--resume: {path}:{lineno}"
        if not (same_name(record.model, spec.model) and (record.task, record.seed, record.benchmark)
                == (spec.task, spec.seed, bench.name)):
            raise UserError(f"{where} is an answer of {record.model} on {record.task} (seed {record.seed}), not of "
                            f"{spec.label()}: move that line to its own run's file, or restore {RESPONSES} from a "
                            f"copy; {UNCHANGED}.")
        if record.id not in wanted and not (owns is not None and owns(record.id)):
            raise UserError(f"{where} answers {record.id}, which this run does not ask (another pack or split): move "
                            f"that line out, or restore {RESPONSES} from a copy; {UNCHANGED}.")
        if record.status not in bench.final_statuses:
            continue
        earlier = final.get(record.id)
        if earlier is not None and earlier[1] != record:
            raise UserError(f"{where} and line {earlier[0]} are two different answers to {record.id}: delete the one "
                            f"that should not count, then resume; {UNCHANGED}.")
        final.setdefault(record.id, (lineno, record))
    return [record for _, record in final.values()]
