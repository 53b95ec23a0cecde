"""AcousticBench's own settings (split and judge), each a flag of its own, and its runs' specs."""
from __future__ import annotations

from typing import Any, Literal

from acousticbench.benchmarks.acoustic.judge.modes import DEFAULT_JUDGE_MODEL, JudgeMode
from acousticbench.core.settings import BenchmarkOptions, RunSettings, RunSpec, make_spec, setting

SplitChoice = Literal["all", "train", "eval"]
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

    def check(self, settings: RunSettings) -> None:
        from acousticbench.core.checks import check_url
        from acousticbench.core.errors import UserError
        from acousticbench.core.settings import flag_of

        for url in (self.judge_endpoint or "").split(","):
            if url.strip():
                check_url(url.strip(), "--judge-endpoint")
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
        return {"split": self.split, "judge": self.judge, "judge_model": self.judge_model, **versions}

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
