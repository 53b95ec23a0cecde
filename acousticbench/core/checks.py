"""Settings that cannot work, found before anything starts: URLs, ports, seeds, header values (keys) and the .env
file, each a one-line UserError naming the setting and the fix."""
from __future__ import annotations

import io
import os
import re
import urllib.parse
from pathlib import Path

from acousticbench.core.environment import check_numbers
from acousticbench.core.errors import UserError

# The seed goes to every backend: vLLM takes int64 (protocol.py: Field(ge=_LONG_INFO.min, le=_LONG_INFO.max), torch
# long), the OpenAI API an integer, torch.manual_seed up to 2**64 - 1, but Gemini's GenerationConfig.seed is an int32
# and numpy's default_rng refuses negatives: what every one accepts is 0 .. 2**31 - 1.
SEED_MIN, SEED_MAX = 0, 2**31 - 1
_URL_VARIABLES = re.compile(r"^(ACOUSTICBENCH_\w+_ENDPOINT|ACOUSTICBENCH_\w+_BASE_URL|OPENAI_BASE_URL|"
                            r"GOOGLE_GEMINI_BASE_URL)$")
_KEY_VARIABLES = re.compile(r"^(OPENAI_API_KEY|GEMINI_API_KEY|GOOGLE_API_KEY|HF_TOKEN|ACOUSTICBENCH_\w+_(API_KEY|TOKEN))$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_seed(seed: int, where: str = "--seed") -> int:
    if not SEED_MIN <= seed <= SEED_MAX:
        raise UserError(f"{where} {seed} is outside {SEED_MIN}..{SEED_MAX}, the range every backend accepts "
                        "(Gemini's seed is a 32-bit integer): choose a seed in it, e.g. 42.")
    return seed


def check_url(url: str, where: str) -> str:
    """An http(s) URL with a host and a port a socket can use; `where` names the flag or variable it came from."""
    fix = f"set {where} to a URL such as http://127.0.0.1:8000"
    if _CONTROL.search(url) or url != url.strip():
        raise UserError(f"{where} holds a space or a line break ({url!r}): {fix}.")
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port  # raises for a port out of 0..65535 or not a number
    except ValueError as err:
        raise UserError(f"{where}={url!r} is not a valid URL ({err}): {fix}.") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(f"{where}={url!r} is not an http(s) URL with a host: {fix}.")
    if port == 0:
        raise UserError(f"{where}={url!r} names port 0, which no server listens on: {fix}.")
    return url


def check_header_value(value: str, where: str) -> str:
    """A value sent in an HTTP header (a key, a token): one line of printable ASCII."""
    bad = _CONTROL.search(value)
    if bad:
        what = "a line break" if bad.group() in "\r\n" else f"the control character {bad.group()!r}"
        raise UserError(f"{where} holds {what} at character {bad.start() + 1}: set it to the value alone, on one line.")
    if not value.isascii():
        raise UserError(f"{where} holds a character that is not ASCII, which no HTTP header can carry: set it to the "
                        "value alone, as the provider shows it.")
    return value


def check_environment(environ: os._Environ | dict[str, str] | None = None) -> None:
    """Every endpoint URL and key the harness may read from the environment."""
    environ = os.environ if environ is None else environ
    if environ is os.environ:
        check_numbers()  # every number the run would read later: a bad one is one line now
    for name in sorted(environ):
        value = environ[name]
        if _URL_VARIABLES.match(name) and value.strip():
            for url in value.split(","):  # an endpoint variable may list several servers
                check_url(url.strip(), name)
        elif _KEY_VARIABLES.match(name) and value:
            check_header_value(value, name)  # a trailing newline too: not every client strips it


def load_env_file(path: Path | None = None) -> Path | None:
    """Load .env (the working folder's, or the nearest above it) into os.environ without overriding a variable
    already set; a line python-dotenv cannot read, or a value spanning lines, is one line naming it."""
    found = path or next((folder / ".env" for folder in (Path.cwd(), *Path.cwd().parents)
                          if (folder / ".env").is_file()), None)  # where python-dotenv's find_dotenv(usecwd=True) looks
    if found is None or not found.is_file():
        return None
    from dotenv.parser import parse_stream  # only when there is a file to read

    try:
        text = found.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise UserError(f"cannot read {found} ({err}): fix it or remove it.") from None
    values: dict[str, str] = {}
    for binding in parse_stream(io.StringIO(text)):
        line = binding.original.line
        if binding.error:
            raise UserError(f"{found}:{line}: cannot be read as NAME=value (an unclosed quote takes every line after "
                            "it): close the quote or remove the line.")
        if binding.key is None:
            continue
        if binding.value and ("\n" in binding.value or "\r" in binding.value):
            raise UserError(f"{found}:{line}: the value of {binding.key} spans lines: put it on one line.")
        values[binding.key] = binding.value or ""
    for key, value in values.items():
        os.environ.setdefault(key, value)  # real environment variables win
    return found
