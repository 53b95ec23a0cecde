"""The LLM judge: an OpenAI-compatible chat model reads a response and says which option it commits to."""
from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Awaitable, Callable
from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, Field

from acousticbench.core.errors import AcousticBenchError, BackendError, UserError
from acousticbench.core.jsontext import sendable
from acousticbench.benchmarks.acoustic.judge.cache import JudgeCache, cache_key
from acousticbench.models.chat_wire import retry_after_s, retryable_status
from acousticbench.models.redirects import Origins, moved_elsewhere
from acousticbench.benchmarks.acoustic.records import Judgement
from acousticbench.engine.retry import RetryPolicy, with_retries
from acousticbench.core.environment import JUDGE_ENDPOINT
from acousticbench.benchmarks.acoustic.judge.modes import DEFAULT_JUDGE_MODEL

JUDGE_PROMPT_VERSION = "judge-2"  # judge-2: told when the token limit cut the answer (cache keys changed)
SYSTEM_PROMPT = """\
You read the answer that an audio-language model gave to a question with two options, A and B, and report \
which option the answer commits to. You do not hear the audio and you are not told the correct option: do not \
judge whether the answer is right, only what it says.

- label "A" or "B": the answer's final choice is that option, given by its letter or by describing that option \
unambiguously (for example "the second clip is louder" when B means the second clip).
- label "none": the answer chooses neither option, chooses both, hedges between them, contradicts itself without \
settling, only repeats the question or the options, asks for the audio, or stops before giving a choice.
- Reasoning (for example inside <think> tags) that comes before a final answer does not count; the final answer \
does. When the answer changes its mind, the last choice it states counts.
- When the answer is marked as cut off by a token limit, it stops mid-way: label only a choice it states as its \
final answer before the cut; a letter met in reasoning that the cut interrupted is "none".
- refused: true when the answer declines, or says it cannot hear, receive or process audio, instead of choosing. \
A refused answer has the label "none".
- reason: one short sentence."""
USER_TEMPLATE = """\
Question:
<question>
{question}
</question>

Answer to read{cut}:
<answer>
{response}
</answer>"""
CUT_MARK = " (cut off by the model's token limit: it stops mid-way)"
JUDGE_PROMPT_SHA256 = hashlib.sha256(f"{SYSTEM_PROMPT}\n\n{USER_TEMPLATE}".encode("utf-8")).hexdigest()
PROBE_QUESTION = "Which clip is louder?\nA. The first clip\nB. The second clip"
PROBE_ANSWER = "A. The first clip is louder."
MAX_RESPONSE_CHARS = 24_000  # the final answer is at the end: a longer response keeps its tail
_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}
OPENAI_ENDPOINT = "https://api.openai.com/v1"  # explicit, so OPENAI_BASE_URL set for a model never reroutes the judge


class Verdict(BaseModel):
    """The judge model's structured reply."""

    label: Literal["A", "B", "none"] = Field(description="The option the answer commits to, or none.")
    refused: bool = Field(description="The answer declines or says it cannot perceive the audio.")
    reason: str = Field(description="One short sentence.")


class JudgeFailed(AcousticBenchError):
    """The judge gave no usable verdict (after retries, or a malformed or declined reply). `judgement` is what to
    record instead: unparsed, by nobody, never a guessed label."""

    def __init__(self, message: str):
        super().__init__(message)
        self.judgement = Judgement(chosen=None, status="unparsed", method="none")


def messages_for(question: str, response: str, cut: bool = False) -> list[dict[str, str]]:
    """The two messages the judge model sees: the instructions, then the question and the response (no answer key),
    marked when the token limit cut it."""
    if len(response) > MAX_RESPONSE_CHARS:
        response = "[... earlier text omitted ...]\n" + response[-MAX_RESPONSE_CHARS:]
    response = sendable(response)  # invalid Unicode cannot go in a request; the record keeps it as sent
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": USER_TEMPLATE.format(question=question, response=response,
                                                                  cut=CUT_MARK if cut else "")}]


def _api_key(api_key: str | None, base_url: str | None) -> str:
    key = api_key or os.environ.get("OPENAI_API_KEY")
    if key:
        return key
    if base_url and urlparse(base_url).hostname in _LOCAL_HOSTS:
        return "local-judge"  # a local server ignores the key, but the SDK wants one
    raise UserError("the LLM judge needs an API key: set OPENAI_API_KEY, point the judge at a local endpoint, "
                    "or judge with the rules alone (`acousticbench run ... --judge rules`; `acousticbench judge "
                    "extract --rules-only`).")


class LLMJudge:
    """One judge model behind one endpoint, with a disk cache and a bound on concurrent calls; it retries through the
    engine's policy (acousticbench.engine.retry: 408/409/429 and 5xx, honouring Retry-After); the SDK's retries are off."""

    def __init__(self, model: str = DEFAULT_JUDGE_MODEL, base_url: str | None = None, *, api_key: str | None = None,
                 cache: JudgeCache | None = None, max_attempts: int = 4, timeout_s: float = 60.0,
                 max_retry_after_s: float = 120.0, concurrency: int = 8,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep):
        self.model, self.base_url, self.cache = model, base_url or OPENAI_ENDPOINT, cache
        self.policy = RetryPolicy(max_attempts=max_attempts, timeout_s=timeout_s, max_retry_after_s=max_retry_after_s)
        self._key = _api_key(api_key, base_url)
        self._sleep = sleep
        self._semaphore = asyncio.Semaphore(concurrency)
        self._client: Any = None
        # where the verdicts really came from: a judge endpoint that redirects is said once and named in config.json
        self.origins = Origins(f"the LLM judge {model}", self.base_url, records=False)
        self._inflight: dict[str, asyncio.Future] = {}

    def provenance(self) -> dict[str, Any]:
        """For config.json: never the key."""
        return {"model": self.model, "endpoint": self.base_url, **moved_elsewhere([self.origins]),
                "prompt_version": JUDGE_PROMPT_VERSION, "prompt_sha256": JUDGE_PROMPT_SHA256}

    async def judge(self, question: str, response: str, cut: bool = False) -> Judgement:
        """The judge model's reading of `response` (`cut`: the token limit stopped it); raises JudgeFailed when there
        is no usable verdict."""
        version = JUDGE_PROMPT_VERSION + ("+cut" if cut else "")  # a cut answer is another question to the judge
        key = cache_key(self.model, version, question, response, self.base_url)
        cached = self.cache.get(key) if self.cache is not None else None
        if cached is not None:
            try:
                return self._judgement(Verdict.model_validate(cached))
            except ValueError:
                pass  # an entry edited by hand: ask again
        if key not in self._inflight:  # identical questions asked at once share one call
            self._inflight[key] = asyncio.ensure_future(self._ask_and_store(key, question, response, cut))
        try:
            verdict = await asyncio.shield(self._inflight[key])
        finally:
            if self._inflight.get(key) is not None and self._inflight[key].done():
                self._inflight.pop(key, None)
        return self._judgement(verdict)

    async def probe(self) -> None:
        """One verdict on a fixed, plainly written answer (cached after the first time), so a dead endpoint, a bad
        key or an unknown judge model stops a run before any model call is paid for."""
        try:
            await self.judge(PROBE_QUESTION, PROBE_ANSWER)
        except JudgeFailed as err:
            raise UserError(f"the LLM judge {self.model} at {self.base_url} gave no verdict ({err}): check "
                            f"--judge-endpoint / {JUDGE_ENDPOINT}, the key and --judge-model, or judge with the "
                            "rules alone (`acousticbench run ... --judge rules`; `acousticbench judge extract "
                            "--rules-only`).") from None

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    def _judgement(self, verdict: Verdict) -> Judgement:
        if verdict.label in ("A", "B"):
            return Judgement(chosen=verdict.label, status="answered", method="llm", model=self.model)
        status = "refused" if verdict.refused else "unparsed"
        return Judgement(chosen=None, status=status, method="llm", model=self.model)

    async def _ask_and_store(self, key: str, question: str, response: str, cut: bool) -> Verdict:
        async with self._semaphore:
            verdict = await self._ask(messages_for(question, response, cut), key)
        if self.cache is not None:
            self.cache.put(key, verdict.model_dump())
        return verdict

    def _openai(self) -> Any:
        if self._client is None:
            from openai import AsyncOpenAI, DefaultAsyncHttpxClient

            hooks = {"response": [self.origins.httpx_hook]}  # the SDK's client hears where every verdict came from
            self._client = AsyncOpenAI(api_key=self._key, base_url=self.base_url, max_retries=0,
                                       timeout=self.policy.timeout_s,
                                       http_client=DefaultAsyncHttpxClient(event_hooks=hooks))
        return self._client

    async def _ask(self, messages: list[dict[str, str]], key: str) -> Verdict:
        """One verdict, retrying what a later attempt can fix (rate limits, server errors, lost connections)."""
        result = await with_retries(lambda: self._call(messages), self.policy, key, sleep=self._sleep)
        if result.error is not None:
            raise JudgeFailed(f"{result.error} (attempt {result.attempts} of {self.policy.max_attempts})")
        return result.value

    async def _call(self, messages: list[dict[str, str]]) -> Verdict:
        """One request: a verdict, a BackendError that says whether asking again can help, or JudgeFailed."""
        import openai
        import pydantic

        try:
            raw = await self._openai().chat.completions.with_raw_response.parse(
                model=self.model, messages=messages, response_format=Verdict, temperature=0)
            completion = raw.parse()
        except pydantic.ValidationError:  # a server that does not enforce the schema: read what its reply says
            return self._read_leniently(raw.http_response)
        except openai.APIStatusError as err:
            code = err.status_code
            retryable = retryable_status(code)
            raise BackendError(f"HTTP {code} from the judge endpoint {self.base_url}", retryable=retryable,
                               retry_after=retry_after_s(err.response.headers) if retryable else None,
                               overloaded=code in (429, 503)) from None
        except openai.APIConnectionError as err:  # includes timeouts
            raise BackendError(f"judge endpoint {self.base_url} unreachable ({type(err).__name__})",
                               retryable=True) from None
        except (openai.LengthFinishReasonError, openai.ContentFilterFinishReasonError) as err:
            raise JudgeFailed(f"the judge model's reply is not a valid verdict ({type(err).__name__})") from None
        message = completion.choices[0].message
        if message.refusal or message.parsed is None:
            raise JudgeFailed(f"the judge model gave no verdict: {message.refusal or 'empty reply'}")
        return message.parsed

    @staticmethod
    def _read_leniently(response: Any) -> Verdict:
        """The verdict in a reply the strict schema refused (fenced, after a BOM or a sentence, "a" for "A"), or
        JudgeFailed where it holds none."""
        from acousticbench.benchmarks.acoustic.judge.verdict_text import lenient_verdict

        try:
            message = response.json()["choices"][0]["message"]
        except (ValueError, LookupError, TypeError):
            message = {}
        fields = lenient_verdict(message.get("content") if isinstance(message, dict) else None)
        if fields is None:
            raise JudgeFailed("the judge model's reply is not a valid verdict (ValidationError)")
        return Verdict.model_validate(fields)
