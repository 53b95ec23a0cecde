"""OpenAI API audio models through the real openai SDK against a local server (OPENAI_BASE_URL): the request,
the retired GPT-4o, missing keys, and no secret in any file or output."""
from __future__ import annotations

import json
import secrets

import pytest

from harness_cli import harness_env, run_cli, run_dirs
from servers import openai_server
from servers.fixtures import records
from servers.local import FaultPlan


def api_env(server, key: str = "sk-test-local-key", **extra: str) -> dict[str, str]:
    return harness_env(OPENAI_API_KEY=key, OPENAI_BASE_URL=f"{server.url}/v1", **extra)


def test_gpt_audio_mini_request_and_provenance(tiny_pack, tmp_path):
    with openai_server.serve() as server:
        out = run_cli("--judge", "rules", "--model", "GPT-Audio-Mini", "--task", "rad", "--max-samples", "2", "--archive", str(tiny_pack),
                      cwd=tmp_path, env=api_env(server))
    assert out.returncode == 0, out.stderr
    chats = [item for item in server.received if item.path == "/v1/chat/completions"]
    assert len(chats) == 2
    body = chats[0].body
    assert body["model"] == "gpt-audio-mini" and body["modalities"] == ["text"] and body["seed"] == 42
    assert "temperature" not in body  # the provider's default, recorded as such
    assert [p["type"] for p in body["messages"][0]["content"]] == ["input_audio", "input_audio", "text"]
    assert chats[0].headers["authorization"] == "Bearer sk-test-local-key"
    assert chats[0].headers["x-stainless-retry-count"] == "0"
    (run_dir,) = run_dirs(tmp_path / "results")
    assert run_dir.name.startswith("GPT-Audio-Mini-rad-openai-seed42-")
    backend = json.loads((run_dir / "config.json").read_text())["backend"]
    assert backend["endpoint"] == f"{server.url}/v1" and backend["served_model_id"] == "gpt-audio-mini"
    assert backend["temperature"] == "provider default"


def test_retired_gpt_4o_says_so_and_names_the_flag(tiny_pack, tmp_path):
    with openai_server.serve(missing_models=["gpt-4o-audio-preview"]) as server:
        out = run_cli("--judge", "rules", "--model", "GPT-4o", "--task", "rad", "--archive", str(tiny_pack), cwd=tmp_path,
                      env=api_env(server))
        assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
        assert "gpt-4o-audio-preview" in out.stderr and "retired by OpenAI on 2026-05-07" in out.stderr
        assert "--api-model gpt-audio-mini" in out.stderr and "Traceback" not in out.stderr
        assert not any(item.path == "/v1/chat/completions" for item in server.received)

        out = run_cli("--judge", "rules", "--model", "GPT-4o", "--api-model", "gpt-audio-mini", "--task", "rad", "--max-samples", "1",
                      "--archive", str(tiny_pack), cwd=tmp_path, env=api_env(server))
    assert out.returncode == 0, out.stderr
    assert server.received[-1].body["model"] == "gpt-audio-mini"


@pytest.mark.parametrize("model,variable", [
    ("GPT-4o", "OPENAI_API_KEY"), ("Gemini-3.1-Pro", "GEMINI_API_KEY"),
    ("Cascade-Transcribe-GPT-4o-mini", "OPENAI_API_KEY"), ("Qwen2.5-Omni-7B", "ACOUSTICBENCH_QWEN2_5_OMNI_7B_ENDPOINT"),
])
def test_missing_key_or_endpoint_fails_before_anything_is_sent(model, variable, tiny_pack, tmp_path):
    out = run_cli("--judge", "rules", "--model", model, "--task", "rad", "--archive", str(tiny_pack), cwd=tmp_path, env=harness_env())
    assert out.returncode == 2, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and variable in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "results").exists()


def test_no_secret_reaches_any_file_or_output(tiny_pack, tmp_path):
    key = f"sk-test-PLANTED-{secrets.token_hex(12)}"
    outputs = []
    with openai_server.serve() as good:
        outputs.append(run_cli("--judge", "rules", "--model", "GPT-Audio-Mini", "--task", "rad", "--archive", str(tiny_pack),
                               "--results-dir", "ok", cwd=tmp_path, env=api_env(good, key)))
    # an error path where the server repeats the key in every error message
    with openai_server.serve(FaultPlan(always="400"), echo_key=True) as bad:
        outputs.append(run_cli("--judge", "rules", "--model", "GPT-Audio-Mini", "--task", "rad", "--archive", str(tiny_pack),
                               "--results-dir", "bad", cwd=tmp_path, env=api_env(bad, key)))
        outputs.append(run_cli("--judge", "rules", "--model", "Voxtral-Mini-3B", "--task", "rad", "--archive", str(tiny_pack),
                               "--results-dir", "served", cwd=tmp_path, env=harness_env(
                                   ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT=bad.url,
                                   ACOUSTICBENCH_VOXTRAL_MINI_3B_API_KEY=key)))
    # the failing runs stop on their error budget (exit 1); none of their output may carry the key
    assert [o.returncode for o in outputs] == [0, 1, 1], [o.stderr for o in outputs]
    assert good.received[-1].headers["authorization"] == f"Bearer {key}"  # the key was really used
    errors = [r["error"] for r in records(run_dirs(tmp_path / "bad")[0])]
    assert all("HTTP 400" in e and "request key: ***" in e for e in errors)
    files = [p for p in tmp_path.rglob("*") if p.is_file() and "archive" not in p.parts]
    assert len(files) >= 9
    for path in files:
        assert key not in path.read_text(errors="replace"), path
    for out in outputs:
        assert key not in out.stdout and key not in out.stderr
