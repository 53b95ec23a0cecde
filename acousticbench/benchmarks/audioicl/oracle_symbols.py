"""The AudioICL Oracle for symbol tasks: spoken digits with operator sounds, and Morse code."""
from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np

from acousticbench.benchmarks.audioicl import listen
from acousticbench.benchmarks.audioicl.oracle_episode import Episode, int_label
from acousticbench.core.errors import BackendError, UserError

OPS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b}


@lru_cache(maxsize=1)
def _digit_voices() -> tuple[tuple[int, ...], listen.Templates]:
    """The shipped spoken digits the pack was built from, in every voice: the Oracle's vocabulary (each template's
    digit, and the templates)."""
    from acousticbench.benchmarks.audioicl.build.speech import all_digits

    try:
        voices = all_digits()
    except UserError as err:
        raise BackendError(f"the Oracle cannot hear spoken digits: {err}", retryable=False) from None
    return tuple(d for d, _ in voices), listen.Templates(list(voices.values()))


@lru_cache(maxsize=4096)
def _operator_clip(path: str) -> tuple[tuple[int, ...], tuple[np.ndarray, ...]]:
    """(spoken digits, band levels of each sound effect between them)."""
    x = listen.load(path)
    for gap in (0.12, 0.09, 0.15, 0.06):
        parts = listen.segments(x, gap)
        if len(parts) % 2 == 1 and len(parts) >= 3:
            break
    else:
        raise BackendError(f"the Oracle could not split {path} into digits and sound effects.", retryable=False)
    pad = int(0.03 * listen.SR)
    pieces = [x[max(0, a - pad) : b + pad] for a, b in parts]
    names, voices = _digit_voices()
    digits = tuple(names[voices.best(p)] for p in pieces[::2])
    return digits, tuple(listen.band_levels(p) for p in pieces[1::2])


def _value(digits: tuple[int, ...], ops: list[str], precedence: bool) -> int:
    values, pending = [digits[0]], []
    for op, d in zip(ops, digits[1:]):
        if precedence and op == "mul":
            values[-1] = values[-1] * d
        else:
            values.append(d)
            pending.append(op)
    total = values[0]
    for op, v in zip(pending, values[1:]):
        total = OPS[op](total, v)
    return total


def _effect_classes(effects: tuple[np.ndarray, ...], prototypes: tuple[np.ndarray, ...]) -> list[int]:
    """Which prototype each sound effect is: the assignment with the smallest total distance."""
    orders = itertools.permutations(range(len(prototypes)), len(effects)) if len(effects) <= len(prototypes) else []
    best = min(orders, key=lambda o: sum(float(np.linalg.norm(e - prototypes[c])) for e, c in zip(effects, o)), default=None)
    return list(best) if best is not None else [0] * len(effects)


def operator(episode: Episode) -> str:
    """Find which operator each sound effect stands for (and the evaluation order) that fits the most demos."""
    demos = [(_operator_clip(d.path), int_label(d)) for d in episode.demos]
    (q_digits, q_effects) = _operator_clip(episode.query.path)
    prototypes = demos[0][0][1] if demos else q_effects
    slots = len(q_effects)
    hypotheses = [(ops, prec) for ops in itertools.product(OPS, repeat=len(prototypes)) for prec in (True, False)]
    hypotheses.sort(key=lambda h: len(set(h[0])) != len(h[0]))  # distinct operators first: each effect its own

    def predict(clip: tuple, hypothesis: tuple) -> int:
        digits, effects = clip
        ops, prec = hypothesis
        return _value(digits, [ops[c] for c in _effect_classes(effects, prototypes)], prec)

    fits = [sum(predict(clip, h) == label for clip, label in demos if len(clip[1]) == slots) for h in hypotheses]
    best = max(range(len(hypotheses)), key=lambda i: (fits[i], -i))
    return str(predict((q_digits, q_effects), hypotheses[best]))


def _standard_code() -> dict[str, str]:
    from acousticbench.benchmarks.audioicl.build.morse import CODE

    return {code: letter for letter, code in CODE.items()}


@lru_cache(maxsize=4096)
def _morse_codes(path: str) -> tuple[str, ...]:
    """The dot-dash code of each keyed letter, timed against the clip's own shortest element."""
    runs = listen.on_off_runs(listen.load(path))
    if not runs:
        return ()
    unit = min(seconds for _, seconds in runs)
    letters, current = [], ""
    for on, seconds in runs:
        if on:
            current += "." if seconds < 2 * unit else "-"
        elif seconds >= 2 * unit:
            letters.append(current)
            current = ""
    return (*letters, current)


def morse(episode: Episode) -> str:
    """Decode with what the prompt teaches (letter bank, then demo words); codes it never taught: standard Morse."""
    table: dict[str, str] = {}
    for letter, path in episode.bank.items():
        codes = _morse_codes(path)
        if len(codes) == 1:
            table.setdefault(codes[0], letter.upper())
    for demo in episode.demos:
        word = "".join(ch for ch in (demo.label or "").upper() if ch.isalpha())
        codes = _morse_codes(demo.path)
        if len(codes) == len(word):
            for code, letter in zip(codes, word):
                table.setdefault(code, letter)
    fallback = _standard_code()
    return "".join(table.get(code) or fallback.get(code, "?") for code in _morse_codes(episode.query.path)).lower()
