"""An adaptive run's tracks: each asks one trial, waits for its answer and places the next; the tracks of a run (and
the runs of a command) are asked at once through the model's one queue, so the server is kept busy.

A track depends only on its own answers, so a run is the same whatever the concurrency. A trial whose request failed
(status error) ends its track for this session: --resume replays the kept answers (the same trials, made again
byte for byte) and asks that trial again, so no later trial was ever placed without it."""
from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from acousticbench.benchmarks.acoustic.adaptive.folder import RunPack
from acousticbench.benchmarks.acoustic.adaptive.procedure import METHODS, estimate
from acousticbench.benchmarks.acoustic.adaptive.stimuli import TrialPlace, grid_of, is_catch, make_question
from acousticbench.benchmarks.acoustic.records import Question, Record
from acousticbench.core.errors import UserError

FINAL = frozenset({"answered", "unparsed", "refused", "truncated"})  # an answer the track goes on from
MIN_TRIALS_TO_STOP = 8  # the width rule waits for this many placed trials: a flat prior's first interval says little

Ask = Callable[[Question, Any], Awaitable[Record]]


def placed(records: list[Record]) -> list[tuple[float, bool]]:
    """(magnitude, correct) of the placed trials (not catch) among `records`, in trial order; an answer that is not
    an option (unparsed, refused, cut) counts as wrong, as the fixed pack's fit counts it."""
    ordered = sorted(records, key=lambda r: r.meta["adaptive"]["trial"])
    return [(r.meta["adaptive"]["magnitude"], r.correct is True) for r in ordered
            if r.meta.get("adaptive", {}).get("magnitude") is not None and r.status in FINAL]


class AdaptiveSource:
    """The trials of one adaptive run, made while it goes (Prepared.source)."""

    def __init__(self, spec: Any, make_prompt: Callable[[Any, Question, str], Any]):
        self.spec, self.make_prompt = spec, make_prompt  # the benchmark's: the Prompt a pack's question gets
        options = spec.options
        self.method, self.tracks = options.adaptive, options.adaptive_tracks
        self.trials, self.width = options.adaptive_trials, options.adaptive_width

    def planned(self) -> int:
        """The most requests the run may make (its tracks at the trial cap)."""
        return self.tracks * self.trials

    def owns(self, question_id: str) -> bool:
        """Whether an earlier session's record is one of this run's trials (--resume keeps it)."""
        if not hasattr(self, "_ids"):
            self._ids = {TrialPlace(self.spec.seed, self.spec.task, track, trial, self.method).qid
                         for track in range(self.tracks) for trial in range(self.trials)}
        return question_id in self._ids

    def feeds(self, run_dir: Path, kept: list[Record]) -> list[Callable[[Ask], Awaitable[None]]]:
        """A coroutine per track, each given the run's ask(question, prompt) -> record."""
        pack = RunPack(run_dir, self.spec.task)
        by_id = {r.id: r for r in kept}
        return [lambda ask, track=track: self._track(pack, track, by_id, ask) for track in range(self.tracks)]

    def stopped(self, trials: list[tuple[float, bool]]) -> bool:
        if self.width is None or len(trials) < MIN_TRIALS_TO_STOP:
            return False
        return estimate(grid_of(self.spec.task), trials).width <= self.width

    async def _track(self, pack: RunPack, track: int, kept: dict[str, Record], ask: Ask) -> None:
        choose, grid = METHODS[self.method], grid_of(self.spec.task)
        root = os.path.abspath(pack.root)
        trials: list[tuple[float, bool]] = []
        try:
            for index in range(self.trials):
                if self.stopped(trials):
                    break
                magnitude = None if is_catch(index) else choose(grid, trials)
                place = TrialPlace(self.spec.seed, self.spec.task, track, index, self.method)
                question = await asyncio.to_thread(make_question, pack.root, place, magnitude)
                pack.add(question)
                record = kept.get(question.id)
                if record is not None and record.meta != question.meta:
                    raise UserError(f"--resume: the earlier run's trial {question.id} was made otherwise than this "
                                    "harness makes it (another version of its generator): rerun without --resume.")
                record = record or await ask(question, self.make_prompt(self.spec, question, root))
                if record.status not in FINAL:
                    return  # this track waits for that answer: --resume asks it again
                if magnitude is not None:
                    trials.append((magnitude, record.correct is True))
        finally:
            pack.seal()
