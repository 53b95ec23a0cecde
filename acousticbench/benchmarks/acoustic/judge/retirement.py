"""Judge models OpenAI has scheduled to shut down: a warning before the date, an error after it (with the fix)."""
from __future__ import annotations

import datetime as dt
from urllib.parse import urlparse

from acousticbench.core.errors import AcousticBenchError

# OpenAI's deprecations page (checked 2026-11/12 through secondary sources; no API key here to read shutdown_date)
SHUTDOWNS = {
    "gpt-4o-mini": "2027-01-14", "gpt-4o-mini-2024-07-18": "2027-01-14",  # the paper's judge
    "gpt-4o": "2027-01-14", "gpt-4.1": "2027-01-14", "gpt-4.1-mini": "2027-01-14",
    "gpt-4.1-mini-2025-04-14": "2027-01-14", "gpt-5-mini": "2026-12-11", "gpt-5-mini-2025-08-07": "2026-12-11",
}
FIX = "pick a current model with --judge-model (docs/judging.md, Choosing the judge model: how to check it agrees)"


class RetiredJudgeModel(AcousticBenchError):
    """The judge model was shut down by OpenAI; every judge call would fail. Not a UserError on purpose: --judge auto
    must not fall back to the rules in silence when the user's judge is gone."""

    exit_code = 2


def retirement_notice(model: str, base_url: str | None, today: dt.date | None = None) -> str | None:
    """A warning line while `model` is scheduled to shut down; raises RetiredJudgeModel once it has, on OpenAI's API.
    Another endpoint may still serve a model of that name (a local server, a provider that keeps it): a warning."""
    date = SHUTDOWNS.get(model)
    if date is None:
        return None
    today = today or dt.date.today()
    on_openai = base_url is None or urlparse(base_url).hostname == "api.openai.com"
    if today < dt.date.fromisoformat(date):
        return f"warning: judge model {model} is scheduled to shut down on {date} (OpenAI): {FIX}."
    if on_openai:
        raise RetiredJudgeModel(f"judge model {model} was shut down by OpenAI on {date}: {FIX}, "
                                "or judge with the rules alone (--judge rules).")
    return f"warning: judge model {model} was shut down by OpenAI on {date}; {base_url} may still serve it: {FIX}."
