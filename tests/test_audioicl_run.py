"""The AudioICL run path as a user drives it: `run.py --model M --task AudioCount --shots 1,3`, run folders, summary."""
from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path

import pytest

from acousticbench.benchmarks.audioicl import TASKS
from acousticbench.benchmarks.audioicl.pack import pack_root
from audioicl_pack import reduced_pack
from harness_cli import run_cli, summary_rows

RECORD_FIELDS = {"id", "benchmark", "task", "shots", "model", "seed", "prompt", "audio", "response", "prediction", "gt",
                 "correct", "correct_public", "status", "error", "attempts", "latency_s", "usage", "scoring", "notes", "meta",
                 "finish_reason", "human", "sent", "audio_tokens", "demo_order"}


@pytest.fixture(scope="module")
def archive() -> Path:
    return reduced_pack()


def test_oracle_on_all_nine_tasks_writes_a_folder_and_a_summary_row_per_task_and_k(archive, tmp_path):
    out = run_cli("--model", "Oracle", "--task", "audioicl", "--shots", "1,3", "--max-samples", "3",
                  "--archive", str(archive), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    folders = sorted(p.name for p in (tmp_path / "results").iterdir() if p.is_dir())
    assert len(folders) == 18 and folders[0].startswith("Oracle-AnomalyDetect-k1-local-seed42-")
    rows = summary_rows(tmp_path / "results")
    assert {(r["task"], r["shots"]) for r in rows} == {(t, k) for t in TASKS for k in ("1", "3")}
    assert all(r["model"] == "Oracle" and r["n"] == "3" and len(r["accuracy"].split(".")[1]) == 6 for r in rows)
    run_dir = next((tmp_path / "results").glob("Oracle-AudioRemap-k3-*"))
    records = [json.loads(line) for line in (run_dir / "responses.jsonl").read_text().splitlines()]
    assert set(records[0]) == RECORD_FIELDS and [r["id"] for r in records] == ["AudioICL02101", "AudioICL02102", "AudioICL02103"]
    assert all(r["correct"] and r["status"] == "answered" and r["prediction"] == r["gt"] for r in records)
    assert records[0]["audio"][0].startswith("data/") and records[0]["prompt"].count("<audio") == len(records[0]["audio"]) == 12
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert (metrics["n"], metrics["accuracy"], metrics["scoring"], metrics["prompt_style"]) == (3, 1.0, "strict", "specific")
    config = json.loads((run_dir / "config.json").read_text())
    assert config["spec"]["shots"] == 3 and config["audioicl"]["pack_manifest_sha256"]
    assert "Oracle on AudioRemap k=3 (seed 42): accuracy 1.000" in out.stdout


def test_shots_default_to_one_to_five_and_scoring_is_recorded(archive, tmp_path):
    out = run_cli("--model", "Oracle", "--task", "AudioLength", "--max-samples", "2", "--scoring", "lenient",
                  "--prompt-style", "general", "--archive", str(archive), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert sorted(r["shots"] for r in summary_rows(tmp_path / "results")) == ["1", "2", "3", "4", "5"]
    metrics = json.loads(next((tmp_path / "results").glob("*-k2-*/metrics.json")).read_text())
    assert metrics["scoring"] == "lenient" and metrics["prompt_style"] == "general"
    assert "(general prompts, lenient scoring)" in out.stdout


def test_resume_keeps_finished_episodes_and_refuses_other_settings(archive, tmp_path):
    args = ("--model", "Oracle", "--task", "AudioCount", "--shots", "2", "--max-samples", "4", "--archive", str(archive))
    assert run_cli(*args, cwd=tmp_path).returncode == 0
    (run_dir,) = [p for p in (tmp_path / "results").iterdir() if p.is_dir()]
    full = (run_dir / "responses.jsonl").read_text().splitlines()
    (run_dir / "responses.jsonl").write_text(full[0] + "\n" + full[1][:40])  # a kill mid-write
    out = run_cli(*args, "--resume", cwd=tmp_path)
    assert out.returncode == 0 and "1 kept from the earlier run" in out.stdout, out.stderr
    assert len((run_dir / "responses.jsonl").read_text().splitlines()) == 4
    out = run_cli(*args, "--resume", "--prompt-style", "none", cwd=tmp_path)
    assert out.returncode == 2 and "prompt_style 'specific' -> 'none'" in out.stderr


def test_dry_run_renders_prompts_and_writes_nothing(archive, tmp_path):
    alphabet = pack_root(archive) / "data" / "MorseCode" / "alphabet"
    out = run_cli("--model", "Oracle", "--task", "MorseCode", "--shots", "1", "--max-samples", "1", "--dry-run",
                  "--morse-alphabet", str(alphabet), "--archive", str(archive), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "[Letter A] <audio 1> Label: A" in out.stdout and "[Query Audio] <audio 28> Label:" in out.stdout
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("args, message", [
    (("--task", "rad", "--shots", "1"), "--shots applies to AudioICL tasks"),
    (("--task", "AudioCount", "--shots", "0,9"), "--shots takes values from 1 to 5"),
    (("--task", "AudioCont",), "Did you mean AudioCount"),
    (("--task", "AudioCount", "--icl-meta", "nowhere"), "no AudioICL metadata at nowhere/meta_k1.jsonl"),
    (("--task", "MorseCode", "--morse-alphabet", "nowhere"), "--morse-alphabet nowhere lacks A.wav"),
])
def test_user_errors_are_one_line_and_exit_2(archive, tmp_path, args, message):
    out = run_cli("--model", "Oracle", *args, "--archive", str(archive), cwd=tmp_path)
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr


def test_verify_checksums_covers_the_audioicl_pack(archive, tmp_path):
    out = run_cli("--verify-checksums", "--task", "audioicl", "--archive", str(archive), cwd=tmp_path)
    assert out.returncode == 0 and "AudioICL episodes passed checksum verification" in out.stdout
    out = run_cli("--verify-checksums", "--archive", str(archive), cwd=tmp_path)  # --task all: every pack present
    assert out.returncode == 0 and "AudioICL episodes passed" in out.stdout
    out = run_cli("--build-audioicl", "--archive", str(archive), cwd=tmp_path)
    assert out.returncode == 2 and "already exists" in out.stderr


def test_engine_retries_and_backend_notes_reach_the_record(archive, tmp_path, monkeypatch):
    from acousticbench.benchmarks.audioicl.spec import icl_spec
    from acousticbench.engine.executor import progress_bar
    from acousticbench.run.cells import prepare_cells
    from acousticbench.run.sweep import _model_session
    from acousticbench.core.errors import BackendError
    from acousticbench.core.records import Reply
    from acousticbench.models.base import BackendBase

    monkeypatch.setenv("ACOUSTICBENCH_RETRY_BASE_DELAY", "0")

    class Flaky(BackendBase):
        backend_name, default_concurrency, sent = "fake", 2, []

        async def answer(self, prompt):
            self.sent.append(prompt)
            if len(self.sent) == 1:
                raise BackendError("rate limited", retryable=True)
            return Reply(text="The answer is 3", notes=["9 clips merged into one"])

    spec = icl_spec(model="Fake", task="AudioCount", shots=2, max_samples=2, archive=archive, results_dir=tmp_path, pad=True)
    results = []
    asyncio.run(_model_session(prepare_cells([spec]), Flaky("Fake"), {}, progress_bar(2, False), results.append))
    (result,) = results
    assert sorted(r.attempts for r in result.records) == [1, 2]
    assert all(r.notes[-1] == "9 clips merged into one" and "--icl-pad" in r.notes[0] for r in result.records)
    assert all(p.parts and p.parts[1].kind == "audio" for p in Flaky.sent)


@pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in ("torch", "transformers", "fastapi", "uvicorn")),
                    reason="Tiny-Qwen2-Audio needs torch and the [hf-server] extra")
@pytest.mark.slow  # starts our transformers server with Tiny-Qwen2-Audio
def test_tiny_qwen2_audio_runs_end_to_end(archive, tmp_path):
    out = run_cli("--model", "Tiny-Qwen2-Audio", "--task", "AudioCount", "--shots", "1,3", "--max-samples", "5",
                  "--archive", str(archive), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = summary_rows(tmp_path / "results")
    assert [(r["model"], r["shots"], r["n"]) for r in rows] == [("Tiny-Qwen2-Audio", "1", "5"), ("Tiny-Qwen2-Audio", "3", "5")]
    records = [json.loads(line) for p in (tmp_path / "results").glob("Tiny-Qwen2-Audio-AudioCount-k3-*/responses.jsonl")
               for line in p.read_text().splitlines()]
    # random weights often talk to the token limit: those replies are truncated, marked by the server's finish_reason
    assert len(records) == 5 and all(r["response"] is not None for r in records)
    assert all(r["status"] == ("truncated" if r["finish_reason"] == "length" else "answered") for r in records)
