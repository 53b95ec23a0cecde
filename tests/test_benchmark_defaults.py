"""The benchmark seam's defaults, as a new benchmark meets them: it writes prepare, read_answer and ideal_observer, and
BenchmarkBase gives every reply its own status (a failed request, a refusal, a cut reply and an unreadable one are
never scored as answers); a Face of task names alone claims, lists and refuses what it cannot do in one line; the
guide's toy benchmark and toy backend stay as short as the guide says."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

import pytest

from acousticbench.benchmarks import BenchmarkBase, Face, Views
from acousticbench.core.errors import UserError
from acousticbench.core.records import Prompt, Reply
from acousticbench.core.settings import BenchmarkOptions, make_spec
from acousticbench.engine.executor import Outcome

EXAMPLES = Path(__file__).parents[1] / "docs" / "examples"


@dataclass(frozen=True)
class Pair:
    id: str
    answer: str


class Letters(BenchmarkBase):
    name = "Letters"

    def read_answer(self, item: Pair, text: str) -> str | None:
        letter = text.strip()[:1].upper()
        return letter if letter in ("A", "B") else None


def record_of(reply: Reply | None, answer: str = "B", error: str | None = None):
    bench = Letters()
    spec = make_spec("Letters", BenchmarkOptions, model="M", task="pairs", seed=7)
    prompt = Prompt(benchmark="Letters", question_id="p1", task="pairs", text="A or B?", audio=["/a.wav"], seed=7)
    to_record = bench.record_maker(spec, None, None)
    return asyncio.run(to_record(Pair("p1", answer), prompt, Outcome(reply, error, 1 if reply else 3, 0.5)))


@pytest.mark.parametrize(("reply", "error", "status", "chosen", "correct"), [
    (Reply(text="B, the second."), None, "answered", "B", True),
    (Reply(text="A"), None, "answered", "A", False),
    (Reply(text="Hard to say."), None, "unparsed", None, None),
    (Reply(text="I cannot hear the audio clip."), None, "refused", None, None),
    (Reply(text="", refused=True), None, "refused", None, None),
    (Reply(text="B because the second", finish_reason="length"), None, "truncated", None, None),
    (None, "HTTP 500 after 3 attempts", "error", None, None),
])
def test_the_default_record_gives_each_failure_its_own_status_and_scores_only_answers(reply, error, status, chosen,
                                                                                       correct):
    record = record_of(reply, error=error)
    assert (record.status, record.chosen, record.correct) == (status, chosen, correct)
    assert record.benchmark == "Letters" and record.prompt == "A or B?" and record.answer == "B"
    assert record.error == error and record.seed == 7 and record.model == "M"


def test_plain_metrics_never_credit_a_reply_that_was_not_an_answer():
    records = [record_of(Reply(text="B")), record_of(Reply(text="B", finish_reason="length")),
               record_of(None, error="timeout"), record_of(Reply(text="?"))]
    spec = make_spec("Letters", BenchmarkOptions, model="M", task="pairs", seed=7)
    metrics = Letters().metrics(spec, records)
    assert (metrics.correct, metrics.n, metrics.accuracy) == (1, 4, 0.25)
    assert metrics.statuses == {"answered": 1, "truncated": 1, "error": 1, "unparsed": 1}


def test_a_benchmark_without_views_of_its_own_gets_the_plain_table():
    assert type(Letters().views) is Views and Letters().views.bench.name == "Letters"


def test_a_face_of_task_names_alone_claims_lists_and_refuses_in_one_line(tmp_path, capsys):
    face = Face(("longer", "louder"), title="Pairs", every="pairs")
    assert face.claim_tasks(["LOUDER", "rad", "longer"]) == ["longer", "louder"]  # its order, case aside
    assert face.claim_tasks(["pairs"]) == ["longer", "louder"] and face.task_names() == ["longer", "louder", "pairs"]
    assert face.task_lines() == ["Pairs: longer, louder"] and face.options is BenchmarkOptions
    assert face.verify_pack(tmp_path, None, required=False) is None  # `--verify-checksums` of every pack: not its
    with pytest.raises(UserError, match="longer: no checksums to verify"):
        face.verify_pack(tmp_path, ["longer"], required=True)
    with pytest.raises(UserError, match="no dataset export"):
        face.export_dataset(tmp_path, tmp_path / "out", ["longer"], required=True)
    assert face.build_pack(tmp_path, None) == "Pairs: no pack of its own to build."
    assert capsys.readouterr() == ("", "")  # the command line prints the line it returns


def test_the_guides_toy_benchmark_and_toy_backend_are_as_short_as_the_guide_says():
    """docs/extending.md: the whole toy benchmark (registration and face included) in at most 70 lines, the toy
    backend in at most 15; test_guide_benchmark.py and the guide's own blocks run them."""
    benchmark = sum(len(path.read_text().splitlines()) for path in (EXAMPLES / "toy_benchmark").glob("*.py"))
    backend = len((EXAMPLES / "toy_backend.py").read_text().splitlines())
    assert benchmark <= 70 and backend <= 15, (benchmark, backend)
    guide = (Path(__file__).parents[1] / "docs" / "extending.md").read_text()
    assert f"in {benchmark} lines" in guide and f"in {backend} lines" in guide  # the guide states what it is
