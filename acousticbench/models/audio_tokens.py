"""How many tokens a model's server turns a second of audio into, with where that comes from: each record's expected
audio tokens, beside those the server reported, show audio that was cut or dropped on the way to the model."""
from __future__ import annotations

import math
from dataclasses import dataclass

WHISPER_POOLED = "whisper-pooled"  # Qwen2-Audio's count: 100 mel frames a second, a stride-2 conv, a stride-2 pool


@dataclass(frozen=True)
class AudioTokens:
    per_s: float  # tokens per second of audio (a rate: the count of a clip is rounded up)
    source: str  # where the rate comes from, and whether it could be confirmed
    counted: str = "audio"  # "audio": the server reports the audio tokens apart; "prompt": only the prompt's total
    rule: str = "per-second"  # per-second, or WHISPER_POOLED (the exact count of Qwen2-Audio's processor)
    least: float = 0.8  # a record with fewer than this share of its expected tokens did not get its audio whole

    def of_clip(self, seconds: float) -> int:
        if self.rule == WHISPER_POOLED:
            # vLLM qwen2_audio.py / transformers Qwen2AudioEncoder._get_feat_extract_output_lengths: mel frames
            # (10 ms hop) -> (L - 1) // 2 + 1 after conv2 -> (L - 2) // 2 + 1 after the average pool
            frames = round(seconds * 16_000) // 160  # its feature extractor's hop: 160 samples at 16 kHz
            return max(0, ((frames - 1) // 2 + 1 - 2) // 2 + 1) if frames else 0
        return math.ceil(seconds * self.per_s)

    def expected(self, seconds: list[float]) -> int:
        return sum(self.of_clip(s) for s in seconds)

    def describe(self) -> dict:
        return {"per_s": self.per_s, "counted": self.counted, "rule": self.rule, "source": self.source}


OPENAI = AudioTokens(10.0, "OpenAI: 1 token per 100 ms of input audio (its Realtime cost guide; not confirmed for "
                     "chat completions' prompt_tokens_details.audio_tokens), so only a loss of half is called one",
                     least=0.5)
GEMINI = AudioTokens(32.0, "ai.google.dev/gemini-api/docs/audio: each second of audio is 32 tokens "
                     "(usage_metadata.prompt_tokens_details, modality AUDIO)")
QWEN2_AUDIO = AudioTokens(25.0, "vllm/model_executor/models/qwen2_audio.py (transformers Qwen2AudioEncoder): 100 mel "
                          "frames/s, stride-2 conv and stride-2 pool, 25 tokens/s; vLLM reports only prompt_tokens",
                          counted="prompt", rule=WHISPER_POOLED)
QWEN2_5_OMNI = AudioTokens(25.0, "vllm/model_executor/models/qwen2_5_omni_thinker.py: Qwen2-Audio's encoder "
                           "(40 ms per token); vLLM reports only prompt_tokens", counted="prompt", rule=WHISPER_POOLED)
QWEN3_OMNI = AudioTokens(13.0, "vllm/model_executor/models/qwen3_omni_moe_thinker.py _get_feat_extract_output_lengths: "
                         "13 tokens per 100 mel frames (1 s); vLLM reports only prompt_tokens", counted="prompt")


def reported(usage: dict[str, int], rate: AudioTokens) -> int | None:
    """The audio tokens the server says it consumed (or, where it reports none apart, its prompt's total, which holds
    them); None when the reply carried no count."""
    if rate.counted == "audio":
        for key in ("prompt_tokens_details.audio_tokens", "prompt_tokens_details.AUDIO"):
            if key in usage:
                return usage[key]
        return None
    return usage.get("prompt_tokens")
