"""A sweep's progress on a terminal: one labelled bar per model, and the lines printed while the bars are up.

Each model's bar names the model and, as its answers arrive, the run they belong to (task, k, seed) and the errors
so far. Lines printed during the sweep (each run's summary) go through the reporter (core/reporter.py), which clears
the bars, prints the line whole and redraws them, so a line never starts inside a bar. Without bars (no terminal on
stderr, or a Python call given no reporter) tqdm is never imported."""
from __future__ import annotations

from typing import Any

from acousticbench.core.reporter import current


class NoBar:
    """A model's bar where there is no terminal: counts nothing, shows nothing."""

    def update(self, n: int = 1) -> None:
        return None

    def show(self, run: str, failed: bool) -> None:
        return None

    def close(self) -> None:
        return None


class ModelBar:
    """One model's tqdm bar: '<model>: 40%|... | 380/950 [00:02<00:03, 150q/s, AudioCount k=3 (seed 42), 2 errors]'."""

    def __init__(self, model: str, total: int, position: int):
        from tqdm import tqdm

        self.errors = 0
        self.run = ""
        self._bar = tqdm(total=total, desc=model, unit="q", position=position, leave=True, dynamic_ncols=True)

    def update(self, n: int = 1) -> None:
        self._bar.update(n)

    def show(self, run: str, failed: bool) -> None:
        """The run the latest answer belongs to and the errors so far; drawn at the bar's next refresh."""
        self.errors += failed
        if run != self.run or failed:
            self.run = run
            self._bar.set_postfix_str(f"{run}, {self.errors} error{'s' * (self.errors != 1)}", refresh=False)

    def close(self) -> None:
        self._bar.close()


class Progress:
    """The bars of one command (none without a terminal) and the way to print while they are drawn."""

    def __init__(self, enabled: bool | None = None):
        self.enabled = current().progress() if enabled is None else enabled
        self._bars: dict[Any, ModelBar | NoBar] = {}

    def start(self, totals: dict[Any, tuple[str, int]]) -> None:
        """A bar per model session: key -> (the model's name, the questions of all its runs)."""
        for position, (key, (model, total)) in enumerate(totals.items()):
            self._bars[key] = ModelBar(model, total, position) if self.enabled else NoBar()

    def bar(self, key: Any) -> ModelBar | NoBar:
        return self._bars.get(key) or NoBar()


    def close(self) -> None:
        for bar in self._bars.values():
            bar.close()
        self._bars = {}
