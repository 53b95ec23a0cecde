"""The start-of-run canary's probes and verdict: eight short tone questions whose answers show that audio reaches a
served model (a tone late in one of two clips, the silent clip on either side), that both clips do (which of two tones
is higher, each pair sharing one clip byte for byte, so no answer drawn from one clip can pass them all) and that both
channels do (a tone in the left or the right channel)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

PRESENCE = ("Which of the two clips contains a tone? The other one is silent. Answer with a single letter: A for the "
            "first, B for the second.")
PITCH = ("Which of the two clips has the higher-pitched tone? Answer with a single letter: A for the first, B for the "
         "second.")
STEREO = "Does the tone come from the left or the right? Answer with a single letter: A for left, B for right."
QUESTIONS = {"presence": PRESENCE, "pitch": PITCH, "stereo": STEREO}
SR = 16_000
# two octaves apart around the shared tone; the high one is above 4 kHz, so a server that narrows the band (8 kHz
# telephone audio) loses it
LOW, MID, HIGH = 200, 800, 6400
TONE_S = 0.5
LEAD_S = 1.0  # the presence tone starts this late: a server that keeps only the start of a clip hears silence


def _tone(freq: int, seconds: float = TONE_S):
    import numpy as np

    t = np.arange(int(SR * seconds)) / SR
    ramp = np.minimum(1.0, np.minimum(t, seconds - t) / 0.01)  # 10 ms fades: no click gives the tone away
    return (0.3 * np.sin(2 * np.pi * freq * t) * ramp).astype(np.float32)


def _clips() -> dict[str, Any]:
    """Every probe clip's samples by name."""
    import numpy as np

    late = np.concatenate([np.zeros(int(SR * LEAD_S), np.float32), _tone(MID)])
    quiet = np.zeros_like(late)
    clips = {"late_tone": late, "silence": quiet, **{f"tone_{f}": _tone(f) for f in (LOW, MID, HIGH)}}
    clips["left"] = np.stack([_tone(MID), np.zeros(int(SR * TONE_S), np.float32)], axis=1)
    clips["right"] = clips["left"][:, ::-1].copy()  # the same tone: heard in mono, left and right are one clip
    return clips


# (id, kind, clip names, answer): the silent clip on either side; each pitch pair shares its first or its second clip
# and differs in the answer, so a listener that hears one clip gets at most three of the four
PROBES = (
    ("tone_first", "presence", ("late_tone", "silence"), "A"),
    ("tone_second", "presence", ("silence", "late_tone"), "B"),
    ("mid_then_low", "pitch", (f"tone_{MID}", f"tone_{LOW}"), "A"),
    ("mid_then_high", "pitch", (f"tone_{MID}", f"tone_{HIGH}"), "B"),
    ("high_then_mid", "pitch", (f"tone_{HIGH}", f"tone_{MID}"), "A"),
    ("low_then_mid", "pitch", (f"tone_{LOW}", f"tone_{MID}"), "B"),
    ("left", "stereo", ("left",), "A"),
    ("right", "stereo", ("right",), "B"),
)


def probes(folder: Path | None = None) -> list[tuple[str, str, list[str], str]]:
    """(id, kind, clip paths, answer) of every probe, written once under `folder` (default: the harness cache)."""
    from acousticbench.core.audio import write_wav
    from acousticbench.core.environment import cache_dir

    folder = Path(folder or Path(cache_dir()) / "canary-v2")
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, samples in _clips().items():
        path = paths[name] = folder / f"{name}.wav"
        if not path.is_file():
            write_wav(path.with_suffix(".tmp"), samples, SR)
            path.with_suffix(".tmp").replace(path)
    return [(pid, kind, [str(paths[c]) for c in clips], answer) for pid, kind, clips, answer in PROBES]


def label(text: str | None) -> str | None:
    """A or B where the reply commits to exactly one of them, else None."""
    found = set(re.findall(r"\b([AB])\b", text or ""))
    return found.pop() if len(found) == 1 else None


CHECKS = {"hears_audio": ("tone_first",),  # the tone in the first clip: a server that keeps any audio passes it
          "hears_both_clips": ("tone_second", *(pid for pid, kind, _, _ in PROBES if kind == "pitch")),
          "hears_channels": ("left", "right")}


def _check(answers: dict[str, str | None], ids: tuple[str, ...]) -> dict[str, Any]:
    """right/of over some probes, and `ok`: False on any wrong answer, True when all are right, else None (a probe
    with no answer, or no letter in its reply)."""
    asked = [(answers.get(pid, "missing"), answer) for pid, _, _, answer in PROBES if pid in ids]
    right = sum(got == answer for got, answer in asked)
    wrong = any(got in ("A", "B") and got != answer for got, answer in asked)
    return {"right": right, "of": len(asked), "ok": False if wrong else (True if right == len(asked) else None)}


def verdict(answers: dict[str, str | None], failed: dict[str, str]) -> dict[str, Any]:
    """config.json's canary from each probe's label (None: no letter in the reply) and the probes that got no answer
    (id -> why): what reaches the model, and passed / failed / inconclusive."""
    checks = {name: _check(answers, ids) for name, ids in CHECKS.items()}
    audio, both = checks["hears_audio"]["ok"], checks["hears_both_clips"]["ok"]
    channels = {True: 2, False: 1, None: None}[checks["hears_channels"]["ok"]]
    known = audio is not None and both is not None and channels is not None
    result = {"verdict": "failed" if False in (audio, both) else ("passed" if known else "inconclusive"),
              "answers": answers, "checks": checks, "hears_audio": audio, "hears_both_clips": both,
              "channels": channels}
    if failed:
        result["no_answer"] = {"count": len(failed), "of": len(PROBES), "error": next(iter(failed.values()))}
    return result


def finding(result: dict[str, Any]) -> str | None:
    """The one line saying what does not reach the model, or None when nothing was found missing."""
    if result.get("hears_audio") is False:
        return "a tone sent was answered as silence: the audio does not reach the model whole"
    if result.get("hears_both_clips") is False:
        check = result["checks"]["hears_both_clips"]
        return (f"{check['right']} of {check['of']} probes that need both clips right: the model does not hear both "
                "clips of a request as sent (one is dropped, or its sound is changed)")
    return None


def mono_line(result: dict[str, Any]) -> str:
    check = result["checks"]["hears_channels"]
    return f"{check['right']} of {check['of']} left-or-right probes right: the model hears stereo mixed to mono"
