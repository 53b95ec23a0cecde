"""What the API models cost (USD per 1M tokens, read from each provider on the date given) and how their audio becomes
tokens: the --dry-run plan estimates from it and every run's metrics.json prices its tokens with it. ACOUSTICBENCH_PRICES
(JSON, or the path of a JSON file) overrides any number: {"gpt-audio-mini": {"input_audio": 10.0}}."""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, fields, replace
from pathlib import Path

from acousticbench.core.errors import UserError

PRICES_VARIABLE = "ACOUSTICBENCH_PRICES"
CHARS_PER_TOKEN = 4  # OpenAI's rule of thumb for English text ("1 token ~= 4 chars"); no tokenizer is installed here
READ_ON = "2026-11-30"
_OPENAI_AUDIO = 10.0  # tokens per second of input audio: 1 per 100 ms, OpenAI's Realtime cost guide (unconfirmed here)
_GEMINI_AUDIO = 32.0  # tokens per second of audio, Gemini API docs (FACTS.md)


@dataclass(frozen=True)
class Price:
    input_text: float  # USD per 1M input text tokens
    input_audio: float | None  # USD per 1M input audio tokens; None: the model takes no audio
    output: float  # USD per 1M output tokens (Gemini: thinking tokens included)
    audio_tokens_per_s: float | None  # how the provider counts a second of input audio
    output_tokens: int  # what one answer is assumed to cost: a guess until a run measures it (metrics.json)
    read_on: str  # when the numbers were read
    source: str  # where, and which of them could not be confirmed


PRICES: dict[str, Price] = {
    "gpt-audio-mini": Price(0.60, 10.00, 2.40, _OPENAI_AUDIO, 16, READ_ON,
                            "developers.openai.com/api/docs/models/gpt-audio-mini (text in/out); audio input "
                            "unconfirmed: that page lists text tokens only, $10 is gpt-4o-mini-audio-preview's "
                            "documented audio rate (OpenRouter lists $0.60)"),
    "gpt-4o-audio-preview": Price(2.50, 40.00, 10.00, _OPENAI_AUDIO, 16, READ_ON,
                                  "unconfirmed: third-party copies of OpenAI's 2024-12-17 prices; retired 2026-05-07"),
    "gpt-4o-mini": Price(0.15, None, 0.60, None, 16, READ_ON,
                         "unconfirmed: vercel.com/ai-gateway/models/gpt-4o-mini and other copies of OpenAI's price"),
    "gpt-4o-mini-transcribe": Price(1.25, 3.00, 5.00, 1000 / 60, 0, READ_ON,
                                    "developers.openai.com/api/docs/models/compare (text $1.25 in, $5 out); audio $3 "
                                    "and ~1000 tokens per minute ($0.003/min) unconfirmed (halfpower.work's reading)"),
    "gemini-3.1-pro-preview": Price(2.00, 2.00, 12.00, _GEMINI_AUDIO, 1000, READ_ON,
                                    "unconfirmed: cloudprice.net and other copies of ai.google.dev/gemini-api/docs/"
                                    "pricing (prompts <= 200k tokens); audio assumed at the text rate"),
    "gemini-3-flash-preview": Price(0.50, 1.00, 3.00, _GEMINI_AUDIO, 500, READ_ON,
                                    "ai.google.dev/gemini-api/docs/pricing as quoted verbatim by factquire.com "
                                    "(accessed 2026-07-04): $0.50 text, $1.00 audio, $3.00 output"),
}


def _override() -> dict:
    text = os.environ.get(PRICES_VARIABLE, "").strip()
    if not text:
        return {}
    try:
        data = json.loads(text if text.startswith("{") else Path(text).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise UserError(f"{PRICES_VARIABLE} is neither JSON nor a readable JSON file ({err}): give e.g. "
                        '{"gpt-audio-mini": {"input_audio": 10.0}}') from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise UserError(f"{PRICES_VARIABLE}: give an object of models, e.g. {{\"gpt-audio-mini\": {{\"output\": 2.4}}}}.")
    return data


def price_table() -> dict[str, Price]:
    """The table with ACOUSTICBENCH_PRICES applied: a model's numbers replaced, or a model of its own added."""
    table = dict(PRICES)
    names = {f.name for f in fields(Price)}
    for model, values in _override().items():
        unknown = set(values) - names
        if unknown:
            raise UserError(f"{PRICES_VARIABLE}: {model} has unknown field(s) {', '.join(sorted(unknown))} (known: "
                            f"{', '.join(sorted(names))}).")
        for name, value in values.items():
            _check_number(model, name, value)
        base = table.get(model)
        values = {"source": f"{PRICES_VARIABLE}", "read_on": "set by the user", **values}
        try:
            table[model] = replace(base, **values) if base else Price(**values)
        except TypeError:
            raise UserError(f"{PRICES_VARIABLE}: {model} is not in the table, so give every field: "
                            f"{', '.join(sorted(names))}.") from None
    return table


_NUMBERS = {"input_text", "input_audio", "output", "audio_tokens_per_s", "output_tokens"}
_MAY_BE_NULL = {"input_audio", "audio_tokens_per_s"}  # a model that takes no audio


def _check_number(model: str, name: str, value: object) -> None:
    """A price field as the table holds it: a finite number of 0 or more (a count a whole one); one line otherwise."""
    if name not in _NUMBERS or (value is None and name in _MAY_BE_NULL):
        return
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not number or not math.isfinite(value) or value < 0 or (name == "output_tokens" and value != int(value)):
        kind = "a whole number of 0 or more" if name == "output_tokens" else "a finite number of 0 or more"
        raise UserError(f"{PRICES_VARIABLE}: {model}'s {name} is {value!r}, not {kind}: fix it or unset "
                        f"{PRICES_VARIABLE}.")


def audio_tokens(price: Price, seconds: list[float]) -> int:
    """Tokens for the clips of one request, each rounded up as a provider counts whole tokens."""
    return sum(math.ceil(s * price.audio_tokens_per_s) for s in seconds) if price.audio_tokens_per_s else 0


def text_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def usd(price: Price, input_text: int, input_audio: int, output: int) -> float:
    return (input_text * price.input_text + input_audio * (price.input_audio or price.input_text)
            + output * price.output) / 1e6


def contradicts_itself(usage: dict[str, int]) -> bool:
    """Whether one reply's counts cannot all be true: more audio tokens than its prompt's total."""
    return split_usage(usage)[0] < 0  # the text share is the prompt's total less its audio


def split_usage(usage: dict[str, int]) -> tuple[int, int, int]:
    """(input text, input audio, output) tokens of a usage total, as OpenAI or Gemini name them."""
    prompt = usage.get("prompt_tokens", usage.get("prompt_token_count", 0))
    audio = usage.get("prompt_tokens_details.audio_tokens", usage.get("prompt_tokens_details.AUDIO", 0))
    output = usage.get("completion_tokens", usage.get("candidates_token_count", 0) + usage.get("thoughts_token_count", 0))
    return prompt - audio, audio, output
