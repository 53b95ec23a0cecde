"""The start-of-run canary (--canary): a few short probes asked of a served model before its runs, whose answers show
that audio reaches it, that its second clip does (a tone in the first or the second of two clips), and that it hears
left from right (a tone in one channel); what a model cannot hear is then said from the probe, not a list."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from acousticbench.core.records import Prompt

TWO_CLIPS = "Which of the two clips contains a tone? Answer with a single letter: A for the first, B for the second."
STEREO = "Does the tone come from the left or the right? Answer with a single letter: A for left, B for right."
SR = 16_000
FREQUENCIES = (500, 1000)
ASKS = frozenset({"served", "local-server", "openai", "gemini"})  # backends that send the audio to a model as it is


def _tone(freq: int, seconds: float):
    import numpy as np

    t = np.arange(int(SR * seconds)) / SR
    ramp = np.minimum(1.0, np.minimum(t, seconds - t) / 0.01)  # 10 ms fades: no click gives the tone away
    return (0.3 * np.sin(2 * np.pi * freq * t) * ramp).astype(np.float32)


def probes(folder: Path | None = None) -> list[tuple[str, str, list[str], str]]:
    """(id, kind, clip paths, answer) of every probe, written once under `folder` (default: the harness cache)."""
    import numpy as np

    from acousticbench.core.audio import write_wav
    from acousticbench.core.environment import cache_dir

    folder = Path(folder or Path(cache_dir()) / "canary")
    folder.mkdir(parents=True, exist_ok=True)

    def clip(name: str, samples) -> str:
        path = folder / f"{name}.wav"
        if not path.is_file():
            write_wav(path.with_suffix(".tmp"), samples, SR)
            path.with_suffix(".tmp").replace(path)
        return str(path)

    out = []
    for i, freq in enumerate(FREQUENCIES):
        tone, quiet = _tone(freq, 0.5), np.zeros(int(SR * (0.4 + 0.1 * i)), np.float32)  # each silence its own length
        silent = clip(f"silence_{i}", quiet)
        out.append((f"tone_first_{freq}", "two_clips", [clip(f"tone_{freq}", tone), silent], "A"))
        out.append((f"tone_second_{freq}", "two_clips", [silent, clip(f"tone_{freq}", tone)], "B"))
        for side, answer in (("left", "A"), ("right", "B")):
            stereo = np.stack([tone, np.zeros_like(tone)] if side == "left" else [np.zeros_like(tone), tone], axis=1)
            out.append((f"{side}_{freq}", "stereo", [clip(f"{side}_{freq}", stereo)], answer))
    return out


def label(text: str | None) -> str | None:
    """A or B where the reply commits to exactly one of them, else None."""
    found = set(re.findall(r"\b([AB])\b", text or ""))
    return found.pop() if len(found) == 1 else None


async def run_canary(backend: Any, policy: Any, slots: Any, seed: int) -> dict[str, Any]:
    """Ask every probe through the model's queue; the verdicts config.json keeps."""
    import asyncio

    from acousticbench.engine.executor import ask

    probed = probes()
    prompts = [Prompt(benchmark="canary", question_id=f"canary_{pid}", task="canary", seed=seed, audio=paths,
                      text=TWO_CLIPS if kind == "two_clips" else STEREO, answer_space=["A", "B"])
               for pid, kind, paths, _ in probed]
    outcomes = await asyncio.gather(*(ask(backend, p, policy, slots) for p in prompts))
    failed = [o.error for o in outcomes if o.reply is None]
    if failed:  # a probe that got no answer says nothing of what the model hears
        return {"failed": len(failed), "of": len(outcomes), "error": failed[0]}
    answers = {pid: label(o.reply.text) for (pid, *_), o in zip(probed, outcomes)}
    result: dict[str, Any] = {"answers": answers}
    for kind in ("two_clips", "stereo"):
        right = sum(answers[pid] == answer for pid, k, _, answer in probed if k == kind)
        result[kind] = {"right": right, "of": sum(k == kind for _, k, _, _ in probed)}
    result["hears_second_clip"] = result["two_clips"]["right"] == result["two_clips"]["of"]
    result["channels"] = 2 if result["stereo"]["right"] == result["stereo"]["of"] else 1
    return result


def warnings(result: dict[str, Any] | None) -> list[str]:
    """What the canary found wrong, one line each."""
    if not result:
        return []
    if "failed" in result:
        return [f"canary: {result['failed']} of {result['of']} probes got no answer ({result['error']}): what the "
                "model hears is not known from the probe"]
    lines = []
    if not result["hears_second_clip"]:
        lines.append(f"canary: {result['two_clips']['right']} of {result['two_clips']['of']} tone-or-silence probes "
                     "right: the audio, or the second clip, may not reach the model")
    if result["channels"] == 1:
        lines.append(f"canary: {result['stereo']['right']} of {result['stereo']['of']} left-or-right probes right: "
                     "the model hears mono here, so a stereo task is at chance by construction")
    return lines


async def before_runs(cells: list, backend: Any, policy: Any, slots: Any) -> None:
    """With --canary: ask the probes once per model session of a backend that sends the audio as it is (ASKS), and
    give each cell the verdicts (config.json, metrics)."""
    import sys

    if not cells or not cells[0].spec.settings.canary or backend.backend_name not in ASKS:
        return
    found = await run_canary(backend, policy, slots, cells[0].spec.seed)
    for line in warnings(found):
        print(f"warning: {cells[0].spec.model}: {line}", file=sys.stderr)
    for cell in cells:
        cell.canary = found


def heard(cell: Any, metrics: Any) -> dict[str, Any]:
    """metrics.json's listener note from the canary where it ran (it replaces the catalog's channels), else {}."""
    if not cell.canary or "channels" not in cell.canary:
        return {}
    cleared = {"listener": None} if "listener" in type(metrics).model_fields else {}
    return {**cleared, **cell.bench.listener_note(cell.spec, cell.canary["channels"])}
