"""Toy as a Benchmark: pairs of tones, "A" when the first lasts longer, read from the letter a reply starts with."""
import json
import os
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from acousticbench.benchmarks import BenchmarkBase, Prepared
from acousticbench.core.audio import SAMPLE_RATE, read_audio, write_wav
from acousticbench.core.records import Prompt

QUESTION = "Which tone lasts longer? A. The first B. The second. Answer A or B."


def build(root: Path) -> int:
    """<root>/toy/items.jsonl and its clips: 8 pairs of 440 Hz tones, 0.2 s against 0.3 s."""
    (root / "toy" / "audio").mkdir(parents=True, exist_ok=True)
    items = []
    for i in range(8):
        paths = [f"toy/audio/{i}_{j}.wav" for j in range(2)]
        for path, length in zip(paths, (0.3, 0.2) if i % 2 == 0 else (0.2, 0.3)):
            write_wav(root / path, 0.3 * np.sin(2 * np.pi * 440 * np.arange(int(length * SAMPLE_RATE)) / SAMPLE_RATE))
        items.append({"id": f"longer_{i:04d}", "task": "longer", "audio": paths, "answer": "AB"[i % 2]})
    (root / "toy" / "items.jsonl").write_text("".join(json.dumps(item) + "\n" for item in items))
    return len(items)


class Toy(BenchmarkBase):
    name = "Toy"
    item_noun = "pairs"

    def prepare(self, spec, cache: dict) -> Prepared:
        """Its items (each with an `id` and the `answer` a reply is scored against) and the Prompt of each."""
        root = os.path.abspath(spec.settings.archive)
        lines = (Path(root) / "toy" / "items.jsonl").read_text().splitlines()
        items = [SimpleNamespace(**json.loads(line)) for line in lines][: spec.settings.max_samples]
        return Prepared([(item, Prompt(benchmark=self.name, question_id=item.id, task=item.task, text=QUESTION,
                                       audio=[os.path.join(root, p) for p in item.audio], seed=spec.seed))
                         for item in items])

    def read_answer(self, item, text: str) -> str | None:
        letter = text.strip()[:1].upper()
        return letter if letter in ("A", "B") else None  # None: unparsed, never scored as an answer

    def ideal_observer(self, prompt: Prompt) -> str:
        first, second = (len(read_audio(path, sr=SAMPLE_RATE)[0]) for path in prompt.audio)
        return "A" if first > second else "B"


BENCHMARK = Toy()
