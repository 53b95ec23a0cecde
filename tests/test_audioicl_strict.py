"""AudioICL credits only a plain answer: a refusal that names a clip number, a cut reply or a hedge between labels
is never correct, while `correct_public` / `accuracy_public` keep the public scorer's verdict."""
from __future__ import annotations

import json

import pytest

from acousticbench.benchmarks.audioicl.scoring import score, strict_correct
from acousticbench.benchmarks.audioicl.spec import icl_spec
from acousticbench.run.sweep import run_one
from audioicl_pack import reduced_pack
from servers import openai_server
from servers.fixtures import fast_retries, records  # noqa: F401

VARIABLE = "ACOUSTICBENCH_QWEN2_AUDIO_7B_INSTRUCT_ENDPOINT"


def icl_run(fast_retries, tmp_path, answer: str, finish: str = "stop", task: str = "AudioCount"):
    with openai_server.serve(model_ids=["Qwen/Qwen2-Audio-7B-Instruct"], answer_text=answer, finish=finish) as server:
        fast_retries.setenv(VARIABLE, server.url)
        spec = icl_spec(model="Qwen2-Audio-7B-Instruct", task=task, shots=1, max_samples=6, archive=reduced_pack(),
                          results_dir=tmp_path / "results")
        result = run_one(spec, progress=False)
    return records(result.run_dir), json.loads((result.run_dir / "metrics.json").read_text())


def test_a_refusal_naming_a_clip_number_scores_nothing(fast_retries, tmp_path):
    got, metrics = icl_run(fast_retries, tmp_path, "I'm sorry, I cannot listen to <audio 3>.")
    assert [r["status"] for r in got] == ["refused"] * 6 and not any(r["correct"] for r in got)
    assert metrics["correct"] == 0 and metrics["accuracy"] == 0.0
    public = [r["correct_public"] for r in got]  # the public scorer reads '3' as the count
    assert public == [r["gt"] == "3" for r in got]
    assert metrics["accuracy_public"] == pytest.approx(sum(public) / 6)


def test_a_reply_cut_by_the_token_limit_is_truncated_and_not_credited(fast_retries, tmp_path):
    got, metrics = icl_run(fast_retries, tmp_path, "3", finish="length")
    assert all(r["status"] == "truncated" and r["finish_reason"] == "length" and not r["correct"] for r in got)
    assert metrics["truncated"] == 6 and metrics["correct"] == 0


@pytest.mark.parametrize("task, response, gt, public, strict", [
    ("AnomalyDetect", "I cannot tell whether it is normal or anomalous.", "Anomalous", True, False),
    ("AnomalyDetect", "It sounds normal.", "Normal", True, True),
    ("AnomalyDetect", "Abnormal.", "Anomalous", True, True),
    ("AudioCount", "It is 3 or 4.", "4", True, False),
    ("AudioCount", "Demo 1 has 2 knocks and the first clip has 5. The query has 4.", "4", True, True),
    ("AudioCount", "The query <audio 3> has 4 knocks.", "4", True, True),
    ("AudioCount", "I count 4 knocks in <audio 3>", "3", True, False),  # the last number names a clip
    ("AudioOperator", "9 - 7 = 2", "2", True, True),
    ("AudioCount", "There are 3.", "3", True, True),
    ("MorseCode", "prior", "prior", True, True),
])
def test_strict_credits_only_an_answer_that_names_one_label(task, response, gt, public, strict):
    assert score(task, response, gt)[1] is public
    assert strict_correct(task, response, gt) is strict
