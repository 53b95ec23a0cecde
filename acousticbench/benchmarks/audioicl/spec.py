"""AudioICL's own settings (shots, prompt style, scoring, its pack's folders), each a flag of its own, and its specs."""
from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import field_validator

from acousticbench.benchmarks.audioicl import SHOTS, parse_shots
from acousticbench.benchmarks.audioicl.pack import default_base, default_meta
from acousticbench.benchmarks.audioicl.prompts import Style
from acousticbench.benchmarks.audioicl.scoring import Scoring
from acousticbench.core.errors import UserError
from acousticbench.core.settings import BenchmarkOptions, RunSettings, RunSpec, make_spec, setting, whole_numbers

NAME = "AudioICL"


class ICLOptions(BenchmarkOptions):
    """What an AudioICL run asks beyond the harness's settings: its k, its prompt and scoring, where its pack is."""

    VARIANT: ClassVar[tuple[str, str]] = ("shots", "k")  # each k is a run of its own: '<task>/k3', '... k=3'

    shot_counts: tuple[int, ...] = setting(SHOTS, "comma list of k, e.g. 1,3,5 (default 1,2,3,4,5)", flag="--shots")
    prompt_style: Style = setting("specific", "instruction before the demos: per task (default), one for all tasks, "
                                  "or none")
    scoring: Scoring = setting("strict", "strict: the public eval_str.py rules (default); lenient: number words count too")
    meta_dir: Path | None = setting(None, "folder of meta_k{k}.jsonl (default <archive>/audioicl/meta)",
                                    flag="--icl-meta", metavar="DIR")
    base_dir: Path | None = setting(None, "folder the episodes' audio paths are relative to, the one holding data/ "
                                    "(default <archive>/audioicl)", flag="--icl-base", metavar="DIR")
    pad: bool = setting(False, "pad every clip of an episode with silence to the longest (off: it erases "
                        "AudioLength's cue)", flag="--icl-pad")
    morse_alphabet: Path | None = setting(None, "A.wav..Z.wav sent before the MorseCode demos (the open pack's: "
                                          "<archive>/audioicl/data/MorseCode/alphabet)", metavar="DIR")
    demo_order: Literal["file", "permuted"] = setting(
        "file", "the demos in the file's order (default), or permuted per seed and episode (declared, deterministic): "
        "the seeds then measure the spread over orders")
    plot: Path | None = setting(None, "after the runs, plot accuracy against shots per task", metavar="FILE.png",
                                per_run=False)

    @field_validator("shot_counts", mode="before")
    @classmethod
    def _shots(cls, value: Any) -> Any:
        return tuple(parse_shots(",".join(str(k) for k in whole_numbers(value, "--shots", "1,3,5"))))

    def variants(self) -> list[int | None]:
        return list(self.shot_counts)

    def resume_key(self, spec: RunSpec) -> dict[str, Any]:
        return {"meta": str(meta_of(spec)), "base": str(base_of(spec)), "prompt_style": self.prompt_style,
                "scoring": self.scoring, "pad": self.pad, "morse_alphabet": str(self.morse_alphabet or ""),
                **({"demo_order": self.demo_order} if self.demo_order != "file" else {})}

    def check(self, settings: RunSettings) -> None:
        if self.plot and not settings.dry_run:
            import importlib.util

            if importlib.util.find_spec("matplotlib") is None:  # known now, not after every run has been paid for
                raise UserError("--plot needs matplotlib: pip install -e '.[plot]', or drop --plot.")


def meta_of(spec: RunSpec) -> Path:
    """The folder of meta_k{k}.jsonl the run reads."""
    return spec.options.meta_dir or default_meta(spec.settings.archive)


def base_of(spec: RunSpec) -> Path:
    """The folder the episodes' audio paths are relative to."""
    return spec.options.base_dir or default_base(spec.settings.archive)


def icl_spec(**fields: Any) -> RunSpec:
    """One AudioICL run from flat fields (model, task, shots=k, seed, archive, scoring, ...), as config.json's `spec`."""
    return make_spec(NAME, ICLOptions, **fields)
