"""ICLRunSpec: everything that defines one AudioICL run (model, task, k, seed, prompt style, ...), frozen."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from acousticbench.benchmarks.audioicl.pack import default_base, default_meta
from acousticbench.benchmarks.audioicl.prompts import Style
from acousticbench.benchmarks.audioicl.scoring import Scoring
from acousticbench.core.records import DEFAULT_SEED, GenerationConfig
from acousticbench.core.environment import safe_name


@dataclass(frozen=True)
class ICLRunSpec:
    """One (model, task, k, seed) run of AudioICL; the CLI turns flags into a list of these."""

    benchmark: ClassVar[str] = "AudioICL"
    split: ClassVar[str] = "all"  # episodes have no train/eval halves: a run covers the whole task
    model: str
    task: str
    shots: int
    seed: int = DEFAULT_SEED
    max_samples: int | None = None  # the first N episodes in id order: the same episodes for every k and seed
    concurrency: int | Literal["auto"] | None = None  # None: auto for remote backends, else the backend's number
    archive: Path = Path("archive")
    results_dir: Path = Path("results")
    meta_dir: Path | None = None  # --icl-meta; default <archive>/audioicl/meta
    base_dir: Path | None = None  # --icl-base, the folder holding data/; default <archive>/audioicl
    prompt_style: Style = "specific"
    scoring: Scoring = "strict"
    pad: bool = False  # --icl-pad
    morse_alphabet: Path | None = None  # --morse-alphabet: A.wav .. Z.wav sent before MorseCode demos
    resume: bool = False
    max_error_rate: float = 0.10
    generation: GenerationConfig = field(default_factory=GenerationConfig)
    endpoint: str | None = None
    api_model: str | None = None

    def reference_fields(self) -> dict[str, Any]:
        """What a reference summary.json records about the run beyond model and task: the k."""
        return {"shots": self.shots}

    @property
    def meta(self) -> Path:
        return self.meta_dir or default_meta(self.archive)

    @property
    def base(self) -> Path:
        return self.base_dir or default_base(self.archive)

    def backend_overrides(self) -> dict[str, Any]:
        return {"endpoint": self.endpoint, "api_model": self.api_model,
                "temperature": self.generation.temperature, "max_tokens": self.generation.max_tokens}

    def run_prefix(self, backend_name: str) -> str:
        """Folder name without the timestamp: '<Model>-<Task>-k<k>-<backend>-seed<N>'."""
        return f"{safe_name(self.model)}-{self.task}-k{self.shots}-{backend_name}-seed{self.seed}"

    @property
    def cell(self) -> str:
        """The run's place under a model in reference_trajectories/ and in sweep tables: task and k."""
        return f"{self.task}/k{self.shots}"

    def label(self) -> str:
        return f"{self.model} on {self.task} k={self.shots} (seed {self.seed})"

    def settings(self) -> dict[str, Any]:
        """What makes two runs comparable beyond the prefix: --resume continues only a run with the same."""
        return {"meta": str(self.meta), "base": str(self.base), "prompt_style": self.prompt_style,
                "scoring": self.scoring, "pad": self.pad, "morse_alphabet": str(self.morse_alphabet or ""),
                "max_samples": self.max_samples, "temperature": self.generation.temperature,
                "max_tokens": self.generation.max_tokens, "api_model": self.api_model}

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("archive", "results_dir", "meta_dir", "base_dir", "morse_alphabet"):
            data[key] = None if data[key] is None else str(data[key])
        return {"benchmark": self.benchmark, **data}
