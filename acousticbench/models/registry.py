"""The registry: display name -> backend class (imported lazily) and what the model needs to run."""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from acousticbench.errors import unknown_name


@dataclass(frozen=True)
class ModelEntry:
    name: str
    backend: str  # "module:Class", imported only when the model is used, so --help stays fast
    family: str  # local | api | open-weight
    needs: str  # what the user must provide, in words
    description: str
    settings: dict[str, Any] = field(default_factory=dict)  # passed to the backend's constructor

    def create(self, **overrides: Any):
        """The backend object; `overrides` (from flags such as --endpoint) win over the registry settings."""
        module, cls = self.backend.split(":")
        settings = {**self.settings, **{k: v for k, v in overrides.items() if v is not None}}
        return getattr(importlib.import_module(module), cls)(self.name, **settings)


MODELS: dict[str, ModelEntry] = {
    m.name: m
    for m in (
        ModelEntry("Oracle", "acousticbench.models.oracle:Oracle", "local", "nothing",
                   "ideal observer that measures the signal: the task's ceiling"),
        ModelEntry("Random", "acousticbench.models.baselines:RandomChoice", "local", "nothing",
                   "uniform A/B, seeded by the run seed and question id: chance level"),
        ModelEntry("Always-A", "acousticbench.models.baselines:AlwaysA", "local", "nothing",
                   "always answers A: exactly 0.5 on the balanced scored questions"),
    )
}


def get_model(name: str) -> ModelEntry:
    if name not in MODELS:
        raise unknown_name("model", name, list(MODELS))
    return MODELS[name]


def models_table() -> str:
    rows = [("model", "family", "needs", "what it is")]
    rows += [(m.name, m.family, m.needs, m.description) for m in MODELS.values()]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return "\n".join(
        "  ".join(cell.ljust(widths[i]) if i < 3 else cell for i, cell in enumerate(row)) for row in rows
    )
