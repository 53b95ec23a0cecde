"""MorseCode: words keyed in Morse at a fixed speed and pitch, and an A..Z letter bank."""
from __future__ import annotations

import string
from typing import Any

import numpy as np

from acousticbench.benchmarks.audioicl.build.plan import EPISODES_PER_TASK, MAX_SHOTS, ClipJob, TaskPlan, rng, seeded, single_episode
from acousticbench.benchmarks.audioicl.build.sounds import frames

CODE = dict(zip(string.ascii_uppercase, (
    ".-", "-...", "-.-.", "-..", ".", "..-.", "--.", "....", "..", ".---", "-.-", ".-..", "--",
    "-.", "---", ".--.", "--.-", ".-.", "...", "-", "..-", "...-", ".--", "-..-", "-.--", "--..",
)))
UNIT_S = 0.05  # one dot: 24 words per minute, the same for every clip
TONE_HZ = 650.0
WORDS = tuple("""
about above actor adult after again agent alarm album alive angle apple arena audio basic beach birth black
blood board brain bread brick broad brown build cabin chain chair chart chess chief child clock cloud coast
cream dance dream drink eagle earth field flame flash floor focus frame fruit glass grape green guard heart
honey horse house image index judge juice knife laser lemon level light lunar magic march metal model money
month music night noise ocean olive opera paint paper party peace piano pilot plant point power queen quiet
radio river robot round salad scale scene sheep shirt smile sound space spoon sport stone storm sugar table
tiger toast tower train truck voice water whale world young zebra fixed vivid jumpy
""".split())
ALPHABET_DIR = "data/MorseCode/alphabet"


def plan(task: str) -> TaskPlan:
    order = rng(task, "plan")
    names = order.permutation(len(WORDS))
    clips: dict[str, ClipJob] = {}
    path_of = {}
    for j, word in enumerate(WORDS):
        path = path_of[word] = f"data/MorseCode/words/w{names[j]:03d}.wav"
        clips[path] = ClipJob(path, "morse", seeded({"text": word}, task, "word", j))
    for letter in string.ascii_uppercase:
        path = f"{ALPHABET_DIR}/{letter}.wav"
        clips[path] = ClipJob(path, "morse", seeded({"text": letter}, task, "letter", letter))
    episodes = []
    for i in range(EPISODES_PER_TASK):
        words = order.choice(len(WORDS), MAX_SHOTS + 1, replace=False)
        episodes.append(single_episode(task, i, [(path_of[WORDS[int(w)]], WORDS[int(w)]) for w in words]))
    return TaskPlan(episodes, clips)


def alphabet_paths() -> tuple[str, ...]:
    return tuple(f"{ALPHABET_DIR}/{letter}.wav" for letter in string.ascii_uppercase)


def keying(text: str) -> list[tuple[bool, int]]:
    """(tone on?, units) runs: 1 unit within a letter, 3 between letters, dash 3 units."""
    runs: list[tuple[bool, int]] = []
    for i, letter in enumerate(text.upper()):
        if i:
            runs.append((False, 3))
        for j, symbol in enumerate(CODE[letter]):
            if j:
                runs.append((False, 1))
            runs.append((True, 1 if symbol == "." else 3))
    return runs


def render(params: dict[str, Any], rng_: np.random.Generator) -> np.ndarray:
    unit = frames(UNIT_S)
    ramp = frames(0.005)
    pieces = [np.zeros(frames(0.15))]
    for on, units in keying(params["text"]):
        n = units * unit
        if not on:
            pieces.append(np.zeros(n))
            continue
        tone = np.sin(2 * np.pi * TONE_HZ * np.arange(n) / 16000)
        envelope = np.minimum(1.0, np.minimum(np.arange(n) + 0.5, n - np.arange(n) - 0.5) / ramp)
        pieces.append(0.5 * tone * envelope)
    pieces.append(np.zeros(frames(0.15)))
    x = np.concatenate(pieces)
    return x + rng_.standard_normal(x.size) * 0.5 * 10 ** (-45 / 20)  # a noise floor, as on a radio
