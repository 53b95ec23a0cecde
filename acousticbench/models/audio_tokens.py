"""How many tokens a model's server turns a second of audio into, with where that comes from: each record's expected
audio tokens, beside those the server reported, show audio that was cut or dropped on the way to the model."""
from __future__ import annotations

import math
from dataclasses import dataclass

WHISPER_POOLED = "whisper-pooled"  # Qwen2-Audio's count: 100 mel frames a second, a stride-2 conv, a stride-2 pool
CHUNKS_30S = "30-s-chunks"  # Voxtral's: each clip padded to a whole number of 30 s windows before it is counted


@dataclass(frozen=True)
class AudioTokens:
    per_s: float | None  # tokens per second of audio (a rate: the count of a clip is rounded up); None: unknown
    source: str  # where the rate comes from, and whether it could be confirmed; "unknown: why" where it could not
    # "audio": the server reports the audio tokens apart; "prompt": only the prompt's total; "none": no count at all
    counted: str = "audio"
    rule: str = "per-second"  # per-second, WHISPER_POOLED (Qwen2-Audio's processor's exact count) or CHUNKS_30S
    least: float = 0.8  # a record with fewer than this share of its expected tokens did not get its audio whole

    def of_clip(self, seconds: float) -> int:
        if self.rule == WHISPER_POOLED:
            # vLLM qwen2_audio.py / transformers Qwen2AudioEncoder._get_feat_extract_output_lengths: mel frames
            # (10 ms hop) -> (L - 1) // 2 + 1 after conv2 -> (L - 2) // 2 + 1 after the average pool
            frames = round(seconds * 16_000) // 160  # its feature extractor's hop: 160 samples at 16 kHz
            return max(0, ((frames - 1) // 2 + 1 - 2) // 2 + 1) if frames else 0
        if self.rule == CHUNKS_30S:  # a second of silence or an hour, a window is counted whole
            return math.ceil(seconds / 30.0) * math.ceil(30.0 * self.per_s)
        return math.ceil(seconds * self.per_s)

    def expected(self, seconds: list[float]) -> int:
        return sum(self.of_clip(s) for s in seconds)

    def describe(self) -> dict:
        return {"per_s": self.per_s, "counted": self.counted, "rule": self.rule, "source": self.source}

    def line(self) -> str:
        """What the model registry says of it: the rate and what the harness does with it."""
        if self.per_s is None:
            return self.source  # "unknown: why"
        rate = f"{self.of_clip(30.0)} per started 30 s" if self.rule == CHUNKS_30S else f"{self.per_s:g} a second"
        return f"{rate} ({CHECKED[self.counted]}); source: {self.source.split(':')[0]}"


CHECKED = {"audio": "its server counts audio apart: each record checked",
           "prompt": "its server counts only the prompt's total: kept beside the expected count, not judged",
           "none": "its server reports no count: not checked"}


OPENAI = AudioTokens(10.0, "developers.openai.com/api/docs/guides/realtime-costs: audio tokens in user messages "
                     "are 1 token per 100 ms of audio (the Realtime API's; not confirmed for chat completions' "
                     "prompt_tokens_details.audio_tokens), so only a loss of half is called one", least=0.5)
GEMINI = AudioTokens(32.0, "ai.google.dev/gemini-api/docs/audio: each second of audio is 32 tokens "
                     "(usage_metadata.prompt_tokens_details, modality AUDIO)")
QWEN2_AUDIO = AudioTokens(25.0, "vllm/model_executor/models/qwen2_audio.py (transformers Qwen2AudioEncoder): 100 mel "
                          "frames/s, stride-2 conv and stride-2 pool, 25 tokens/s; vLLM reports only prompt_tokens",
                          counted="prompt", rule=WHISPER_POOLED)
QWEN2_5_OMNI = AudioTokens(25.0, "vllm/model_executor/models/qwen2_5_omni_thinker.py: Qwen2-Audio's encoder "
                           "(40 ms per token); vLLM reports only prompt_tokens", counted="prompt", rule=WHISPER_POOLED)
QWEN3_OMNI = AudioTokens(13.0, "vllm/model_executor/models/qwen3_omni_moe_thinker.py _get_feat_extract_output_lengths: "
                         "13 tokens per 100 mel frames (1 s); vLLM reports only prompt_tokens", counted="prompt")


def unknown(why: str) -> AudioTokens:
    """A model whose rate no vendor code establishes, or whose server reports nothing to set one against: said so,
    and no record of it is judged by its count."""
    return AudioTokens(None, f"unknown: {why}", counted="none")


VOXTRAL = AudioTokens(12.5, "transformers src/transformers/models/voxtral/processing_voxtral.py and "
                      "modeling_voxtral.py, mistral-common src/mistral_common/tokens/tokenizers/audio.py: each clip "
                      "padded to a multiple of 480000 samples (30 s of 3000 mel frames; chunk_length_s), the encoder's "
                      "1500 frames a window packed 4 to a token (intermediate_size 5120 = 4 x 1280; frame_rate "
                      "12.5), so 375 tokens per started 30 s; vLLM reports only prompt_tokens, and a clip cut short "
                      "still fills its window", counted="prompt", rule=CHUNKS_30S)
KIMI_AUDIO = AudioTokens(12.5, "MoonshotAI/Kimi-Audio kimia_infer/api/prompt_manager.py: GLM-4-Voice's tokenizer "
                         "(THUDM/GLM-4-Voice README: 12.5 discrete tokens per second) and Whisper features reshaped to "
                         "a quarter of their 50 Hz frames; our transformers server reports no prompt count "
                         "(serve/adapters/kimi_audio.py), so nothing is set against it", counted="none")
MINICPM_O_4_5 = AudioTokens(10.0, "OpenBMB/minicpm-o-4_5-pytorch-simple-demo MiniCPMO45/processing_minicpmo.py "
                            "get_audio_placeholder: 100 mel frames/s, a stride-2 conv, audio_pool_step 5 "
                            "(configuration_minicpmo.py's default), plus a start and end token per 1 s chunk; our "
                            "transformers server reports no prompt count (serve/adapters/minicpm_o.py)", counted="none")
CASCADE = unknown("a cascade's answering model gets a transcript, never audio: no audio tokens to count")


def reported(usage: dict[str, int], rate: AudioTokens) -> int | None:
    """The audio tokens the server says it consumed (or, where it reports none apart, its prompt's total, which holds
    them); None when the reply carried no count, or the server counts nothing (a prompt total of 0 is no count: no
    prompt with text and audio in it is empty)."""
    if rate.counted == "audio":
        for key in ("prompt_tokens_details.audio_tokens", "prompt_tokens_details.AUDIO"):
            if key in usage:
                return usage[key]
        return None
    return usage.get("prompt_tokens") or None if rate.counted == "prompt" else None
