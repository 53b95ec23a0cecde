"""The start-of-run canary's probes and verdict: eight short tone questions whose answers show that audio reaches a
served model (a tone late in one of two clips, the silent clip on either side), that both clips do (which of two tones
is higher, each pair sharing one clip byte for byte, so no answer drawn from one clip can pass them all) and that both
channels do (a tone in the left or the right channel)."""
from __future__ import annotations

import os
import re
import threading
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
        if not path.is_file():  # another run may write it at the same moment: each writes its own, then renames
            tmp = path.with_name(f"{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
            write_wav(tmp, samples, SR)
            tmp.replace(path)
    return [(pid, kind, [str(paths[c]) for c in clips], answer) for pid, kind, clips, answer in PROBES]


def label(text: str | None) -> str | None:
    """A or B where the reply commits to exactly one of them, else None."""
    found = set(re.findall(r"\b([AB])\b", text or ""))
    return found.pop() if len(found) == 1 else None


# pairs of probes that differ in one thing and whose right answers differ: a model whose answer does not move between
# the two did not hear that difference, whatever its accuracy (a model may be poor at pitch and still hear both clips)
PAIRS = {"presence": ("tone_first", "tone_second"),  # the silent clip on either side
         "second_clip": ("mid_then_low", "mid_then_high"),  # the first clip the same, the second another tone
         "first_clip": ("high_then_mid", "low_then_mid"),  # the second clip the same, the first another tone
         "channels": ("left", "right")}


def _pair(answers: dict[str, str | None], ids: tuple[str, str]) -> dict[str, Any]:
    """right/of over the pair, and `moved`: whether the answer changed between its two probes (None: not known)."""
    one, other = (answers.get(pid) for pid in ids)
    right = sum(answers.get(pid) == answer for pid, _, _, answer in PROBES if pid in ids)
    return {"right": right, "of": 2, "moved": None if one is None or other is None else one != other}


def _hears_audio(checks: dict[str, dict]) -> tuple[bool | None, str | None]:
    presence, pitch = checks["presence"]["moved"], [checks[k]["moved"] for k in ("first_clip", "second_clip")]
    if presence is False and pitch == [False, False]:
        return False, ("no answer to the tone probes changed with the audio: it does not reach the model, or the "
                       "model ignores it")
    if presence is False and True in pitch:
        return False, ("a tone 1 s into the first or the second clip made no difference where other tones did: "
                       "the audio does not reach the model whole (a clip cut or dropped)")
    return presence, None


def _hears_both(checks: dict[str, dict]) -> tuple[bool | None, str | None]:
    first, second = checks["first_clip"], checks["second_clip"]
    for heard, missed, which in ((first, second, "second"), (second, first, "first")):
        if heard["moved"] and heard["right"] == 2 and missed["moved"] is False:
            right = first["right"] + second["right"]
            return False, (f"the answers follow one clip's tone but not the {which} clip's ({right} of 4 "
                           "which-is-higher probes right): the model does not hear both clips of a request as sent "
                           "(one is dropped, or its sound is changed)")
    return (True if first["moved"] and second["moved"] else None), None


def verdict(answers: dict[str, str | None], failed: dict[str, str]) -> dict[str, Any]:
    """config.json's canary from each probe's label (None: no letter in the reply) and the probes that got no answer
    (id -> why): what reaches the model (from the answers that moved with the audio), and passed / failed /
    inconclusive."""
    checks = {name: _pair(answers, ids) for name, ids in PAIRS.items()}
    audio, why = _hears_audio(checks)
    both, why_both = _hears_both(checks)  # its line first: it says which clip
    channels = {True: 2, False: 1, None: None}[checks["channels"]["moved"]]
    known = audio and both and channels is not None
    result = {"verdict": "failed" if False in (audio, both) else ("passed" if known else "inconclusive"),
              "answers": answers, "checks": checks, "hears_audio": audio, "hears_both_clips": both,
              "channels": channels, "finding": why_both or why}
    if failed:
        result["no_answer"] = {"count": len(failed), "of": len(PROBES), "error": next(iter(failed.values()))}
    return result


def finding(result: dict[str, Any]) -> str | None:
    """The one line saying what does not reach the model, or None when nothing was found missing."""
    return result.get("finding")


def mono_line(result: dict[str, Any]) -> str:
    return "the tone on the left and the tone on the right got the same answer: the model hears stereo mixed to mono"
