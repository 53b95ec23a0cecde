"""AudioICL's summary CSVs (eval-str and the sweep's audioicl_summary.csv), read one run at a time, come out byte for
byte as they did when every answer was loaded at once: over runs with controls, a demo-order variant, both prompt
styles and both scorings, older folders of a run, a run a crash cut and public result files."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_cli import script

RIGHT, WRONG, WORD = ("3", "3"), ("2", "3"), ("three", "3")  # WORD: right under lenient scoring only


def write_run(results: Path, model: str, task: str, k: int, seed: int, answers: list[tuple[str | None, str]],
              stamp: str = "20260101-000000", torn: bool = False, **spec: str) -> None:
    """A run folder as the harness writes it: config.json's spec (its control, prompt style, scoring, demo order)
    and responses.jsonl of EpisodeRecords, each with the harness's verdict (an exact answer)."""
    from acousticbench.benchmarks.audioicl.record import EpisodeRecord

    spec = {"benchmark": "AudioICL", "prompt_style": "specific", "scoring": "strict", **spec}
    tags = f"-control-{spec['control']}" if spec.get("control") else ""
    folder = results / f"{model}-{task}-k{k}{tags}-local-seed{seed}-{stamp}"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"spec": spec}))
    lines = [EpisodeRecord(id=f"AudioICL{i:05d}", task=task, shots=k, model=model, seed=seed, prompt="", audio=[],
                           response=response, prediction=None, gt=gt, correct=response == gt,
                           status="answered" if response is not None else "error",
                           scoring=spec["scoring"]).model_dump_json() for i, (response, gt) in enumerate(answers, 1)]
    (folder / "responses.jsonl").write_text("\n".join(lines) + "\n" + ('{"id": "AudioICL09999", "task' if torn else ""))


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("icl-stream")
    for seed in (42, 43):
        write_run(root, "Oracle", "AudioCount", 1, seed, [RIGHT, RIGHT, WORD])
        write_run(root, "Oracle", "AudioCount", 3, seed, [RIGHT, WRONG, (None, "3")])
        write_run(root, "Oracle", "AudioCount", 1, seed, [WRONG, WORD], control="silence")
        write_run(root, "Oracle", "AudioCount", 1, seed, [RIGHT, WORD, WORD], "20260101-000001",
                  demo_order="permuted")
        write_run(root, "Random", "AudioLength", 1, seed, [WRONG, WORD, RIGHT], prompt_style="general")
        write_run(root, "Random", "AudioLength", 1, seed, [WORD, WORD], "20260101-000001", prompt_style="general",
                  scoring="lenient")
    write_run(root, "Oracle", "AudioCount", 1, 42, [WRONG] * 5, stamp="20250101-000000")  # older: left out
    write_run(root / "nested", "Random", "MorseCode", 5, 42, [("prior", "prior"), WRONG])
    (root / "public").mkdir()
    (root / "public" / "Qwen2-Audio-7B-Instruct_results_k3.jsonl").write_text("\n".join(json.dumps(r) for r in [
        {"id": "AudioICL02101", "task": "AudioCount", "response": "three", "gt": "3"},
        {"id": "AudioICL02102", "task": "AudioCount", "response": "The answer is 3", "gt": "3"}]) + "\n")
    return root


def eval_str(results: Path, out: Path, *args: str) -> str:
    done = script("eval_str.py", "--in", str(results), "--out", str(out), *args, timeout=60)
    assert done.returncode == 0, done.stderr
    return out.read_bytes().decode()  # as written: the csv module ends its rows with \r\n


STRICT = """model,shots,task,accuracy,n
Oracle,1,AudioCount,0.666667,6
Oracle,3,AudioCount,0.333333,6
Oracle [control: silence],1,AudioCount,0.000000,4
Oracle [demo order: permuted],1,AudioCount,0.333333,6
Qwen2-Audio-7B-Instruct,3,AudioCount,0.500000,2
Random,1,AudioLength,0.200000,10
Random,5,MorseCode,0.500000,2
"""
LENIENT = """model,shots,task,accuracy,n
Oracle,1,AudioCount,1.000000,6
Oracle,3,AudioCount,0.333333,6
Oracle [control: silence],1,AudioCount,0.500000,4
Oracle [demo order: permuted],1,AudioCount,1.000000,6
Qwen2-Audio-7B-Instruct,3,AudioCount,1.000000,2
Random,1,AudioLength,0.800000,10
Random,5,MorseCode,0.500000,2
"""
SWEEP = """model,shots,task,accuracy,accuracy_public,n,prompt_style,scoring,control,variant
Oracle,1,AudioCount,0.666667,0.666667,6,specific,strict,,
Oracle,1,AudioCount,0.333333,0.333333,6,specific,strict,,demo order: permuted
Oracle,1,AudioCount,0.000000,0.000000,4,specific,strict,silence,
Oracle,3,AudioCount,0.333333,0.333333,6,specific,strict,,
Random,1,AudioLength,0.000000,1.000000,4,general,lenient,,
Random,1,AudioLength,0.333333,0.333333,6,general,strict,,
Random,5,MorseCode,0.500000,0.500000,{n},specific,strict,,
"""


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def test_eval_str_strict_and_lenient_over_runs_controls_variants_and_public_files(results, tmp_path):
    assert eval_str(results, tmp_path / "strict.csv") == crlf(STRICT)
    assert eval_str(results, tmp_path / "lenient.csv", "--scoring", "lenient") == crlf(LENIENT)


def test_eval_str_by_prompt_style_and_model(results, tmp_path):
    general = eval_str(results, tmp_path / "general.csv", "--prompt-style", "general")
    assert general == crlf("model,shots,task,accuracy,n\nQwen2-Audio-7B-Instruct,3,AudioCount,0.500000,2\n"
                           "Random,1,AudioLength,0.200000,10\n")  # the public files carry no prompt style: always read
    specific = eval_str(results, tmp_path / "specific.csv", "--prompt-style", "specific", "--scoring", "lenient")
    assert specific == crlf("".join(line + "\n" for line in LENIENT.splitlines() if "AudioLength" not in line))
    oracle = eval_str(results, tmp_path / "oracle.csv", "--only-model", "Oracle")
    assert oracle == crlf("".join(line + "\n" for line in STRICT.splitlines()[:5]))


def test_the_sweeps_summary_of_every_setting_and_a_run_a_crash_cut(results, tmp_path):
    import shutil

    from acousticbench.benchmarks.audioicl.face import write_summary

    folder = shutil.copytree(results, tmp_path / "results")
    for scoring in ("strict", "lenient"):  # the settings of the last sweep name its plot, never the CSV's rows
        assert write_summary(folder, "specific", scoring, None).read_bytes().decode() == crlf(SWEEP.format(n=2))
    write_run(folder / "torn", "Random", "MorseCode", 5, 44, [("prior", "prior"), WRONG], torn=True)
    torn = write_summary(folder, "specific", "strict", None)
    assert torn.read_bytes().decode() == crlf(SWEEP.format(n=4))  # its whole lines counted, the cut one left out
    done = script("eval_str.py", "--in", str(folder), "--out", str(tmp_path / "torn.csv"), timeout=60)
    assert done.returncode == 2 and "responses.jsonl:3 (item AudioICL09999) is damaged (cut short by a crash)" \
        in done.stderr and not (tmp_path / "torn.csv").exists()
