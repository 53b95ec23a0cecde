"""Kimi-Audio LoRA finetunes as models of their own: a fake adapter folder under <archive>/lora/ is listed, runs
against our local OpenAI-compatible server like any served model, and --compare-reference off the eval split warns."""
from __future__ import annotations

import json

import pytest

from acousticbench import cli
from acousticbench.run.catalog import get_model
from servers.fixtures import fast_retries  # noqa: F401 (a fixture)
from harness_cli import run_dirs
from servers.openai_server import serve

MODEL = "Kimi-Audio-7B-Instruct+rad_ft"


@pytest.fixture
def archive(tiny_pack):
    """The tiny pack with two adapter folders, as PEFT's save_pretrained writes them (config and weights)."""
    for name in ("rad_ft", "bad-name"):
        folder = tiny_pack / "lora" / name
        folder.mkdir(parents=True)
        (folder / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 8}))
        (folder / "adapter_model.safetensors").write_bytes(b"weights")
    return tiny_pack


def test_every_adapter_folder_is_listed_with_its_serve_name_and_endpoint_variable(archive, capsys):
    assert cli.main(["--list-models", "--archive", str(archive)]) == 0
    out = capsys.readouterr().out
    line = next(row for row in out.splitlines() if row.startswith(MODEL + " "))
    assert "open-weight" in line and "lora/rad_ft/" in line
    assert ("needs: ACOUSTICBENCH_KIMI_LORA_RAD_FT_ENDPOINT, printed by ./scripts/docker_serve.sh kimi_lora_rad_ft "
            "(GPU, 40 GB)") in out
    assert f"skipped {archive / 'lora' / 'bad-name'}: rename it to letters, digits and _" in out
    assert cli.main(["--list-models", "--archive", str(archive.parent / "elsewhere")]) == 0
    assert "+rad_ft" not in capsys.readouterr().out  # no archive there: no finetunes, the rest as always


def test_a_finetune_runs_against_a_local_server_like_any_served_model(archive, tmp_path, fast_retries, capsys):
    with serve(model_ids=["moonshotai/Kimi-Audio-7B-Instruct+lora-rad_ft"]) as server:
        fast_retries.setenv("ACOUSTICBENCH_KIMI_LORA_RAD_FT_ENDPOINT", server.url)
        code = cli.main(["--model", MODEL, "--task", "rad", "--archive", str(archive), "--judge", "rules",
                         "--results-dir", str(tmp_path / "results")])
        asked = len(server.received)
    assert code == 0, capsys.readouterr().err
    (run_dir,) = run_dirs(tmp_path / "results")
    assert run_dir.name.startswith("Kimi-Audio-7B-Instruct+rad_ft-rad-served-seed42-")
    config = json.loads((run_dir / "config.json").read_text())
    assert config["backend"]["serve_name"] == "kimi_lora_rad_ft"
    assert config["backend"]["endpoint_variable"] == "ACOUSTICBENCH_KIMI_LORA_RAD_FT_ENDPOINT"
    assert config["backend"]["served_model_id"] == "moonshotai/Kimi-Audio-7B-Instruct+lora-rad_ft"
    records = [json.loads(line) for line in (run_dir / "responses.jsonl").read_text().splitlines()]
    assert asked == len(records) == 11 and {r["status"] for r in records} == {"answered"}


def test_a_missing_adapter_is_one_line_naming_the_folder_and_the_ones_there(archive, tmp_path, fast_retries, capsys):
    code = cli.main(["--model", "Kimi-Audio-7B-Instruct+other", "--task", "rad", "--archive", str(archive),
                     "--results-dir", str(tmp_path / "results")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert f"no LoRA adapter {archive / 'lora' / 'other'}/adapter_config.json" in err and "found: rad_ft" in err
    assert not (tmp_path / "results").exists()


def test_compare_reference_off_the_eval_split_warns_that_the_references_were_made_on_it(archive, tmp_path,
                                                                                         fast_retries, capsys):
    results, references = tmp_path / "results", tmp_path / "references"
    common = ["--model", MODEL, "--task", "rad", "--archive", str(archive), "--judge", "rules",
              "--results-dir", str(results)]
    compare = ["--compare-reference", "--references", str(references)]  # --references goes with it alone
    with serve() as server:
        fast_retries.setenv("ACOUSTICBENCH_KIMI_LORA_RAD_FT_ENDPOINT", server.url)
        assert cli.main([*common, "--split", "eval"]) == 0
        (first,) = run_dirs(results)
        assert cli.main(["--promote-reference", str(first), "--references", str(references)]) == 0
        capsys.readouterr()
        assert cli.main([*common, "--split", "eval", *compare]) == 0
        assert "warning" not in capsys.readouterr().err
        cli.main([*common, *compare])  # --split all: questions outside eval have no reference
    err = capsys.readouterr().err
    assert (f"warning: the references of {MODEL} were made with --split eval; this run uses --split all" in err
            and "rerun with --split eval" in err)


def test_the_registry_knows_a_finetune_by_name_without_reading_the_archive():
    entry = get_model(MODEL)
    assert entry.family == "open-weight" and entry.reference_options == (("split", "eval"),)
    assert entry.settings["serve_name"] == "kimi_lora_rad_ft" and entry.settings["temperature"] == 0.0
    assert entry.settings["limits"] == get_model("Kimi-Audio-7B-Instruct").settings["limits"]
