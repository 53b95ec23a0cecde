"""`run.py --export-lmms-tasks DIR`: the YAMLs load as lmms-eval loads them (its `!function` resolved from the YAML's
folder, the `json` builder of `datasets` on the pack), and utils.py gives lmms-eval's backends the audio as data and
scores replies with our strict rules. lmms-eval itself does not install here without a CUDA torch: its own loader is
exercised only where it is installed."""
from __future__ import annotations

import base64
import hashlib
import importlib.util
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from conftest import write_tiny_pack
from harness_cli import assert_one_line, run_cli

# what lmms-eval's TaskConfig and loader need of a generate_until task with its own hooks
REQUIRED = {"task", "dataset_path", "dataset_kwargs", "test_split", "output_type", "doc_to_visual", "doc_to_text",
            "doc_to_target", "process_results", "metric_list", "generation_kwargs"}


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("lmms")
    pack = write_tiny_pack(root / "archive")
    out = run_cli("--export-lmms-tasks", str(root / "tasks"), "--archive", str(pack), "--task", "rad", cwd=root)
    assert out.returncode == 0, out.stderr
    assert "lmms-eval --include_path" in out.stdout
    return pack, root / "tasks"


def load_yaml(path: Path) -> dict:
    """As lmms_eval.utils.load_yaml_config does: `!function utils.name` imports utils.py beside the YAML."""
    yaml = pytest.importorskip("yaml")

    def function(loader, node):
        module_name, name = loader.construct_scalar(node).rsplit(".", 1)
        spec = importlib.util.spec_from_file_location(module_name, path.parent / f"{module_name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return getattr(module, name)

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", function)
    return yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)


def test_a_folder_that_is_not_empty_is_refused_and_left_alone(exported, tmp_path):
    pack, tasks = exported
    before = {p.name: p.read_bytes() for p in tasks.iterdir()}
    out = run_cli("--export-lmms-tasks", str(tasks), "--archive", str(pack), "--task", "rad", cwd=tmp_path)
    assert_one_line(out, 2, "is not empty", "--export-lmms-tasks")
    assert {p.name: p.read_bytes() for p in tasks.iterdir()} == before


def test_the_yamls_have_what_lmms_eval_needs_and_point_at_the_pack(exported):
    pack, tasks = exported
    assert sorted(p.name for p in tasks.iterdir()) == ["acousticbench.yaml", "acousticbench_rad.yaml", "utils.py"]
    config = load_yaml(tasks / "acousticbench_rad.yaml")
    assert REQUIRED <= set(config) and config["task"] == "acousticbench_rad"
    assert config["dataset_path"] == "json" and config["output_type"] == "generate_until"
    assert Path(config["dataset_kwargs"]["data_files"][config["test_split"]]) == (pack / "rad" / "questions.jsonl").absolute()
    assert all(callable(config[k]) for k in ("process_docs", "doc_to_visual", "doc_to_text", "process_results"))
    assert [m["metric"] for m in config["metric_list"]] == ["accuracy", "refused", "unparsed"]
    assert all({"aggregation", "higher_is_better"} <= set(m) for m in config["metric_list"])
    assert load_yaml(tasks / "acousticbench.yaml")["task"] == ["acousticbench_rad"]


@pytest.mark.slow  # importing datasets is most of it
def test_utils_hands_over_the_clips_as_data_and_scores_with_our_rules(exported, tmp_path):
    datasets = pytest.importorskip("datasets")
    pack, tasks = exported
    config = load_yaml(tasks / "acousticbench_rad.yaml")
    dataset = datasets.load_dataset("json", data_files=config["dataset_kwargs"]["data_files"],
                                    cache_dir=str(tmp_path))[config["test_split"]]
    docs = config["process_docs"](dataset)
    assert len(dataset) == 11 and len(docs) == 8 and set(docs["kind"]) == {"scored"}  # diagnostics left out
    doc = docs[0]
    clips = config["doc_to_visual"](doc)
    assert len(clips) == 2
    for clip, rel in zip(clips, doc["audio"]):
        wav = (pack / rel).read_bytes()
        samples, rate = sf.read(pack / rel, dtype="float32")
        # qwen2_audio reads array + sampling_rate; the chat backends send `url` (a type "audio" part) as audio_url
        assert clip["sampling_rate"] == rate == 16000 and np.array_equal(clip["array"], samples)
        assert clip["type"] == "audio" and base64.b64decode(clip["url"].split(",", 1)[1]) == wav
    assert config["doc_to_text"](doc, {"pre_prompt": "", "post_prompt": ""}) == doc["prompt"]
    right, wrong = doc["answer"], "B" if doc["answer"] == "A" else "A"
    score = config["process_results"]
    assert score(doc, [right]) == {"accuracy": 1.0, "refused": 0.0, "unparsed": 0.0}
    assert score(doc, [f"Answer: {wrong}"])["accuracy"] == 0.0
    assert score(doc, ["I'm sorry, but I cannot listen to audio clips."]) == {"accuracy": 0.0, "refused": 1.0, "unparsed": 0.0}
    assert score(doc, ["It could be A or B."])["unparsed"] == 1.0 and score(doc, [""])["unparsed"] == 1.0


def test_a_changed_clip_is_refused_naming_the_question(tmp_path):
    from acousticbench.benchmarks.acoustic.integrations import lmms_hooks
    from acousticbench.core.errors import ArchiveError

    pack = write_tiny_pack(tmp_path / "archive")
    import json

    doc = json.loads((pack / "rad" / "questions.jsonl").read_text().splitlines()[0])
    (pack / doc["audio"][1]).write_bytes((pack / doc["audio"][0]).read_bytes())
    with pytest.raises(ArchiveError, match=f"{doc['id']}: {doc['audio'][1]} does not match its sha256"):
        lmms_hooks.doc_to_audio(str(pack), doc)
    assert hashlib.sha256((pack / doc["audio"][0]).read_bytes()).hexdigest() == doc["sha256"][doc["audio"][0]]


def test_lmms_evals_own_loader_reads_the_tasks(exported, tmp_path, monkeypatch):
    """Where lmms-eval is installed (not here: it pulls a CUDA torch), its TaskManager loads the group and its task."""
    pytest.importorskip("lmms_eval")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path))
    from lmms_eval.tasks import TaskManager, get_task_dict

    _, tasks = exported
    manager = TaskManager(include_path=str(tasks))
    assert {"acousticbench", "acousticbench_rad"} <= set(manager.all_tasks)
    (group,) = get_task_dict(["acousticbench"], manager).values()
    task = group["acousticbench_rad"]
    assert len(task.test_docs()) == 8
    doc = task.test_docs()[0]
    assert task.process_results(doc, [doc["answer"]])["accuracy"] == 1.0
