"""AudioICL prompts: one user turn of instruction, tagged demo lines with their audio and labels, then the query."""
from __future__ import annotations

import hashlib
import os
import re
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from acousticbench.benchmarks.audioicl.episodes import Episode, Shot
from acousticbench.core.records import Prompt, PromptPart

Style = Literal["specific", "general", "none"]
STYLES: tuple[str, ...] = ("specific", "general", "none")

_INTEGER = "Answer with the integer only."
_COUNT = ("Each clip below is paired with a number. Work out from the labelled examples how the sound in a clip "
          "determines its number, then give the number for the last clip. " + _INTEGER)
_LENGTH = ("Each clip below is paired with a number that depends on how long there is sound in it. Work out the rule "
           "from the labelled examples and give the number for the last clip. " + _INTEGER)
SPECIFIC: dict[str, str] = {
    "AudioCount": _COUNT,
    "AudioCountHard": _COUNT + " The clips have background noise.",
    "AudioLength": _LENGTH,
    "AudioLengthHard": _LENGTH + " Some clips contain a stretch of silence.",
    "AudioOperator": ("Each clip speaks two digits with a sound effect between them. Within this set the sound effect "
                      "always stands for the same arithmetic operation. Infer the operation from the labelled examples "
                      "and compute the result for the last clip. " + _INTEGER),
    "AudioOperatorHard": ("Each clip speaks three digits separated by two different sound effects. Within this set each "
                          "sound effect stands for one arithmetic operation. Infer both operations from the labelled "
                          "examples and compute the result for the last clip. " + _INTEGER),
    "MorseCode": ("The clips are words in Morse code. Decode the last clip using the labelled examples (and the "
                  "letter references, if given). Answer with the word only, no punctuation."),
    "AudioRemap": ("Each example plays sound A and sound B, each with a letter, then MIX: three sounds in a row, each A "
                   "or B. The label of MIX spells the three sounds with their letters. Give the three-letter label "
                   "of the last MIX, in capitals, and nothing else."),
    "AnomalyDetect": ("Each example plays a normal and an anomalous recording of the same machine. Decide whether the "
                      "last recording is Normal or Anomalous. Answer with that one word."),
}
GENERAL = ("The audio clips below come with labels. Infer from the labelled examples the rule that maps a clip to its "
           "label, apply it to the last clip and answer with its label only.")


def instruction(episode: Episode, style: Style) -> str:
    """The instruction text: the episode's own (when it has one) unless the style is 'none'."""
    if style == "none":
        return ""
    if episode.instruction:
        return episode.instruction.strip()
    text = SPECIFIC[episode.task] if style == "specific" else GENERAL
    if style == "specific" and episode.object:
        text += f" The machine is a {episode.object}."
    return text


@dataclass(frozen=True)
class Line:
    """One tagged line of the turn: '[tag] <audio> Label: label' (label None: the answer asked for)."""

    tag: str
    audio: str
    label: str | None


def shot_lines(shot: Shot, single_tag: str, prefix: str, query: bool) -> list[Line]:
    """A one-clip shot is one line tagged `single_tag`; a multi-clip shot is a line per clip, tagged by role."""
    if shot.audio_path is not None:
        return [Line(single_tag, shot.audio_path, None if query else shot.label or "")]
    clips = shot.clips or []
    lines = []
    for i, clip in enumerate(clips):
        tag = prefix if query and clip.role.lower() == "query" else f"{prefix} {clip.role}"
        last = query and i == len(clips) - 1  # the public format: the query's last clip is the one asked about
        lines.append(Line(tag, clip.audio_path, None if last else clip.label or ""))
    return lines


def episode_lines(episode: Episode, alphabet: dict[str, str] | None = None) -> list[Line]:
    """Letter references (MorseCode with --morse-alphabet), the demos in order, then the query; the tags are the
    public prompts' ('[Demo Audio 2]', '[Demo 2 MIX]', '[Query Audio]')."""
    lines = [Line(f"Letter {ch}", path, ch) for ch, path in (alphabet or {}).items()] if episode.task == "MorseCode" else []
    for i, demo in enumerate(episode.demos, 1):
        lines += shot_lines(demo, f"Demo Audio {i}", f"Demo {i}", query=False)
    return lines + shot_lines(episode.query, "Query Audio", "Query", query=True)


def load_alphabet(folder: Path) -> dict[str, str]:
    """A.wav .. Z.wav of a Morse letter bank, as absolute paths; a user error names what is missing."""
    from acousticbench.core.errors import UserError

    missing = [ch for ch in string.ascii_uppercase if not (Path(folder) / f"{ch}.wav").is_file()]
    if missing:
        raise UserError(f"--morse-alphabet {folder} lacks {', '.join(m + '.wav' for m in missing[:5])}"
                        f"{' ...' if len(missing) > 5 else ''}: give a folder with A.wav .. Z.wav "
                        "(the open pack has one at <archive>/audioicl/data/MorseCode/alphabet).")
    return {ch: os.path.abspath(Path(folder) / f"{ch}.wav") for ch in string.ascii_uppercase}


def build_prompt(episode: Episode, base: Path, *, style: Style, seed: int, alphabet: dict[str, str] | None = None,
                 pad_dir: Path | None = None) -> Prompt:
    """The Prompt of an episode: `parts` interleave text and audio; `text` names each clip '<audio N>'."""
    lines = episode_lines(episode, alphabet)
    paths = [p if os.path.isabs(p) else os.path.abspath(Path(base) / p) for p in (ln.audio for ln in lines)]
    if pad_dir is not None:
        from acousticbench.benchmarks.audioicl.padding import padded

        paths = padded(paths, pad_dir)
    head = instruction(episode, style)
    flat = [head + "\n"] if head else []
    parts: list[PromptPart] = []
    pending = head + "\n\n" if head else ""
    for n, (ln, path) in enumerate(zip(lines, paths), 1):
        after = " Label:" + ("" if ln.label is None else f" {ln.label}")
        flat.append(f"[{ln.tag}] <audio {n}>{after}")
        parts += [PromptPart(kind="text", text=pending + f"[{ln.tag}] "), PromptPart(kind="audio", audio=path)]
        pending = after + ("\n" if n < len(lines) else "")
    parts.append(PromptPart(kind="text", text=pending))
    return Prompt(benchmark="AudioICL", question_id=episode.id, task=episode.task, text="\n".join(flat), audio=paths, seed=seed, parts=parts)


def template_sha256(style: Style) -> str:
    """One hash over every instruction a style can send, so a wording change shows in config.json."""
    texts = [] if style == "none" else list(SPECIFIC.values()) if style == "specific" else [GENERAL]
    return hashlib.sha256("\0".join(texts).encode("utf-8")).hexdigest()


_LINE = re.compile(r"^\[(?P<tag>[^\]]+)\] <audio (?P<n>\d+)> Label:(?: (?P<label>.*))?$")


def read_lines(prompt: Prompt) -> list[Line]:
    """The tagged lines of a rendered prompt, with absolute audio paths: what a model reading the turn sees."""
    found = []
    for text in prompt.text.splitlines():
        match = _LINE.match(text.strip())
        if match:
            label = match.group("label")
            found.append(Line(match.group("tag"), prompt.audio[int(match.group("n")) - 1], label))
    return found


def clip_captions(text: str, n_clips: int) -> tuple[str, ...]:
    """What each clip of a rendered prompt is, in the prompt's own terms: 'demo 1: 3', 'demo 2 MIX: ABA', 'letter E: E',
    'query' (the clip asked about); a clip no tagged line names keeps 'clip N'."""
    captions = [f"clip {n}" for n in range(1, n_clips + 1)]
    for line in text.splitlines():
        match = _LINE.match(line.strip())
        if match and 1 <= int(match.group("n")) <= n_clips:
            words = [w for w in match.group("tag").split() if w != "Audio"]
            tag = " ".join([words[0].lower(), *words[1:]]) if words else "clip"
            label = match.group("label")
            captions[int(match.group("n")) - 1] = f"{tag}: {label}" if label else tag
    return tuple(captions)
