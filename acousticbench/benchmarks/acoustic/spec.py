"""RunSpec: everything that defines one run (model, task, seed, ...), frozen, plus the paths derived from it."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from acousticbench.benchmarks.acoustic.judge.modes import DEFAULT_JUDGE_MODEL, JudgeMode
from acousticbench.core.records import DEFAULT_SEED, GenerationConfig
from acousticbench.core.environment import safe_name

SplitChoice = Literal["all", "train", "eval"]


@dataclass(frozen=True)
class RunSpec:
    """One (model, task, seed) run of AcousticBench. The CLI turns flags into a list of these; nothing else reads flags."""

    benchmark: ClassVar[str] = "AcousticBench"
    model: str
    task: str
    seed: int = DEFAULT_SEED
    split: SplitChoice = "all"
    max_samples: int | None = None
    concurrency: int | Literal["auto"] | None = None  # None: auto for remote backends, else the backend's number
    archive: Path = Path("archive")
    results_dir: Path = Path("results")
    judge: JudgeMode = "auto"
    judge_model: str = DEFAULT_JUDGE_MODEL
    judge_endpoint: str | None = None  # any OpenAI-compatible server; default $ACOUSTICBENCH_JUDGE_ENDPOINT, else OpenAI
    resume: bool = False
    max_error_rate: float = 0.10
    generation: GenerationConfig = field(default_factory=GenerationConfig)
    endpoint: str | None = None  # --endpoint: overrides the model's endpoint variable
    api_model: str | None = None  # --api-model: overrides the provider's model id

    def backend_overrides(self) -> dict[str, Any]:
        """Settings from flags that the backend constructor takes; None means 'use the registry's'."""
        return {"endpoint": self.endpoint, "api_model": self.api_model,
                "temperature": self.generation.temperature, "max_tokens": self.generation.max_tokens,
                "logprobs": True if self.judge == "logprobs" else None}

    def run_prefix(self, backend_name: str) -> str:
        """Folder name without the timestamp: '<Model>-<task>-<backend>-seed<N>'."""
        return f"{safe_name(self.model)}-{self.task}-{backend_name}-seed{self.seed}"

    @property
    def cell(self) -> str:
        """The run's place under a model in reference_trajectories/ and in sweep tables: the task."""
        return self.task

    def requirements(self) -> dict[str, str]:
        """What the run needs of its model's server (a capability the catalog lists), and the line when it lacks it."""
        if self.judge != "logprobs":
            return {}
        return {"logprobs": "--judge logprobs needs a server that returns token logprobs (vLLM, or ours with "
                            "Tiny-Qwen2-Audio); {model} gives none: use --judge auto, rules or llm."}

    def reference_fields(self) -> dict[str, Any]:
        """What a reference summary.json records about the run beyond model and task: nothing more."""
        return {}

    def label(self) -> str:
        return f"{self.model} on {self.task} (seed {self.seed})"

    def settings(self) -> dict[str, Any]:
        """What must match for --resume to continue a run (the folder name already fixes model, task, seed)."""
        return {"split": self.split, "max_samples": self.max_samples, "judge": self.judge,
                "judge_model": self.judge_model, "temperature": self.generation.temperature,
                "max_tokens": self.generation.max_tokens, "api_model": self.api_model}

    def to_json(self) -> dict[str, Any]:
        data = {"benchmark": self.benchmark, **asdict(self)}
        data["archive"] = str(self.archive)
        data["results_dir"] = str(self.results_dir)
        return data
