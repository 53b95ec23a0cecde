"""rejudge.py for AudioICL: every answered episode scored again from its response; the model is not asked."""
from __future__ import annotations

from typing import Any

from acousticbench.benchmarks.audioicl.record import EpisodeRecord
from acousticbench.benchmarks.audioicl.scoring import score, strict_correct


def rescore_episodes(records: list[EpisodeRecord], scoring: str | None = None) -> list[EpisodeRecord]:
    """Every answered episode scored again (with `scoring`, or the one it was run with): the strict verdict and
    the public scorer's."""
    out = []
    for record in records:
        mode = scoring or record.scoring
        if record.status == "answered":
            prediction, public = score(record.task, record.response, record.gt, mode)
            correct = strict_correct(record.task, record.response, record.gt, mode)
            if (prediction, correct, public, mode) != (record.prediction, record.correct, record.correct_public,
                                                       record.scoring):
                update = {"prediction": prediction, "correct": correct, "correct_public": public, "scoring": mode}
                record = record.model_copy(update=update).with_note(
                    f"re-scored by rejudge.py ({mode} scoring): was {record.prediction!r}")
        out.append(record)
    return out


class ScoreRelabeller:
    what = "rejudge.py: scored again"
    said: dict[str, Any] = {}  # nothing more for the history: no judge, nothing asked over the network

    def __init__(self, options: dict[str, Any]):
        self.scoring = options.get("scoring")
        # a scoring asked for becomes the run's (config.json and metrics.json say it, its identity follows)
        self.settings = {"scoring": self.scoring} if self.scoring else {}

    async def relabel(self, records: list[EpisodeRecord]) -> list[EpisodeRecord]:
        return rescore_episodes(records, self.scoring)

    async def aclose(self) -> None:
        return None
