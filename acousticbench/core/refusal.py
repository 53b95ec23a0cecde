"""Clear refusals: the model says it cannot hear or process audio, or declines outright."""
from __future__ import annotations

import re

_MEDIUM = r"(?:audio|sound|clip|recording|file|segment|music|voice|<audio\s*\d*>)"
_REFUSAL = re.compile(
    r"\bnot\s+(?:capable|able)\s+of\s+(?:hearing|listening|processing|analy[sz]ing|perceiving|playing|making\s+audio)"
    rf"|\b(?:cannot|can['’]?t|can\s+not|unable\s+to|not\s+able\s+to)\s+(?:hear|listen\s+to|process|analy[sz]e|perceive|"
    rf"play|access)\s+(?:or\s+\w+\s+)?(?:(?:the|any|this|these|an?|your)\s+)?(?:\w+\s+)?{_MEDIUM}"
    r"|\b(?:as\s+an?\s+|i['’]?m\s+an?\s+|i\s+am\s+an?\s+)text[- ]based\s+(?:ai|model|assistant|language\s+model)"
    r"|\b(?:do\s+not|don['’]t)\s+have\s+the\s+(?:capability|ability)\s+to\s+(?:hear|listen|play|process|analy[sz]e)"
    r"|^i['’]?m\s+sorry,?\s+(?:but\s+)?i\s+(?:can['’]?t|cannot|am\s+unable|['’]m\s+unable|am\s+not\s+able)"
    r"|^i\s+am\s+sorry,?\s+(?:but\s+)?i\s+(?:can['’]?t|cannot|am\s+unable|am\s+not\s+able)"
    # Chinese: "I cannot hear / process / play the audio", "I cannot hear the sound"
    r"|(?:无法|不能|没法|不可以|听不到|听不见)(?:直接)?(?:听|收听|处理|分析|播放|接收|访问|感知|理解)?(?:到|取)?(?:任何|这些|这个|该|你的)?"
    r"(?:音频|声音|录音|音乐|片段|语音|音频文件)",
    re.IGNORECASE,
)


def is_refusal(text: str) -> bool:
    """Does the text decline or say it cannot perceive the audio? (The caller also checks that no option is named.)"""
    return bool(_REFUSAL.search(text.strip()))
