"""`judge agree`: two labelings of the same answers, paired by id; and the judge model's retirement."""
from __future__ import annotations

import datetime as dt
import json

import pytest

from acousticbench.benchmarks.acoustic.judge.__main__ import main as judge_cli
from acousticbench.benchmarks.acoustic.judge.retirement import RetiredJudgeModel, retirement_notice


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_agreement_counts_confusion_kappa_and_disagreeing_ids(tmp_path, capsys):
    # a run's responses.jsonl (status, judge) and `judge extract` output (judge_status) mix freely: id and chosen pair them
    first = write(tmp_path / "rules.jsonl", [{"id": "q1", "chosen": "A", "status": "answered"},
                                             {"id": "q2", "chosen": "B", "status": "answered"},
                                             {"id": "q3", "chosen": None, "status": "unparsed"},
                                             {"id": "q4", "chosen": "A", "status": "answered"},
                                             {"id": "only_here", "chosen": "A"}])
    second = write(tmp_path / "llm.jsonl", [{"id": "q1", "chosen": "A", "judge_status": "answered"},
                                            {"id": "q2", "chosen": "B", "judge_status": "answered"},
                                            {"id": "q3", "chosen": "B", "judge_status": "answered"},
                                            {"id": "q4", "chosen": None, "judge_status": "refused"}])
    assert judge_cli(["agree", str(first), str(second)]) == 0
    out = capsys.readouterr().out
    assert "4 answers in both files (1 only in rules.jsonl, 0 only in llm.jsonl)" in out
    assert "agree on 2 (50.0%)" in out
    # po = 0.5; pe = (2/4 * 1/4) + (1/4 * 2/4) + (1/4 * 1/4) = 0.3125; kappa = 0.1875 / 0.6875
    assert f"Cohen's kappa {0.1875 / 0.6875:.3f}" in out
    assert "     A       1       0       1" in out and "  none       0       1       0" in out
    assert out.rstrip().endswith("2 disagreeing ids:\nq3\nq4")


def test_identical_labelings_have_kappa_one(tmp_path, capsys):
    rows = [{"id": f"q{i}", "chosen": "AB"[i % 2]} for i in range(6)]
    assert judge_cli(["agree", str(write(tmp_path / "a.jsonl", rows)), str(write(tmp_path / "b.jsonl", rows))]) == 0
    assert "Cohen's kappa 1.000" in capsys.readouterr().out


def test_labelings_that_give_every_answer_one_label_have_no_kappa_and_say_so(tmp_path, capsys):
    rows = [{"id": f"q{i}", "chosen": "A"} for i in range(6)]  # an Always-A model read twice
    assert judge_cli(["agree", str(write(tmp_path / "a.jsonl", rows)), str(write(tmp_path / "b.jsonl", rows))]) == 0
    out = capsys.readouterr().out
    assert "agree on 6 (100.0%), Cohen's kappa undefined: both files label every answer 'A'" in out
    assert "1.000" not in out
    other = [{"id": f"q{i}", "chosen": "B"} for i in range(6)]  # constant, but different: chance agrees on none
    assert judge_cli(["agree", str(write(tmp_path / "a.jsonl", rows)), str(write(tmp_path / "c.jsonl", other))]) == 0
    assert "Cohen's kappa 0.000" in capsys.readouterr().out


@pytest.mark.parametrize("case, message", [
    ("missing", "no such file"), ("no_common", "share no record id"), ("latin1", "other.jsonl:1: byte 38 is not UTF-8"),
    ("no_id", "needs an 'id' string"), ("bad_json", "not valid JSON"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, case, message):
    good = write(tmp_path / "good.jsonl", [{"id": "q1", "chosen": "A"}])
    other = tmp_path / "other.jsonl"
    if case == "no_common":
        write(other, [{"id": "q9", "chosen": "A"}])
    elif case == "latin1":
        other.write_bytes('{"id": "q1", "chosen": "A", "note": "é"}\n'.encode("latin-1"))
    elif case == "no_id":
        write(other, [{"chosen": "A", "prompt": "p", "prediction": "A"}])
    elif case == "bad_json":
        other.write_text("{not json\n", encoding="utf-8")
    assert judge_cli(["agree", str(good), str(other)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_the_papers_judge_model_warns_before_its_shutdown_and_fails_after():
    before = retirement_notice("gpt-4o-mini", None, today=dt.date(2026, 12, 3))
    assert "2027-01-14" in before and "--judge-model" in before
    with pytest.raises(RetiredJudgeModel, match="--judge-model") as err:
        retirement_notice("gpt-4o-mini", None, today=dt.date(2027, 1, 14))
    assert err.value.exit_code == 2 and "2027-01-14" in str(err.value)
    # another server may still serve a model of that name: a warning, not an error
    assert "--judge-model" in retirement_notice("gpt-4o-mini", "http://127.0.0.1:8000/v1", today=dt.date(2027, 2, 1))
    assert retirement_notice("my-local-judge", None, today=dt.date(2030, 1, 1)) is None


def test_judge_extract_after_the_shutdown_stops_with_the_fix_instead_of_failing_every_call(tmp_path, capsys, monkeypatch):
    import acousticbench.benchmarks.acoustic.judge.retirement as retirement

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setattr(retirement, "SHUTDOWNS", {"gpt-4o-mini": "2000-01-01"})
    answers = write(tmp_path / "answers.jsonl", [{"prompt": "Which? 'A' or 'B'", "response": "The second one."}])
    assert judge_cli(["extract", str(answers), "--judge-model", "gpt-4o-mini"]) == 2
    assert "shut down by OpenAI on 2000-01-01" in capsys.readouterr().err


def test_the_warning_comes_once_from_the_probe_before_it_asks_and_never_for_the_rules(monkeypatch, capsys):
    import asyncio

    from acousticbench.benchmarks.acoustic.judge import Judge
    from acousticbench.benchmarks.acoustic.records import Judgement
    from acousticbench.core.records import Reply

    import acousticbench.benchmarks.acoustic.judge.retirement as retirement

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setattr(retirement, "SHUTDOWNS", {"gpt-4o-mini": "2999-01-14"})  # the same on any day the suite runs
    asyncio.run(Judge("rules").probe())  # the rules alone have no model to retire
    assert capsys.readouterr().err == ""
    judge = Judge.create("auto", "gpt-4o-mini")
    asked = []

    async def verdict(prompt, text, cut=False):
        return Judgement(chosen="B", status="answered", method="llm")

    async def probe():
        asked.append(capsys.readouterr().err)  # what stderr holds when the probe request is made

    monkeypatch.setattr(judge.llm, "judge", verdict)
    monkeypatch.setattr(judge.llm, "probe", probe)
    asyncio.run(judge.probe())
    assert len(asked) == 1 and "scheduled to shut down on 2999-01-14" in asked[0] and "--judge-model" in asked[0]
    for text in ("A", "The second one.", "The second one."):  # per answer: no check, no second warning
        asyncio.run(judge.judge("Which? 'A' or 'B'", Reply(text=text)))
    assert capsys.readouterr().err == ""
