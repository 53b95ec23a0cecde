"""AcousticBench's own settings (split and judge), each a flag of its own, and its runs' specs."""
from __future__ import annotations

from typing import Any, Literal

from acousticbench.benchmarks.acoustic.judge.modes import DEFAULT_JUDGE_MODEL, JudgeMode
from acousticbench.core.settings import BenchmarkOptions, RunSettings, RunSpec, make_spec, setting

SplitChoice = Literal["all", "train", "eval"]
AdaptiveMethod = Literal["psi", "staircase"]
ADAPTIVE_FIELDS = ("adaptive_trials", "adaptive_tracks", "adaptive_width")
NAME = "AcousticBench"


class AcousticOptions(BenchmarkOptions):
    """What an AcousticBench run asks beyond the harness's settings: which half of the pack, and how a label is read."""

    split: SplitChoice = setting("all", "the pack's half: all (default), train or eval")
    judge: JudgeMode = setting(
        "auto", "auto: strict rules first, the LLM judge for the rest (rules alone when no judge key is set); llm: the "
        "LLM judge for every answer (the paper's setting); rules: no LLM; logprobs: P(A) against P(B) as the first "
        "answer token, for servers that return logprobs (vLLM, ours)")
    judge_model: str = setting(DEFAULT_JUDGE_MODEL, f"the LLM judge's model (default {DEFAULT_JUDGE_MODEL})")
    judge_endpoint: str | None = setting(None, "OpenAI-compatible URL for the judge (default "
                                         "$ACOUSTICBENCH_JUDGE_ENDPOINT, else the OpenAI API)")
    adaptive: AdaptiveMethod | None = setting(
        None, "measure the threshold adaptively instead of asking the pack: psi (the Psi method: each trial where it "
        "is most informative, a stated prior) or staircase (2-down-1-up); each trial generated on demand into the "
        "run folder (docs/adaptive.md)", metavar="psi|staircase")
    adaptive_trials: int = setting(60, "--adaptive: the most trials of each track, catch trials included (default 60)",
                                   metavar="N", ge=1, le=9999)
    adaptive_tracks: int = setting(4, "--adaptive: tracks per run, a trial of each asked at once in rounds (default 4)", metavar="N",
                                   ge=1, le=99)
    adaptive_width: float | None = setting(
        None, "--adaptive: the run also stops once the high end of its threshold's 95% interval is at most W times "
        "its low end (e.g. 2); default: only the trial count stops it", metavar="W", gt=1.0,
        allow_inf_nan=False)

    def check(self, settings: RunSettings) -> None:
        from acousticbench.core.checks import check_url
        from acousticbench.core.errors import UserError
        from acousticbench.core.settings import flag_of

        for url in (self.judge_endpoint or "").split(","):
            if url.strip():
                check_url(url.strip(), "--judge-endpoint")
        for name in ADAPTIVE_FIELDS:
            if name in self.model_fields_set and self.adaptive is None:
                raise UserError(f"{flag_of(AcousticOptions, name)} has effect only with --adaptive psi or staircase: "
                                "add one, or drop it.")
        if self.adaptive and settings.control:  # a control replaces a pack's clips; these are made as the run goes
            raise UserError("--control cannot be run with --adaptive: run the controls on the pack, without "
                            "--adaptive.")
        if self.adaptive and (self.split != "all" or settings.max_samples is not None):
            raise UserError("--adaptive makes its own questions: drop --split and --max-samples (--adaptive-trials "
                            "and --adaptive-tracks set how many it asks).")
        for name in ("judge_model", "judge_endpoint"):  # only the LLM judge reads them
            if name in self.model_fields_set and self.judge not in ("auto", "llm"):
                raise UserError(f"{flag_of(AcousticOptions, name)} has no effect with --judge {self.judge}, which asks "
                                "no LLM judge: drop it, or use --judge auto or llm.")

    def resume_key(self, spec: RunSpec) -> dict[str, Any]:
        """The split and the judge, with the versions of the rules and of the LLM judge's prompt where they label:
        a harness updated between two sessions of a run must not label its halves two ways."""
        from acousticbench.benchmarks.acoustic.judge import JUDGE_PROMPT_VERSION, RULES_VERSION

        versions = {"judge_rules_version": RULES_VERSION if self.judge in ("auto", "rules") else None,
                    "judge_prompt_version": JUDGE_PROMPT_VERSION if self.judge in ("auto", "llm") else None}
        adaptive = {} if self.adaptive is None else {"adaptive": self.adaptive, **{k: getattr(self, k) for k in ADAPTIVE_FIELDS}}
        return {"split": self.split, "judge": self.judge, "judge_model": self.judge_model, **versions, **adaptive}

    def kind(self) -> str:
        return f"adaptive {self.adaptive}" if self.adaptive else ""

    def backend_overrides(self) -> dict[str, Any]:
        return {"logprobs": True if self.judge == "logprobs" else None}

    def requirements(self) -> dict[str, str]:
        if self.judge != "logprobs":
            return {}
        return {"logprobs": "--judge logprobs needs a server that returns token logprobs (vLLM, or ours with "
                            "Tiny-Qwen2-Audio); {model} gives none: use --judge auto, rules or llm."}


def acoustic_spec(**fields: Any) -> RunSpec:
    """One AcousticBench run from flat fields (model, task, seed, archive, judge, ...), as config.json's `spec`."""
    return make_spec(NAME, AcousticOptions, **fields)
