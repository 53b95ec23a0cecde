"""The adaptive run's own small pack, inside its run folder: pack/MANIFEST.json, pack/<task>/questions.jsonl and the
clips, each with its sha256, so the run's questions can be checked, listened to and judged again like a pack's."""
from __future__ import annotations

from pathlib import Path

from acousticbench.benchmarks.acoustic.pack import RUN_MADE, questions_relpath, write_manifest, write_questions
from acousticbench.benchmarks.acoustic.records import Question
from acousticbench.benchmarks.acoustic.tasks import TASKS

PACK = "pack"  # under the run folder
BENCHMARK = RUN_MADE
VERSION = "1"


def pack_root(run_dir: Path) -> Path:
    return Path(run_dir) / PACK


class RunPack:
    """The questions the run's tracks made so far; `add` appends each as it is made (a killed run keeps its lines),
    `seal` rewrites them sorted by id and pins them in MANIFEST.json."""

    def __init__(self, run_dir: Path, code: str):
        self.root, self.code = pack_root(run_dir), code
        (self.root / code / "audio").mkdir(parents=True, exist_ok=True)
        path = self.root / questions_relpath(code)
        earlier = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []  # --resume: made before
        self.questions: dict[str, Question] = {}
        for line in earlier:
            try:
                question = Question.model_validate_json(line)
            except ValueError:  # a line a kill cut short: the trial is made again
                continue
            self.questions[question.id] = question

    def add(self, question: Question) -> None:
        if question.id in self.questions:
            return
        self.questions[question.id] = question
        with (self.root / questions_relpath(self.code)).open("a", encoding="utf-8") as fh:
            fh.write(question.model_dump_json() + "\n")

    def seal(self) -> str:
        """Sorted questions and MANIFEST.json; returns the manifest's sha256."""
        questions = list(self.questions.values())
        digest = write_questions(self.root, self.code, questions)
        scored = sum(1 for q in questions if q.kind == "scored")
        tasks = {self.code: {"title": TASKS[self.code].title, "clips": TASKS[self.code].clips, "n_scored": scored,
                             "n_diagnostic": len(questions) - scored}}
        return write_manifest(self.root, BENCHMARK, VERSION, tasks=tasks, sha256={questions_relpath(self.code): digest})
