"""rejudge.py for AudioICL: every answered episode scored again from its response; the model is not asked."""
from __future__ import annotations

from typing import Any

from acousticbench.benchmarks.audioicl.record import EpisodeRecord
from acousticbench.benchmarks.audioicl.scoring import score


def rescore_episodes(records: list[EpisodeRecord], scoring: str | None = None) -> list[EpisodeRecord]:
    """Every answered episode scored again (with `scoring`, or the one it was run with)."""
    out = []
    for record in records:
        mode = scoring or record.scoring
        if record.status == "answered":
            prediction, correct = score(record.task, record.response, record.gt, mode)
            if (prediction, correct, mode) != (record.prediction, record.correct, record.scoring):
                record = record.model_copy(update={"prediction": prediction, "correct": correct, "scoring": mode}
                                           ).with_note(f"re-scored by rejudge.py ({mode} scoring): was "
                                                       f"{record.prediction!r}")
        out.append(record)
    return out


class ScoreRelabeller:
    what = "rejudge.py: scored again"

    def __init__(self, options: dict[str, Any]):
        self.scoring = options.get("scoring")

    async def relabel(self, records: list[EpisodeRecord]) -> list[EpisodeRecord]:
        return rescore_episodes(records, self.scoring)

    async def aclose(self) -> None:
        return None
