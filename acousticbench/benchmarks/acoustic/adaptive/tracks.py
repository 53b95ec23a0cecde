"""An adaptive run's tracks, asked in rounds: round k asks trial k of every track at once through the model's one
queue (so the server is kept busy), each placed from the answers of every track's trials before k.

A round's placements depend only on the answers of earlier rounds, never on which answer came first, so a run is
the same whatever the concurrency. A trial whose request failed (status error) ends the run's rounds for this
session: --resume replays the kept answers (the same trials, made again byte for byte) and asks that trial again, so
no later trial was ever placed without it."""
from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from acousticbench.benchmarks.acoustic.adaptive.folder import RunPack
from acousticbench.benchmarks.acoustic.adaptive.makers import trial_maker
from acousticbench.benchmarks.acoustic.adaptive.procedure import METHODS, Evidence
from acousticbench.benchmarks.acoustic.adaptive.stimuli import TrialPlace, grid_of, is_catch, make_question
from acousticbench.benchmarks.acoustic.records import Question, Record
from acousticbench.core.errors import UserError
from acousticbench.engine.executor import RunAborted

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

    def sample(self, root: Path) -> list[tuple[Question, Any]]:
        """What the plan counts of the run (--dry-run): its most requests, each as its first track's first trial
        made at the middle of its range under `root` (a temporary folder: a dry run writes nothing)."""
        grid = grid_of(self.spec.task)
        (Path(root) / self.spec.task / "audio").mkdir(parents=True, exist_ok=True)
        question = make_question(Path(root), TrialPlace(self.spec.seed, self.spec.task, 0, 0, self.method),
                                 grid.stimuli[len(grid.stimuli) // 2])
        return [(question, self.make_prompt(self.spec, question, os.path.abspath(root)))] * self.planned()

    def counted(self, records: list[Record]) -> dict[str, int]:
        """The finished run's config.json counts: the trials it asked (its n_items and n_questions)."""
        return {"n_items": len(records), "n_questions": len(records)}

    def owns(self, question_id: str) -> bool:
        """Whether an earlier session's record is one of this run's trials (--resume keeps it)."""
        if not hasattr(self, "_ids"):
            self._ids = {TrialPlace(self.spec.seed, self.spec.task, track, trial, self.method).qid
                         for track in range(self.tracks) for trial in range(self.trials)}
        return question_id in self._ids

    def feeds(self, run_dir: Path, kept: list[Record]) -> list[Callable[[Ask], Awaitable[None]]]:
        """One coroutine that asks the run's rounds, given the run's ask(question, prompt) -> record."""
        pack = RunPack(run_dir, self.spec.task)
        by_id = {r.id: r for r in kept}
        return [lambda ask: self._rounds(pack, by_id, ask)]

    def stopped(self, pooled: Evidence) -> bool:
        """The width rule, on the run's threshold: every track's trials together."""
        if self.width is None or len(pooled) < MIN_TRIALS_TO_STOP:
            return False
        return pooled.estimate().width <= self.width

    def _made(self, pack: RunPack, kept: dict[str, Record], question: Question) -> Question:
        """A trial made for this round, added to the run's pack (in track order: the file reads the same whatever
        finished making first)."""
        pack.add(question)
        record = kept.get(question.id)
        if record is not None and record.meta != question.meta:
            raise UserError(f"--resume: the earlier run's trial {question.id} was made otherwise than this "
                            "harness makes it (another version of its generator): rerun without --resume.")
        return question

    async def _rounds(self, pack: RunPack, kept: dict[str, Record], ask: Ask) -> None:
        place_round, grid = METHODS[self.method], grid_of(self.spec.task)
        root = os.path.abspath(pack.root)
        own: list[list[tuple[float, bool]]] = [[] for _ in range(self.tracks)]
        pooled = Evidence(grid)  # in (trial, track) order, as the threshold reads them back

        async def answer(question: Question) -> Record:
            return kept.get(question.id) or await ask(question, self.make_prompt(self.spec, question, root))

        try:
            with trial_maker(self.planned()) as make:
                for index in range(self.trials):
                    if self.stopped(pooled):
                        break
                    magnitudes = [None] * self.tracks if is_catch(index) else place_round(grid, pooled, own)
                    made = await asyncio.gather(*(make(pack.root, TrialPlace(
                        self.spec.seed, self.spec.task, track, index, self.method), magnitude)
                        for track, magnitude in enumerate(magnitudes)))  # a round's trials are made at once
                    questions = [self._made(pack, kept, question) for question in made]
                    records = await asyncio.gather(*(answer(q) for q in questions))
                    failed = next((r for r in records if r.status not in FINAL), None)
                    if failed is not None:  # the next round waits for that answer: the run stops unfinished
                        why = (failed.error or failed.status).rstrip(".")
                        raise RunAborted(f"trial {failed.id} has no answer ({why}), and no later trial can be placed "
                                         "without it")
                    for track, (magnitude, record) in enumerate(zip(magnitudes, records)):
                        if magnitude is not None:
                            own[track].append((magnitude, record.correct is True))
                            pooled.add(magnitude, record.correct is True)
        finally:
            pack.seal()
