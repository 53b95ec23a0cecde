"""Audio controls: the same prompt with its clips replaced (silence or noise of the same length, the two clips
swapped, no audio at all), so a run can show whether a model's answers depend on what it hears."""
from __future__ import annotations

import hashlib
from pathlib import Path

from acousticbench.core.errors import UserError
from acousticbench.core.records import Prompt

CONTROLS = {
    "silence": "every clip replaced by digital silence of the same length, rate and channels",
    "noise": "every clip replaced by white noise of the same length, rate, channels and RMS level (seeded by "
             "question, clip and run seed)",
    "swap": "the two clips heard in the other order (a stereo clip: its channels swapped)",
    "no-audio": "no audio part at all: the prompt's text alone",
}
SENT_KEY = "the key of the clips as sent"  # config.json's control.scored_against: a swap scored as it was heard
# what a control needs of its model (a ModelEntry capability), with the line that refuses a model without it
NEEDS = {"no-audio": {"no-audio": "--control no-audio asks each question with no audio part, and {model} cannot be "
                                  "asked without its clips: drop no-audio from --control, or run it without {model}."}}


def folder_for(kind: str) -> Path:
    """Where a control's clips are written once: the harness cache, by kind (each file named by what made it)."""
    from acousticbench.core.environment import cache_dir

    return Path(cache_dir()) / "controls" / kind


def controlled(prompt: Prompt, kind: str) -> Prompt:
    """The prompt as the control `kind` sends it: the same text, seed and order, other audio."""
    if kind == "no-audio":
        return prompt.model_copy(update={"audio": [], "parts": [p for p in prompt.parts if p.kind != "audio"]})
    if kind == "swap":
        return _swapped(prompt)
    mapping = {path: _replaced(path, kind, prompt, i) for i, path in enumerate(prompt.audio)}
    parts = [p.model_copy(update={"audio": mapping[p.audio]}) if p.kind == "audio" and p.audio in mapping else p
             for p in prompt.parts]
    return prompt.model_copy(update={"audio": [mapping[p] for p in prompt.audio], "parts": parts})


def _swapped(prompt: Prompt) -> Prompt:
    """Two clips in the other order; one stereo clip with its channels exchanged; anything else cannot be swapped."""
    if len(prompt.audio) == 2 and not any(p.kind == "audio" for p in prompt.parts):
        return prompt.model_copy(update={"audio": prompt.audio[::-1]})
    if len(prompt.audio) == 1 and not prompt.parts:
        from acousticbench.core.audio import read_audio

        samples, sr = read_audio(prompt.audio[0])
        if samples.ndim == 2 and samples.shape[1] == 2:
            return prompt.model_copy(update={"audio": [_written(samples[:, ::-1], sr, "swap", prompt.audio[0])]})
    has = ("its clips among the text (demonstrations, then the query)" if any(p.kind == "audio" for p in prompt.parts)
           else f"{len(prompt.audio)} clip(s), none of them stereo" if prompt.audio else "no clip")
    raise UserError(f"--control swap exchanges a question's two clips, or a stereo clip's channels, and {prompt.task} "
                    f"question {prompt.question_id} has {has}: drop swap for this task.")


def _replaced(path: str, kind: str, prompt: Prompt, index: int) -> str:
    import numpy as np

    from acousticbench.core.audio import read_audio

    samples, sr = read_audio(path)
    if kind == "silence":
        return _written(np.zeros_like(samples), sr, kind, path)
    level = float(np.sqrt(np.mean(np.square(samples, dtype=np.float64))))
    seed = int.from_bytes(hashlib.sha256(f"{prompt.question_id}|{index}|{prompt.seed}".encode()).digest()[:8], "big")
    noise = np.random.default_rng(seed).standard_normal(samples.shape)
    noise *= level / max(float(np.sqrt(np.mean(np.square(noise)))), 1e-12)
    return _written(noise.astype(np.float32), sr, kind, path, f"{prompt.question_id}|{index}|{prompt.seed}")


def _written(samples, sr: int, kind: str, source: str, salt: str = "") -> str:
    """The control clip's path, written once (named by its kind, its source and what seeded it)."""
    from acousticbench.core.audio import write_wav

    stat = Path(source).stat()  # a rebuilt pack's clip is another source
    name = hashlib.sha256(f"{Path(source).resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{salt}".encode()).hexdigest()[:24]
    path = folder_for(kind) / f"{name}.wav"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{hashlib.sha256(salt.encode()).hexdigest()[:6]}.tmp")
        write_wav(tmp, samples, sr)
        tmp.replace(path)  # a concurrent run writing the same clip writes the same bytes
    return str(path)
