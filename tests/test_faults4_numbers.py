"""Impossible numbers from a server or the environment, over real HTTP on 127.0.0.1: a NaN, infinite or positive
logprob is never a label, a NaN, infinite or negative price is one line naming ACOUSTICBENCH_PRICES before anything
is asked, a negative token count is never priced, and every JSON file a run writes is strict JSON."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_tiny_pack
from harness_cli import assert_one_line, harness_env, run_cli, run_dirs
from servers import openai_server
from servers.fixtures import records
from test_faults import VARIABLE

OPENAI = {"OPENAI_API_KEY": "sk-test-0123456789"}
GPT = ("--model", "GPT-Audio-Mini", "--task", "rad", "--judge", "rules", "--max-samples", "3")


def strict_json(path: Path):
    """The file as JSON, refusing NaN and Infinity, which no JSON reader but Python's takes."""
    def refuse(word: str):
        raise ValueError(f"{path} holds {word}, which is not JSON")
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line, parse_constant=refuse) for line in text.splitlines() if line.strip()]
    return json.loads(text, parse_constant=refuse)


def assert_every_file_is_json(root: Path) -> None:
    for path in [*root.rglob("*.json"), *root.rglob("*.jsonl")]:
        strict_json(path)


def with_logprobs(own: float, other: float = -2.0):
    """A reply shape: the answer's own letter has logprob `own` as the first token, the other letter `other`."""
    def shape(completion: dict) -> bytes:
        letter = completion["choices"][0]["message"]["content"]
        rival = "B" if letter == "A" else "A"
        top = [{"token": letter, "logprob": own}, {"token": rival, "logprob": other}]
        logprobs = {"content": [{"token": letter, "logprob": own, "top_logprobs": top}]}
        changed = {**completion, "choices": [{**completion["choices"][0], "logprobs": logprobs}]}
        return json.dumps(changed).encode()  # Python writes NaN and Infinity as a careless server does
    return shape


@pytest.mark.parametrize("own", [float("nan"), 7.5, 0.25, float("inf")], ids=["nan", "plus-7.5", "plus-0.25", "inf"])
def test_an_impossible_logprob_for_the_reply_token_is_never_a_label(own, tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    with openai_server.serve(reply_shape=with_logprobs(own)) as server:
        out = run_cli("--model", "Voxtral-Mini-3B", "--task", "rad", "--judge", "logprobs", "--max-samples", "3",
                      "--archive", str(archive), cwd=tmp_path,
                      env=harness_env(**{VARIABLE: server.url, "ACOUSTICBENCH_MAX_ATTEMPTS": "1"}))
    assert "Traceback" not in out.stderr, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    rows = records(run_dir)
    assert len(rows) == 3 and {(r["status"], r["chosen"]) for r in rows} == {("error", None)}, rows
    assert all("logprob" in r["error"] for r in rows), [r["error"] for r in rows]
    assert out.returncode == 1, out.stderr  # nothing scored: the run needs attention
    assert_every_file_is_json(run_dir)


def test_a_possible_logprob_still_labels(tmp_path):
    """The check's other side: -inf (probability zero) and 0.0 (certainty) are possible values."""
    archive = write_tiny_pack(tmp_path / "archive")
    with openai_server.serve(reply_shape=with_logprobs(0.0, float("-inf"))) as server:
        out = run_cli("--model", "Voxtral-Mini-3B", "--task", "rad", "--judge", "logprobs", "--max-samples", "3",
                      "--archive", str(archive), cwd=tmp_path, env=harness_env(**{VARIABLE: server.url}))
    assert out.returncode == 0, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    rows = records(run_dir)
    assert all(r["status"] == "answered" and r["chosen"] == r["response"] for r in rows), rows
    assert_every_file_is_json(run_dir)


PRICES = {
    "nan": '{"gpt-audio-mini": {"output": NaN}}',
    "negative": '{"gpt-audio-mini": {"input_audio": -10.0}}',
    "infinite": '{"gpt-audio-mini": {"input_text": Infinity}}',
    "overflowing": '{"gpt-audio-mini": {"input_text": 1e999}}',
    "a word": '{"gpt-audio-mini": {"output": "cheap"}}',
    "true": '{"gpt-audio-mini": {"output": true}}',
    "fractional tokens": '{"gpt-audio-mini": {"output_tokens": 2.5}}',
    "null output": '{"gpt-audio-mini": {"output": null}}',
}


@pytest.mark.parametrize("given", PRICES.values(), ids=PRICES.keys())
def test_an_impossible_price_is_one_line_before_any_request(given, tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    with openai_server.serve() as server:
        out = run_cli(*GPT, "--archive", str(archive), cwd=tmp_path,
                      env=harness_env(**OPENAI, OPENAI_BASE_URL=server.url + "/v1", ACOUSTICBENCH_PRICES=given))
        asked = [r for r in server.received if r.path.endswith("/chat/completions")]
    assert_one_line(out, 2, "ACOUSTICBENCH_PRICES", "gpt-audio-mini")
    assert asked == [] and not (tmp_path / "results").exists()


def test_an_impossible_price_is_refused_by_the_plan_too(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    out = run_cli(*GPT, "--archive", str(archive), "--dry-run", cwd=tmp_path,
                  env=harness_env(**OPENAI, ACOUSTICBENCH_PRICES=PRICES["nan"]))
    assert_one_line(out, 2, "ACOUSTICBENCH_PRICES")
    assert "USD nan" not in out.stdout


@pytest.mark.parametrize("usage", [{"prompt_tokens": -5000, "completion_tokens": 1, "total_tokens": -4999},
                                   {"prompt_tokens": 40, "completion_tokens": -3, "total_tokens": 37}],
                         ids=["negative prompt", "negative completion"])
def test_a_negative_token_count_from_the_server_is_never_priced(usage, tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    with openai_server.serve(reply_shape=lambda c: {**c, "usage": usage}) as server:
        out = run_cli(*GPT, "--archive", str(archive), cwd=tmp_path,
                      env=harness_env(**OPENAI, OPENAI_BASE_URL=server.url + "/v1"))
    assert out.returncode == 0, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    metrics = strict_json(run_dir / "metrics.json")
    spent = metrics["spent"] if "spent" in metrics else metrics
    assert all(n >= 0 for n in spent["tokens"].values()), spent
    assert spent["price_usd"] is None or spent["price_usd"] >= 0, spent
    assert [r["status"] for r in records(run_dir)] == ["answered"] * 3  # the answers themselves stand
    assert_every_file_is_json(run_dir)


@pytest.mark.parametrize("model", ["GPT-Audio-Mini", "Voxtral-Mini-3B"])
@pytest.mark.parametrize("count", [b"99999999999999999999999999", '"\\u00b2"'.encode()],
                         ids=["1e26", "superscript two"])
def test_a_token_count_no_request_can_have_is_never_priced_nor_an_error(count, model, tmp_path):
    """A count past any context window was priced (USD 1.8e20 for three answers); a digit int() cannot read ('²')
    was not refused as text. Neither is a count, and the answers stand."""
    archive = write_tiny_pack(tmp_path / "archive")

    def shape(completion: dict) -> bytes:
        body = json.dumps({k: v for k, v in completion.items() if k != "usage"}).encode()
        return body[:-1] + b', "usage": {"prompt_tokens": ' + count + b', "completion_tokens": 1, "total_tokens": 1}}'

    with openai_server.serve(reply_shape=shape) as server:
        out = run_cli("--model", model, *GPT[2:], "--archive", str(archive), cwd=tmp_path,
                      env=harness_env(**OPENAI, OPENAI_BASE_URL=server.url + "/v1", **{VARIABLE: server.url}))
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    assert [r["status"] for r in records(run_dir)] == ["answered"] * 3
    metrics = strict_json(run_dir / "metrics.json")
    spent = metrics["spent"] if "spent" in metrics else metrics
    assert "prompt_tokens" not in spent["tokens"], spent
    assert spent["price_usd"] is None or spent["price_usd"] < 0.01, spent


def test_token_counts_that_contradict_themselves_are_never_priced(tmp_path):
    """5,000 audio tokens in a prompt of 40 in all: the text share came to minus 4,960 tokens, and the run was priced
    at what the two made together. A price of counts that cannot all be true is none, and says why."""
    archive = write_tiny_pack(tmp_path / "archive")
    usage = {"prompt_tokens": 40, "completion_tokens": 1, "total_tokens": 41,
             "prompt_tokens_details": {"audio_tokens": 5000}}
    with openai_server.serve(reply_shape=lambda c: {**c, "usage": usage}) as server:
        out = run_cli(*GPT, "--archive", str(archive), cwd=tmp_path,
                      env=harness_env(**OPENAI, OPENAI_BASE_URL=server.url + "/v1"))
    assert out.returncode == 0, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    assert [r["status"] for r in records(run_dir)] == ["answered"] * 3
    metrics = strict_json(run_dir / "metrics.json")
    spent = metrics["spent"] if "spent" in metrics else metrics
    assert spent["price_usd"] is None and "contradict" in spent["price_basis"], spent
