"""A run's metrics.json held as its bytes and parsed when a field is read: thousands of runs' parsed metrics would
take a quarter of a gigabyte (50 KB each as objects, 6 KB as text); the last few hundred parsed are kept, since the
tools read a cell's runs together."""
from __future__ import annotations

from collections import OrderedDict
from typing import Any

KEPT = 512  # parsed metrics kept: more than a cell's seeds, so a table's pass over a cell parses each once

_parsed: OrderedDict[int, Any] = OrderedDict()


class MetricsWhenAsked:
    """Stands for the benchmark's typed metrics (Benchmark.metrics_type) of one run: every attribute is the parsed
    model's. `raw`: metrics.json's bytes, already validated once by the leaderboard."""

    __slots__ = ("_raw", "_type", "__weakref__")

    def __init__(self, raw: bytes, metrics_type: type):
        self._raw, self._type = raw, metrics_type

    def parsed(self) -> Any:
        key = id(self)
        model = _parsed.pop(key, None)
        if model is None:
            model = self._type.model_validate_json(self._raw)
        _parsed[key] = model  # the most recent last
        while len(_parsed) > KEPT:
            _parsed.popitem(last=False)
        return model

    def __getattr__(self, name: str) -> Any:
        return getattr(self.parsed(), name)

    def __del__(self):
        _parsed.pop(id(self), None)  # an id may be reused by another object once this one is gone
