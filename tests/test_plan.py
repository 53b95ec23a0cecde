"""--dry-run's plan against what the same command then does to our local servers: the same requests and seconds of
audio, an API model's token estimate within 10% of what our wire-faithful OpenAI server counts, and every run's
metrics.json with the tokens it used and their price."""
from __future__ import annotations

import base64
import json
import re

import pytest

from acousticbench.models import prices
from harness_cli import harness_env, run_cli, run_dirs
from servers import openai_server

COLUMNS = ("run", "questions", "requests", "audio s", "input tokens", "output tokens", "USD", "wall time")


def plan_rows(stdout: str) -> dict[str, dict[str, str]]:
    """The plan's table, by run label (and 'total'), each row's cells by column."""
    lines = stdout[stdout.index("\nPlan (nothing sent)"):].splitlines()[2:]
    return {cells[0]: dict(zip(COLUMNS, cells)) for cells in (re.split(r"\s{2,}", line.strip()) for line in lines)}


def sent_seconds(server) -> float:
    return sum(openai_server.wav_seconds(base64.b64decode(part["input_audio"]["data"]))
               for item in server.received if item.path.endswith("/chat/completions")
               for part in item.body["messages"][0]["content"] if part["type"] == "input_audio")


def chats(server) -> int:
    return sum(1 for item in server.received if item.path.endswith("/chat/completions"))


def api_env(server, **extra: str) -> dict[str, str]:
    return harness_env(OPENAI_API_KEY="sk-test-local-key", OPENAI_BASE_URL=f"{server.url}/v1", **extra)


def test_the_plan_matches_a_real_run_of_an_api_model(open_pack, tmp_path):
    """On the open pack's own clips, so the share of audio and text tokens is the benchmark's."""
    command = ["--judge", "rules", "--model", "GPT-Audio-Mini", "--task", "rad,pit", "--seeds", "42,43",
               "--max-samples", "6", "--archive", str(open_pack)]
    with openai_server.serve() as server:
        dry = run_cli(*command, "--dry-run", cwd=tmp_path, env=api_env(server))
        assert dry.returncode == 0, dry.stderr
        assert chats(server) == 0  # nothing sent
        out = run_cli(*command, cwd=tmp_path, env=api_env(server))
        assert out.returncode == 0, out.stderr
    rows = plan_rows(dry.stdout)
    total = rows["total"]
    assert int(total["requests"]) == chats(server) == 24 and int(total["questions"]) == 24
    assert float(total["audio s"]) == pytest.approx(sent_seconds(server), abs=0.05)
    assert "one request per question, retries not counted" in dry.stdout

    used = [json.loads((d / "metrics.json").read_text()) for d in run_dirs(tmp_path / "results")]
    counted_in = sum(m["tokens"]["prompt_tokens"] for m in used)  # what our server counted, summed by the harness
    counted_audio = sum(m["tokens"]["prompt_tokens_details.audio_tokens"] for m in used)
    estimated_in, _text, estimated_audio = (int(x) for x in re.findall(r"\d+", total["input tokens"].replace(",", "")))
    assert estimated_in == pytest.approx(counted_in, rel=0.10)
    assert estimated_audio == counted_audio  # the same documented rule, 1 token per 100 ms of each clip
    for m in used:
        text, audio, out_tokens = prices.split_usage(m["tokens"])
        assert m["price_usd"] == pytest.approx(prices.usd(prices.PRICES["gpt-audio-mini"], text, audio, out_tokens), abs=1e-6)
        assert m["price_basis"].startswith("gpt-audio-mini at USD 0.6/10.0/2.4 per 1M") and "2026-11-30" in m["price_basis"]


def test_the_plan_matches_a_real_run_of_a_served_model_that_merges_clips(tiny_pack, tmp_path):
    """MiniCPM-o hears one input: the plan counts the merged clip with its 1 s of silence, as the server receives it."""
    command = ["--judge", "rules", "--model", "MiniCPM-o-4.5", "--task", "rad", "--archive", str(tiny_pack)]
    with openai_server.serve() as server:
        env = harness_env()
        dry = run_cli(*command, "--endpoint", server.url, "--dry-run", cwd=tmp_path, env=env)
        out = run_cli(*command, "--endpoint", server.url, cwd=tmp_path, env=env)
        assert out.returncode == 0, out.stderr
    row = plan_rows(dry.stdout)["MiniCPM-o-4.5 on rad (seed 42)"]
    assert int(row["requests"]) == chats(server) == 11
    assert float(row["audio s"]) == pytest.approx(sent_seconds(server), abs=0.05)
    assert row["input tokens"] == row["USD"] == "-"  # a model on your own GPU: time, not tokens
    assert "4 in flight" in row["wall time"] and "declared" in row["wall time"]
    (run_dir,) = run_dirs(tmp_path / "results")
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["tokens"]["prompt_tokens"] > 0 and metrics["price_usd"] is None
    assert metrics["price_basis"] == "not an API model"

    again = run_cli(*command, "--endpoint", server.url, "--dry-run", cwd=tmp_path, env=env)  # a run measured it now
    assert f"measured over 11 answers in {run_dir.name}" in plan_rows(again.stdout)["MiniCPM-o-4.5 on rad (seed 42)"][
        "wall time"]


def test_prices_can_be_overridden_and_a_bad_override_is_one_line(tiny_pack, tmp_path):
    command = ["--model", "GPT-Audio-Mini", "--task", "rad", "--archive", str(tiny_pack), "--dry-run"]
    cheap = json.dumps({"gpt-audio-mini": {"input_text": 0.0, "input_audio": 0.0, "output": 0.0}})
    out = run_cli(*command, cwd=tmp_path, env=harness_env(ACOUSTICBENCH_PRICES=cheap))
    assert plan_rows(out.stdout)["GPT-Audio-Mini on rad (seed 42)"]["USD"] == "0.0000"
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"gpt-audio-mini": {"output": 1000.0}}))
    out = run_cli(*command, cwd=tmp_path, env=harness_env(ACOUSTICBENCH_PRICES=str(path)))
    assert float(plan_rows(out.stdout)["GPT-Audio-Mini on rad (seed 42)"]["USD"]) > 0.1
    out = run_cli(*command, cwd=tmp_path, env=harness_env(ACOUSTICBENCH_PRICES='{"gpt-audio-mini": {"outptu": 1}}'))
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "unknown field(s) outptu" in out.stderr


def test_every_priced_model_has_a_source_and_a_date():
    for model, price in prices.PRICES.items():
        assert price.read_on == "2026-11-30" and price.source, model
        assert price.input_audio is None or price.audio_tokens_per_s, model


def test_gemini_usage_keeps_the_audio_share():
    from google.genai import types

    from acousticbench.models.gemini import _flat_usage

    usage = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=90, candidates_token_count=3, thoughts_token_count=40, total_token_count=133,
        prompt_tokens_details=[types.ModalityTokenCount(modality="AUDIO", token_count=64),
                               types.ModalityTokenCount(modality="TEXT", token_count=26)])
    flat = _flat_usage(usage.model_dump(exclude_none=True))
    assert flat["prompt_tokens_details.AUDIO"] == 64 and flat["prompt_tokens_details.TEXT"] == 26
    assert prices.split_usage(flat) == (26, 64, 43)  # thinking tokens are billed as output
