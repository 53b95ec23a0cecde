"""The LLM judge over real HTTP (the openai SDK against a local server): wire format, cache, retries, failures."""
from __future__ import annotations

import asyncio
import json
import os

import pytest

from acousticbench.core.errors import UserError
from acousticbench.benchmarks.acoustic.judge import Judge, JudgeFailed, LLMJudge
from acousticbench.benchmarks.acoustic.judge.__main__ import main as judge_cli
from acousticbench.benchmarks.acoustic.judge.cache import JudgeCache, cache_key
from acousticbench.benchmarks.acoustic.judge.llm import JUDGE_PROMPT_VERSION, SYSTEM_PROMPT, USER_TEMPLATE
from acousticbench.core.records import Reply
from servers.judge_server import JudgeServer, error, judge_refusal, malformed, verdict

QUESTION = "Which clip is louder? Answer 'A' (first) or 'B' (second)."
SEMANTIC = "The second clip is clearly the louder one."


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    """No key or endpoint from the developer's shell; the cache in a fresh folder."""
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "ACOUSTICBENCH_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("ACOUSTICBENCH_CACHE_DIR", str(tmp_path / "cache"))


class Sleeps(list):
    """Records the waits the judge asked for instead of waiting."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make_judge(server: JudgeServer, **options) -> LLMJudge:
    options.setdefault("cache", JudgeCache())
    return LLMJudge("gpt-4o-mini", server.url, **options)


def run(judge: LLMJudge, items: list[tuple[str, str]]):
    async def go():
        try:
            return await asyncio.gather(*(judge.judge(q, r) for q, r in items), return_exceptions=True)
        finally:
            await judge.aclose()
    return asyncio.run(go())


def test_the_request_is_structured_output_at_temperature_0_with_only_question_and_response():
    with JudgeServer(lambda request: verdict("B")) as server:
        [judgement] = run(make_judge(server), [(QUESTION, SEMANTIC)])
    assert (judgement.chosen, judgement.status, judgement.method, judgement.model) == ("B", "answered", "llm",
                                                                                      "gpt-4o-mini")
    [request] = server.requests
    assert request["model"] == "gpt-4o-mini" and request["temperature"] == 0
    schema = request["response_format"]
    assert schema["type"] == "json_schema" and schema["json_schema"]["strict"] is True
    assert set(schema["json_schema"]["schema"]["properties"]) == {"label", "refused", "reason"}
    assert schema["json_schema"]["schema"]["properties"]["label"]["enum"] == ["A", "B", "none"]
    # exactly the instructions and the question with the response: nothing else, no answer key
    assert request["messages"] == [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": USER_TEMPLATE.format(question=QUESTION, response=SEMANTIC, cut="")}]


def test_none_and_refused_verdicts_are_recorded_as_the_judge_reading():
    answers = {"maybe": verdict("none"), "no audio": verdict("none", refused=True)}
    with JudgeServer(lambda request: answers[request["messages"][1]["content"].split("<answer>\n")[1][:-10]]) as server:
        unsure, refused = run(make_judge(server), [(QUESTION, "maybe"), (QUESTION, "no audio")])
    assert (unsure.chosen, unsure.status, unsure.method) == (None, "unparsed", "llm")
    assert (refused.chosen, refused.status, refused.method) == (None, "refused", "llm")


def test_a_rerun_asks_nothing_it_asked_before(tmp_path):
    items = [(QUESTION, f"answer number {i}") for i in range(6)]
    with JudgeServer(lambda request: verdict("A")) as server:
        first = run(make_judge(server), items)
        assert len(server.requests) == 6
        second = run(make_judge(server), items)  # a new judge, the same cache folder
        assert len(server.requests) == 6
    assert [j.chosen for j in second] == [j.chosen for j in first] == ["A"] * 6
    assert len(JudgeCache()) == 6 and JudgeCache().path.parent == tmp_path / "cache" / "judge"


def test_identical_questions_asked_at_once_share_one_call():
    with JudgeServer(lambda request: verdict("B")) as server:
        results = run(make_judge(server), [(QUESTION, SEMANTIC)] * 5)
    assert [r.chosen for r in results] == ["B"] * 5 and len(server.requests) == 1


def test_429_waits_as_long_as_retry_after_says_then_succeeds():
    sleeps = Sleeps()
    with JudgeServer(lambda request: verdict("A")) as server:
        server.script.append(error(429, retry_after="7"))
        [judgement] = run(make_judge(server, sleep=sleeps), [(QUESTION, SEMANTIC)])
    assert judgement.chosen == "A" and len(server.requests) == 2 and sleeps == [7.0]


def test_persistent_500_fails_after_bounded_retries_and_is_not_cached():
    sleeps = Sleeps()
    with JudgeServer(lambda request: error(500)) as server:
        [failure] = run(make_judge(server, sleep=sleeps, max_attempts=3), [(QUESTION, SEMANTIC)])
        assert isinstance(failure, JudgeFailed) and "HTTP 500" in str(failure)
        assert (failure.judgement.chosen, failure.judgement.status, failure.judgement.method) == (None, "unparsed",
                                                                                                 "none")
        assert len(server.requests) == 3 and len(sleeps) == 2
        server.default = lambda request: verdict("B")
        [later] = run(make_judge(server, sleep=sleeps), [(QUESTION, SEMANTIC)])
    assert later.chosen == "B" and len(server.requests) == 4


@pytest.mark.parametrize("canned, words", [(malformed(), "not a valid verdict"), (judge_refusal(), "no verdict"),
                                           (error(400), "HTTP 400"), (error(429, retry_after="3600"), "3600 s")])
def test_what_a_retry_cannot_fix_fails_at_once_and_never_guesses(canned, words):
    sleeps = Sleeps()
    with JudgeServer(lambda request: verdict("A")) as server:
        server.script.append(canned)
        [failure] = run(make_judge(server, sleep=sleeps), [(QUESTION, SEMANTIC)])
    assert isinstance(failure, JudgeFailed) and words in str(failure)
    assert failure.judgement.chosen is None and failure.judgement.method == "none"
    assert len(server.requests) == 1 and sleeps == []
    assert len(JudgeCache()) == 0


def test_auto_mode_asks_the_llm_only_for_what_the_rules_leave():
    with JudgeServer(lambda request: verdict("B")) as server:
        judge = Judge("auto", make_judge(server))

        async def go():
            out = [await judge.judge(QUESTION, Reply(text=text)) for text in ("**A**", SEMANTIC, "")]
            out.append(await judge.judge(QUESTION, Reply(text=None, refused=True)))
            await judge.aclose()
            return out
        ruled, asked, empty, refused = asyncio.run(go())
    assert (ruled.chosen, ruled.method) == ("A", "rules")
    assert (asked.chosen, asked.method) == ("B", "llm")
    assert (empty.status, refused.status, refused.method) == ("unparsed", "refused", "none")
    assert len(server.requests) == 1


def test_llm_mode_asks_for_every_response_and_rules_mode_never_does():
    with JudgeServer(lambda request: verdict("A")) as server:
        llm, rules = Judge("llm", make_judge(server)), Judge("rules")
        assert asyncio.run(llm.judge(QUESTION, Reply(text="A"))).method == "llm"
        assert asyncio.run(rules.judge(QUESTION, Reply(text=SEMANTIC))).status == "unparsed"
    assert len(server.requests) == 1
    assert rules.provenance() == {"mode": "rules", "rules_version": rules.provenance()["rules_version"]}
    assert set(llm.provenance()) >= {"model", "endpoint", "prompt_version", "prompt_sha256"}


def test_a_key_is_required_except_for_a_local_endpoint():
    with pytest.raises(UserError, match="OPENAI_API_KEY"):
        Judge.create("auto")
    with pytest.raises(UserError, match="OPENAI_API_KEY"):
        LLMJudge("gpt-4o-mini", "https://judge.example.com/v1")
    assert Judge.create("auto", base_url="http://127.0.0.1:9/v1").llm.base_url == "http://127.0.0.1:9/v1"
    assert Judge.create("rules").llm is None


def test_a_torn_last_cache_line_is_ignored_and_the_next_entry_still_lands(tmp_path):
    cache = JudgeCache(tmp_path)
    cache.put("k1", {"label": "A", "refused": False, "reason": "r"})
    with cache.path.open("a") as handle:
        handle.write('{"key": "k2", "verdict": {"lab')  # a crash mid-write
    fresh = JudgeCache(tmp_path)
    assert fresh.get("k1")["label"] == "A" and fresh.get("k2") is None
    fresh.put("k3", {"label": "B", "refused": False, "reason": "r"})
    assert JudgeCache(tmp_path).get("k3")["label"] == "B" and len(JudgeCache(tmp_path)) == 2
    assert cache_key("m", JUDGE_PROMPT_VERSION, "q", "r") != cache_key("m2", JUDGE_PROMPT_VERSION, "q", "r")
    # the same model name behind another endpoint may be another model: its verdicts are not reused
    assert cache_key("m", JUDGE_PROMPT_VERSION, "q", "r", "http://a/v1") != cache_key("m", JUDGE_PROMPT_VERSION, "q", "r", "http://b/v1")


def test_extract_command_adds_the_judged_option_to_each_line(tmp_path, capsys):
    path = tmp_path / "answers.jsonl"
    lines = [{"prompt": QUESTION, "response": "Answer: B"},
             {"prompt": QUESTION, "prediction": "A", "full_prediction": "<think>B?</think>\nA"},
             {"prompt": QUESTION, "prediction": SEMANTIC},
             {"prompt": QUESTION, "response": None}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert judge_cli(["extract", str(path), "--rules-only"]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(o["chosen"], o["judge_method"]) for o in out] == [("B", "rules"), ("A", "rules"), (None, "none"),
                                                               (None, "none")]
    with JudgeServer(lambda request: verdict("B")) as server:
        assert judge_cli(["extract", str(path), "--endpoint", server.url]) == 0
    assert [json.loads(line)["chosen"] for line in capsys.readouterr().out.splitlines()] == ["B", "A", "B", None]
    assert len(server.requests) == 1


def test_extract_command_names_the_file_and_line_of_a_bad_line(tmp_path, capsys):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"prompt": QUESTION, "response": "A"}) + "\n{not json\n")
    assert judge_cli(["extract", str(path), "--rules-only"]) == 2
    assert f"{path}:2: not valid JSON" in capsys.readouterr().err
    path.write_text(json.dumps({"response": "A"}) + "\n")
    assert judge_cli(["extract", str(path), "--rules-only"]) == 2
    assert f"{path}:1: needs a 'prompt'" in capsys.readouterr().err
