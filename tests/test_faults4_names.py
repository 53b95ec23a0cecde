"""Model names on disk: one model, one folder, whatever its spaces, slashes, accents, Unicode form or length. Two names
that read alike as folder names never share runs (--resume of one never takes over the other's), and a name too long
for a folder name is shortened safely, never a refusal to write."""
from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path

import pytest

from acousticbench import cli
from conftest import write_tiny_pack
from harness_cli import REPO, harness_env, run_cli, run_dirs
from servers.fixtures import fast_retries, records  # noqa: F401 (a fixture)
from servers.openai_server import serve

PLUGIN = """
import sys
sys.path.insert(0, {examples!r})
import acousticbench
from toy_backend import FirstAnswer
for name in {names!r}:
    acousticbench.register_model(name, FirstAnswer, description="answers the first option")
"""


def with_models(tmp_path: Path, *names: str) -> dict[str, str]:
    """The environment of a harness run whose plugin registers `names` (the guide's toy backend)."""
    (tmp_path / "name_plugin.py").write_text(PLUGIN.format(examples=str(REPO / "docs" / "examples"),
                                                           names=list(names)))
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    return harness_env(ACOUSTICBENCH_PLUGINS="name_plugin", PYTHONPATH=path)


def run(tmp_path: Path, env: dict, model: str, *flags: str):
    archive = tmp_path / "archive"
    if not archive.is_dir():
        write_tiny_pack(archive)
    return run_cli("--model", model, "--task", "rad", "--judge", "rules", "--archive", str(archive), *flags,
                   cwd=tmp_path, env=env)


@pytest.mark.parametrize("first, second", [("my_model", "my model"), ("team_echo", "team/echo"),
                                           ("_cho", "\u00e9cho")], ids=["space", "slash", "accent"])
def test_two_names_that_read_alike_on_disk_never_share_a_run(tmp_path, first, second):
    env = with_models(tmp_path, first, second)
    out = run(tmp_path, env, first)
    assert out.returncode == 0, out.stderr
    (theirs,) = run_dirs(tmp_path / "results")
    before = {p.name: p.read_bytes() for p in theirs.iterdir()}
    out = run(tmp_path, env, second, "--resume")
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert "kept from the earlier run" not in out.stdout and "no earlier run" in out.stderr, out.stdout + out.stderr
    ours = next(p for p in run_dirs(tmp_path / "results") if p != theirs)
    assert {r["model"] for r in records(ours)} == {second} and len(records(ours)) == 11
    assert {p.name: p.read_bytes() for p in theirs.iterdir()} == before  # the other model's run as it was


def test_a_name_typed_in_another_unicode_form_is_the_same_model_and_resumes_its_run(tmp_path):
    composed = unicodedata.normalize("NFC", "Caf\u00e9-Echo")
    env = with_models(tmp_path, composed)
    out = run(tmp_path, env, composed, "--max-samples", "4")
    assert out.returncode == 0, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    (run_dir / "metrics.json").unlink()
    out = run(tmp_path, env, unicodedata.normalize("NFD", composed), "--max-samples", "4", "--resume")
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert "kept from the earlier run" in out.stdout and run_dirs(tmp_path / "results") == [run_dir], out.stdout


def test_a_230_character_model_name_gets_a_short_folder_and_resumes(tmp_path):
    name = "Echo-" + "x" * 225
    env = with_models(tmp_path, name)
    out = run(tmp_path, env, name)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    assert len(run_dir.name.encode()) < 200 and run_dir.name.startswith("Echo-xxx")
    assert json.loads((run_dir / "config.json").read_text())["spec"]["model"] == name
    (run_dir / "metrics.json").unlink()
    out = run(tmp_path, env, name, "--resume")
    assert out.returncode == 0 and "11 kept from the earlier run" in out.stdout, out.stdout + out.stderr


def test_a_230_character_lora_adapter_runs_into_a_short_folder(tmp_path, fast_retries, capsys):
    adapter = "ft_" + "a" * 227
    archive = write_tiny_pack(tmp_path / "archive")
    folder = archive / "lora" / adapter
    folder.mkdir(parents=True)
    (folder / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 8}))
    with serve(model_ids=[f"moonshotai/Kimi-Audio-7B-Instruct+lora-{adapter}"]) as server:
        fast_retries.setenv(f"ACOUSTICBENCH_KIMI_LORA_{adapter.upper()}_ENDPOINT", server.url)
        code = cli.main(["--model", f"Kimi-Audio-7B-Instruct+{adapter}", "--task", "rad", "--archive", str(archive),
                         "--judge", "rules", "--results-dir", str(tmp_path / "results")])
    err = capsys.readouterr().err
    assert code == 0 and "choose another" not in err, err
    (run_dir,) = run_dirs(tmp_path / "results")
    assert len(run_dir.name.encode()) < 200 and len(records(run_dir)) == 11


def test_the_plan_measures_a_models_latency_on_its_own_runs_only(tmp_path):
    env = with_models(tmp_path, "Echo", "Echo-2")
    assert run(tmp_path, env, "Echo-2").returncode == 0
    (other,) = run_dirs(tmp_path / "results")
    out = run(tmp_path, env, "Echo", "--dry-run")
    assert out.returncode == 0, out.stderr
    assert other.name not in out.stdout + out.stderr, out.stdout


def test_resume_never_takes_over_a_folder_an_older_harness_gave_another_model_of_a_like_name(tmp_path):
    env = with_models(tmp_path, "my_model", "my model")
    assert run(tmp_path, env, "my_model").returncode == 0
    (theirs,) = run_dirs(tmp_path / "results")
    config = json.loads((theirs / "config.json").read_text())  # as an older harness filed "my model" under my_model-
    config["spec"]["model"] = "my model"
    (theirs / "config.json").write_text(json.dumps(config))
    lines = [json.dumps({**r, "model": "my model"}) + "\n" for r in records(theirs)]
    (theirs / "responses.jsonl").write_text("".join(lines))
    before = {p.name: p.read_bytes() for p in theirs.iterdir() if p.name != ".lock"}
    out = run(tmp_path, env, "my_model", "--resume")
    assert out.returncode == 0 and "kept from the earlier run" not in out.stdout, out.stdout + out.stderr
    ours = next(p for p in run_dirs(tmp_path / "results") if p != theirs)
    assert {r["model"] for r in records(ours)} == {"my_model"} and len(records(ours)) == 11
    assert {p.name: p.read_bytes() for p in theirs.iterdir() if p.name != ".lock"} == before


def test_promoting_two_models_whose_names_read_alike_keeps_both_references(tmp_path):
    env = with_models(tmp_path, "my_model", "my model")
    for model in ("my_model", "my model"):
        assert run(tmp_path, env, model).returncode == 0
    for run_dir in run_dirs(tmp_path / "results"):
        out = run_cli("--promote-reference", str(run_dir), "--references", "refs", cwd=tmp_path, env=env)
        assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    summaries = [json.loads(p.read_text()) for p in (tmp_path / "refs").rglob("summary.json")]
    assert sorted(s["model"] for s in summaries) == ["my model", "my_model"], summaries


WINDOWS_DEVICES = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(10)), *(f"LPT{i}" for i in range(10))}


@pytest.mark.parametrize("name", ["..", ".", ".hidden", "name.", "CON", "nul.txt"])
def test_a_name_a_file_system_reads_otherwise_runs_and_promotes_into_a_folder_of_its_own(name, tmp_path):
    """'..' promoted its run into the references' parent, '.' into the references' own root; a hidden name hid its
    runs; a final dot (which Windows drops) or a device name (CON) made a reference folder a clone on Windows cannot
    hold. Each is a folder of its own inside the references, under a name read as what it is everywhere."""
    env = with_models(tmp_path, name)
    out = run(tmp_path, env, name)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    assert not run_dir.name.startswith(".")
    out = run_cli("--promote-reference", str(run_dir), "--references", "refs/inner", cwd=tmp_path, env=env)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    (summary,) = (tmp_path / "refs").rglob("summary.json")
    folder = summary.relative_to(tmp_path / "refs" / "inner").parts[0]  # refs/inner/<model>/rad/summary.json
    assert summary.parent.parent.parent == tmp_path / "refs" / "inner" and summary.parent.name == "rad"
    assert not folder.startswith(".") and not folder.endswith(".")
    assert folder.split(".")[0].upper() not in WINDOWS_DEVICES
    assert json.loads(summary.read_text())["model"] == name
