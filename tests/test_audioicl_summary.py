"""scripts/eval_str.py: the CSV of model, shots, task, accuracy, n from run folders and public result files."""
from __future__ import annotations

import csv
import importlib.util
import json
import subprocess
from pathlib import Path

import pytest

from harness_cli import script


def eval_str(*args: str) -> subprocess.CompletedProcess:
    return script("eval_str.py", *args, timeout=60)


def write_run(results: Path, model: str, task: str, k: int, style: str, answers: list[tuple[str | None, str]],
              stamp: str = "20260101-000000") -> Path:
    """A run folder as run.py writes it (config.json and responses.jsonl of EpisodeRecords)."""
    from acousticbench.benchmarks.audioicl.record import EpisodeRecord

    folder = results / f"{model}-{task}-k{k}-local-seed42-{stamp}"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"spec": {"benchmark": "AudioICL", "prompt_style": style}}))
    lines = [EpisodeRecord(id=f"AudioICL{i:05d}", task=task, shots=k, model=model, seed=42, prompt="", audio=[],
                           response=response, prediction=None, gt=gt, correct=False, status="answered",
                           scoring="strict").model_dump_json() for i, (response, gt) in enumerate(answers, 1)]
    (folder / "responses.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open() as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:]


def test_csv_from_run_folders_and_public_files(tmp_path):
    write_run(tmp_path / "results", "Oracle", "AudioCount", 3, "specific", [("7", "7"), ("2", "3"), (None, "1")])
    write_run(tmp_path / "results", "Oracle", "AudioCount", 3, "specific", [("9", "9")], stamp="20250101-000000")  # older
    public = tmp_path / "public" / "Qwen2-Audio-7B-Instruct_results_k5.jsonl"
    public.parent.mkdir()
    public.write_text("\n".join(json.dumps(r) for r in [
        {"id": "AudioICL02101", "task": "AudioRemap", "response": "The answer is EGE", "gt": "EGE"},
        {"id": "AudioICL02102", "task": "AudioRemap", "response": "EGE", "gt": "EGE"},
        {"id": "AudioICL01801", "task": "MorseCode", "response": "Prior.", "gt": "prior"},
    ]) + "\n")
    out = eval_str("--in", str(tmp_path), "--out", str(tmp_path / "s.csv"))
    assert out.returncode == 0, out.stderr
    header, rows = read_csv(tmp_path / "s.csv")
    assert header == ["model", "shots", "task", "accuracy", "n"]
    assert rows == [["Oracle", "3", "AudioCount", "0.333333", "3"],  # the latest run folder only; no answer is wrong
                    ["Qwen2-Audio-7B-Instruct", "5", "AudioRemap", "0.500000", "2"],
                    ["Qwen2-Audio-7B-Instruct", "5", "MorseCode", "1.000000", "1"]]


def test_filters_by_model_and_prompt_style_and_lenient_scoring(tmp_path):
    write_run(tmp_path, "A", "AudioLength", 1, "specific", [("seven", "7")])
    write_run(tmp_path, "A", "AudioLength", 2, "none", [("7", "7")])
    write_run(tmp_path, "B", "AudioLength", 1, "specific", [("7", "7")])
    assert eval_str("--in", str(tmp_path), "--out", str(tmp_path / "a.csv"), "--only-model", "A",
                    "--prompt-style", "specific", "--scoring", "lenient").returncode == 0
    assert read_csv(tmp_path / "a.csv")[1] == [["A", "1", "AudioLength", "1.000000", "1"]]


def test_nothing_to_read_is_a_one_line_error(tmp_path):
    out = eval_str("--in", str(tmp_path), "--out", str(tmp_path / "x.csv"))
    assert out.returncode == 2 and out.stderr.startswith("error: no AudioICL results under")
    bad = tmp_path / "M_results_k1.jsonl"
    bad.write_text('{"id": 1}\n')
    out = eval_str("--in", str(tmp_path), "--out", str(tmp_path / "x.csv"))
    assert out.returncode == 2 and f"{bad}:1:" in out.stderr


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="matplotlib (the [plot] extra) not installed")
def test_plot_of_accuracy_against_shots(tmp_path):
    for k in (1, 3, 5):
        write_run(tmp_path, "Oracle", "AudioCount", k, "specific", [("1", "1"), ("2", "3")])
    out = eval_str("--in", str(tmp_path), "--out", str(tmp_path / "s.csv"), "--plot", str(tmp_path / "p.png"))
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_sweeps_summary_has_the_harness_accuracy_and_the_columns_the_readme_promises(tmp_path):
    import re

    from acousticbench.benchmarks.audioicl.face import write_summary
    from acousticbench.benchmarks.audioicl.record import EpisodeRecord
    from harness_cli import REPO

    folder = write_run(tmp_path, "M", "AudioCount", 1, "specific", [("3", "3")])
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "spec": {**config["spec"], "scoring": "strict"}}))
    refused = EpisodeRecord(id="AudioICL00002", task="AudioCount", shots=1, model="M", seed=42, prompt="", audio=[],
                            response="I'm sorry, I cannot listen to <audio 3>.", prediction=None, gt="3", correct=False,
                            status="refused", scoring="strict")  # the public scorer reads a correct "3" in it
    right = json.loads((folder / "responses.jsonl").read_text())
    (folder / "responses.jsonl").write_text(json.dumps({**right, "correct": True}) + "\n"
                                            + refused.model_dump_json() + "\n")
    write_summary(tmp_path, "specific", "strict", None)
    header, rows = read_csv(tmp_path / "audioicl_summary.csv")
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    promised = [m.group(1) for page in pages for m in re.finditer(
        r"`results/audioicl_summary.csv`[^`]*?\s+columns\s+`([^`]+)`", page.read_text())]
    assert promised and all(columns.split(",") == header for columns in promised), promised
    assert dict(zip(header, rows[0])) == {"model": "M", "shots": "1", "task": "AudioCount", "accuracy": "0.500000",
                                          "accuracy_public": "1.000000", "n": "2", "prompt_style": "specific",
                                          "scoring": "strict", "control": "", "variant": ""}
