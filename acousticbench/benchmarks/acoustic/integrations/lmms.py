"""`run.py --export-lmms-tasks DIR`: lmms-eval task YAMLs (one per AcousticBench task, a group over them) and their
utils.py, for `lmms-eval --include_path DIR --tasks acousticbench_rad`. The YAMLs read the pack's own questions files
through the `json` builder of `datasets`; utils.py calls lmms_hooks.py, so acousticbench must be installed where
lmms-eval runs."""
from __future__ import annotations

import json
from pathlib import Path

from acousticbench.core.errors import UserError, writable_folder

UTILS = '''"""lmms-eval hooks for the AcousticBench pack at {archive} (written by run.py --export-lmms-tasks; the logic is
acousticbench.benchmarks.acoustic.integrations.lmms_hooks, so acousticbench must be installed beside lmms-eval)."""
from acousticbench.benchmarks.acoustic.integrations import lmms_hooks as _hooks

ARCHIVE = {archive_literal}


def process_docs(dataset):
    return _hooks.process_docs(ARCHIVE, dataset)


def doc_to_audio(doc):
    return _hooks.doc_to_audio(ARCHIVE, doc)


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    return _hooks.doc_to_text(doc, lmms_eval_specific_kwargs)


def process_results(doc, results):
    return _hooks.process_results(doc, results)
'''

# accuracy over the scored questions as run.py counts it; the other two say how much of the rest was no answer
METRICS = (("accuracy", "true"), ("refused", "false"), ("unparsed", "false"))


def task_yaml(code: str, questions: Path, manifest_sha256: str, title: str) -> str:
    """One task's YAML; paths are JSON strings, which YAML reads as double-quoted scalars."""
    metrics = "".join(f"  - metric: {name}\n    aggregation: mean\n    higher_is_better: {better}\n"
                      for name, better in METRICS)
    return (f"# AcousticBench {title}: the scored questions of {questions}\n"
            f"task: acousticbench_{code}\n"
            "dataset_path: json\n"
            f"dataset_kwargs:\n  data_files:\n    test: {json.dumps(str(questions))}\n"
            "test_split: test\n"
            "output_type: generate_until\n"
            "process_docs: !function utils.process_docs\n"
            "doc_to_visual: !function utils.doc_to_audio\n"
            "doc_to_text: !function utils.doc_to_text\n"
            "doc_to_target: answer\n"
            "process_results: !function utils.process_results\n"
            # greedy, and no stop string: lmms-eval's default stops at a blank line, before a reasoned answer
            "generation_kwargs:\n  max_new_tokens: 512\n  temperature: 0\n  do_sample: false\n  until: []\n"
            "lmms_eval_specific_kwargs:\n  default:\n    pre_prompt: \"\"\n    post_prompt: \"\"\n"
            f"metric_list:\n{metrics}"
            f"metadata:\n  version: 1.0\n  manifest_sha256: {json.dumps(manifest_sha256, allow_nan=False)}\n")


def group_yaml(codes: list[str]) -> str:
    tasks = "".join(f"  - acousticbench_{code}\n" for code in codes)
    return ("group: acousticbench\n"
            f"task:\n{tasks}"
            "aggregate_metric_list:\n  - metric: accuracy\n    aggregation: mean\n    weight_by_size: true\n"
            "metadata:\n  version: 1.0\n")


def refuse_unless_empty(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        what = "is a file" if not out.is_dir() else "is not empty"
        raise UserError(f"`acousticbench export-lmms-tasks {out}`: {out} {what}: name a new or empty folder "
                        "(nothing was written).")
    writable_folder(out, "the folder of `acousticbench export-lmms-tasks`", "acousticbench export-lmms-tasks")


def export_lmms_tasks(archive: Path, out: Path, codes: list[str]) -> list[Path]:
    """Check the pack as a run would (its questions and every clip against the manifest), then write the YAMLs and
    utils.py into `out`, which must be new or empty. Returns the files written."""
    from acousticbench.benchmarks.acoustic.benchmark import select_questions
    from acousticbench.benchmarks.acoustic.pack import manifest_sha256, questions_relpath
    from acousticbench.benchmarks.acoustic.spec import acoustic_spec
    from acousticbench.benchmarks.acoustic.tasks import TASKS

    if not codes:
        raise UserError("`acousticbench export-lmms-tasks` writes AcousticBench tasks: add one to --task (e.g. "
                        "--task rad, or all).")
    refuse_unless_empty(out)
    root = Path(archive).absolute()
    for code in codes:
        select_questions(acoustic_spec(model="lmms-eval", task=code, archive=root))
    digest = manifest_sha256(root)
    files = {f"acousticbench_{code}.yaml": task_yaml(code, root / questions_relpath(code), digest, TASKS[code].title)
             for code in codes}
    files["acousticbench.yaml"] = group_yaml(codes)
    files["utils.py"] = UTILS.format(archive=root, archive_literal=repr(str(root)))
    out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
    return [out / name for name in files]
