"""Toy as a Benchmark: pairs of tones, "A" when the first lasts longer, scored by the letter the reply starts with."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from acousticbench.benchmarks import BenchmarkBase, Prepared
from acousticbench.core.audio import SAMPLE_RATE, read_audio, write_wav
from acousticbench.core.records import Prompt, RecordBase
from acousticbench.core.settings import RunSpec

PROMPT = "Which tone lasts longer? A. The first B. The second. Answer A or B."


def build(root: Path) -> int:
    """<root>/toy/items.jsonl and its clips: 8 pairs of 440 Hz tones, 0.2 s against 0.3 s."""
    (root / "toy" / "audio").mkdir(parents=True, exist_ok=True)
    items = []
    for i in range(8):
        lengths = (0.3, 0.2) if i % 2 == 0 else (0.2, 0.3)
        paths = [f"toy/audio/{i}_{j}.wav" for j in range(2)]
        for path, length in zip(paths, lengths):
            write_wav(root / path, 0.3 * np.sin(2 * np.pi * 440 * np.arange(int(length * SAMPLE_RATE)) / SAMPLE_RATE))
        items.append({"id": f"longer_{i:04d}", "task": "longer", "audio": paths, "answer": "AB"[i % 2]})
    (root / "toy" / "items.jsonl").write_text("".join(json.dumps(item) + "\n" for item in items))
    return len(items)


@dataclass(frozen=True)
class ToyItem:
    id: str
    task: str
    audio: list[str]
    answer: str


class ToyRecord(RecordBase):
    benchmark: Literal["Toy"] = "Toy"
    chosen: str | None
    answer: str
    correct: bool


class ToyBenchmark(BenchmarkBase):
    name = "Toy"
    record_type = ToyRecord
    final_statuses = frozenset({"answered", "unparsed"})  # kept by --resume; errors are asked again
    label_field = "chosen"
    item_noun = "pairs"

    def prepare(self, spec: RunSpec, cache: dict) -> Prepared:
        root = os.path.abspath(spec.settings.archive)
        lines = (Path(root) / "toy" / "items.jsonl").read_text().splitlines()
        items = [ToyItem(**json.loads(line)) for line in lines][: spec.settings.max_samples]
        return Prepared([(item, Prompt(benchmark=self.name, question_id=item.id, task=item.task, text=PROMPT,
                                       audio=[os.path.join(root, p) for p in item.audio], seed=spec.seed))
                         for item in items])

    def record_maker(self, spec: RunSpec, prepared: Prepared, grader):
        async def to_record(item: ToyItem, prompt: Prompt, outcome) -> ToyRecord:
            text = outcome.reply.text if outcome.reply else None
            letter = (text or "").strip()[:1].upper()
            chosen = letter if letter in ("A", "B") else None
            status = "error" if outcome.reply is None else "answered" if chosen else "unparsed"
            return ToyRecord(id=item.id, model=spec.model, task=item.task, seed=spec.seed, status=status,
                             response=text, error=outcome.error, attempts=outcome.attempts, chosen=chosen,
                             answer=item.answer, correct=chosen == item.answer)

        return to_record

    def ideal_observer(self, prompt: Prompt) -> str:
        first, second = (len(read_audio(path, sr=SAMPLE_RATE)[0]) for path in prompt.audio)
        return "A" if first > second else "B"


BENCHMARK = ToyBenchmark()
