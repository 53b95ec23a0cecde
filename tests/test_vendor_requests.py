"""What each open-weight model is sent, over real HTTP: the vendor's turn order and system prompt, greedy as vLLM
means it, and logprobs only when --judge logprobs asks for them."""
from __future__ import annotations

import pytest

from acousticbench.models.open_weight import QWEN_OMNI_SYSTEM
from conftest import write_tiny_pack
from servers import openai_server
from harness_cli import harness_env, run_cli, run_dirs
from servers.fixtures import records
from servers.local import FaultPlan


def sent(model: str, serve_name: str, tmp_path, *args: str, code: int = 0) -> dict:
    """The body of the first request `model` sent for a one-question run (which exits with `code`)."""
    archive = write_tiny_pack(tmp_path / "archive", "rad", 2)
    with openai_server.serve(FaultPlan()) as server:
        out = run_cli("--model", model, "--task", "rad", "--max-samples", "1", "--judge", "rules", *args,
                      "--archive", str(archive), cwd=tmp_path,
                      env=harness_env(**{f"ACOUSTICBENCH_{serve_name.upper()}_ENDPOINT": server.url}))
    assert out.returncode == code, out.stderr
    return server.received[0].body


def kinds(body: dict) -> list[str]:
    return [part["type"] for part in body["messages"][-1]["content"]]


@pytest.mark.parametrize("model,serve_name", [("Kimi-Audio-7B-Instruct", "kimi_audio_7b_instruct"),
                                              ("MiniCPM-o-4.5", "minicpm_o_4_5")])
def test_kimi_audio_and_minicpm_o_get_the_instruction_before_the_clips(model, serve_name, tmp_path):
    body = sent(model, serve_name, tmp_path)
    assert kinds(body)[0] == "text" and "input_audio" in kinds(body)[1:]
    assert "top_k" not in body  # our transformers server is greedy whatever a request says


def test_qwen2_audio_gets_the_clips_first_and_every_greedy_sampling_parameter(tmp_path):
    body = sent("Qwen2-Audio-7B-Instruct", "qwen2_audio_7b_instruct", tmp_path)
    assert kinds(body) == ["input_audio", "input_audio", "text"] and body["messages"][0]["role"] == "user"
    # vLLM fills what a request leaves unset from the checkpoint's generation_config: nothing is left unset
    assert {k: body[k] for k in ("temperature", "top_p", "top_k", "min_p", "repetition_penalty", "presence_penalty",
                                 "frequency_penalty")} == {"temperature": 0.0, "top_p": 1.0, "top_k": 0, "min_p": 0.0,
                                                           "repetition_penalty": 1.0, "presence_penalty": 0.0,
                                                           "frequency_penalty": 0.0}
    assert "logprobs" not in body


def test_qwen2_5_omni_gets_the_vendors_system_prompt(tmp_path):
    body = sent("Qwen2.5-Omni-7B", "qwen2_5_omni_7b", tmp_path)
    assert body["messages"][0] == {"role": "system", "content": QWEN_OMNI_SYSTEM}
    assert body["messages"][0]["content"].startswith("You are Qwen, a virtual human developed by the Qwen Team")


def test_judge_logprobs_asks_for_the_first_tokens_alternatives_and_a_reply_without_them_is_an_error(tmp_path):
    body = sent("Voxtral-Mini-3B", "voxtral_mini_3b", tmp_path, "--judge", "logprobs", code=1)
    assert body["logprobs"] is True and body["top_logprobs"] == 20
    (record,) = records(run_dirs(tmp_path / "results")[0])
    assert record["status"] == "error" and record["chosen"] is None and record["response"]  # never a guess
    assert record["error"] == ("judge failed: the server returned no logprobs for the first token "
                               "(--judge logprobs needs them)")


def test_judge_logprobs_on_a_model_without_logprobs_is_one_line_naming_the_alternatives(tmp_path):
    for model in ("Oracle", "Kimi-Audio-7B-Instruct", "Gemini-3-Flash"):
        out = run_cli("--model", model, "--task", "rad", "--judge", "logprobs", cwd=tmp_path, env=harness_env())
        assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
        assert out.stderr == (f"error: --judge logprobs needs a server that returns token logprobs (vLLM, or ours with "
                              f"Tiny-Qwen2-Audio); {model} gives none: use --judge auto, rules or llm.\n")
