"""--judge logprobs: the label is the likelier of "A" and "B" as the first token, from the server's logprobs; our
transformers server returns them for Tiny-Qwen2-Audio over real HTTP, as vLLM does."""
from __future__ import annotations

import importlib.util
import math

import pytest

from acousticbench.benchmarks.acoustic.judge.logprobs import NoLogprobs, judge_logprobs, letter_logprobs
from acousticbench.core.records import Reply
from conftest import write_tiny_pack
from harness_cli import harness_env, run_cli, run_dirs
from servers.fixtures import records


def reply(alternatives: dict[str, float] | None, refused: bool = False) -> Reply:
    return Reply(text="whatever it said", first_token_logprobs=alternatives, refused=refused)


def test_the_likelier_letter_is_chosen_and_its_spellings_pool():
    judged = judge_logprobs(reply({"The": -0.5, " B": -2.0, "B": -2.0, "A": -1.6}))
    assert judged.chosen == "B" and judged.method == "logprobs" and judged.status == "answered"
    assert judged.logprobs["B"] == pytest.approx(math.log(2 * math.exp(-2.0)))  # " B" and "B" are the same answer
    assert judged.logprobs["A"] == -1.6


def test_no_letter_or_a_tie_is_unparsed_never_a_guess():
    assert letter_logprobs({"The": -0.1, "It": -2.0}) == {"A": None, "B": None}
    for alternatives in ({"The": -0.1}, {"A": -1.0, "B": -1.0}):
        judged = judge_logprobs(reply(alternatives))
        assert (judged.chosen, judged.status, judged.method) == (None, "unparsed", "logprobs")
    assert judge_logprobs(reply({"A": -3.0, "x": -0.1})).chosen == "A"  # B below every listed alternative


def test_a_refusal_stays_a_refusal_and_no_logprobs_is_an_error():
    assert judge_logprobs(reply(None, refused=True)).status == "refused"
    with pytest.raises(NoLogprobs):
        judge_logprobs(reply(None))


@pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in ("torch", "transformers", "fastapi")),
                    reason="Tiny-Qwen2-Audio needs torch and the [hf-server] extra")
@pytest.mark.slow  # our transformers server
def test_our_server_returns_logprobs_and_the_run_is_labelled_from_them(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 8)
    out = run_cli("--model", "Tiny-Qwen2-Audio", "--task", "rad", "--judge", "logprobs", "--archive", str(archive),
                  cwd=tmp_path, env=harness_env())
    assert out.returncode == 0, out.stderr
    got = records(run_dirs(tmp_path / "results")[0])
    assert len(got) == 11 and {r["judge"]["method"] for r in got} == {"logprobs"}
    for r in got:
        found = {k: v for k, v in r["logprobs"].items() if v is not None}
        assert r["chosen"] == (max(found, key=found.get) if found else None)
        if r["response"].split()[0] in ("A", "B"):  # the greedy first token was the likeliest of all
            assert r["chosen"] == r["response"].split()[0]
