"""The judge's modes and default model: settings the flags, the specs and the judge all name (a leaf, imports nothing)."""
from __future__ import annotations

from typing import Literal

JudgeMode = Literal["auto", "llm", "rules", "logprobs"]
DEFAULT_JUDGE_MODEL = "gpt-4o-mini"  # the paper's; OpenAI retires it on 2027-01-14 (judge/retirement.py)
