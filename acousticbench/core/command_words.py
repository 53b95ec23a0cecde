"""How a message names another command: written once in the console command's words (`acousticbench models`,
`acousticbench pack verify`), and spelt at print time the way the command line the user typed takes it (run.py
installs `python run.py --list-models`, ...), so no line names a flag the command printing it rejects."""
from __future__ import annotations

import re

_spelling: dict[str, str] = {}  # console words -> the words of the command line this process was started as


def spell_commands_as(spelling: dict[str, str]) -> dict[str, str]:
    """Install how this process's command line spells each console command; returns the spelling it replaces."""
    global _spelling
    before, _spelling = _spelling, dict(spelling)
    return before


def spelt(text: str) -> str:
    """The text with every console command it names spelt as this process's command line takes it."""
    if not _spelling:
        return text
    words = sorted(_spelling, key=len, reverse=True)  # `acousticbench pack verify` before `acousticbench pack`
    pattern = re.compile(r"(?<![\w-])(?:python -m )?(" + "|".join(map(re.escape, words)) + r")(?![\w-])")
    return pattern.sub(lambda m: _spelling[m.group(1)], text)
