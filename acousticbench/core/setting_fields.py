"""How a harness setting is declared and checked: setting() makes a field that is also a flag, flag_of() spells it,
validated() turns a bad value into one line naming the flag, and the validators the settings types share."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from acousticbench.core.errors import UserError


def setting(default: Any, help: str, *, flag: str | None = None, metavar: str | None = None,
            per_run: bool = True, **field: Any) -> Any:
    """A declared setting: its default, its help line, and how the command line spells it (flag None: --<name>).
    per_run: part of each run's spec (config.json's `spec`), not only of the command that starts the runs."""
    extra = {"flag": flag, "metavar": metavar, "per_run": per_run}
    return Field(default, description=help, json_schema_extra=extra, **field)


def flag_of(model: type[BaseModel], name: str) -> str:
    """How a field of a settings model is spelt on the command line."""
    extra = model.model_fields[name].json_schema_extra or {}
    return extra.get("flag") or "--" + name.replace("_", "-")


def per_run_fields(model: type[BaseModel]) -> list[str]:
    return [name for name, f in model.model_fields.items() if (f.json_schema_extra or {}).get("per_run", True)]


def comma_list(value: Any) -> Any:
    """'a,b' or ['a', 'b'] or 'a' -> a tuple; other values are left to the field's type."""
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    if isinstance(value, (int, Path)):
        return (value,)
    return tuple(value) if isinstance(value, (list, tuple)) else value


def validated(model: type[BaseModel], values: dict[str, Any]) -> Any:
    """The settings object, or one UserError line naming the flag to fix (the API's and the command line's alike)."""
    try:
        return model(**values)
    except ValidationError as err:
        first = err.errors()[0]
        name = str(first["loc"][0]) if first["loc"] else ""
        message = str(first["msg"]).removeprefix("Value error, ")
        flag = flag_of(model, name) if name in model.model_fields else name
        raise UserError(message if message.startswith("--") else f"{flag}: {message}") from None


def whole_number(value: Any, flag: str) -> int:
    """A count given as a number or its text; one line naming the flag otherwise."""
    text = str(value).strip()
    if isinstance(value, bool) or not text.lstrip("-").isdigit():
        raise ValueError(f"{flag}: {value!r} is not a whole number")
    number = int(text)
    if number < 1:
        raise ValueError(f"{flag}: must be 1 or more, got {number}")
    return number


def whole_numbers(value: Any, flag: str, example: str) -> tuple[int, ...]:
    """A comma list of whole numbers as ints ('42,43', [42, 43], 42): True or 42.5 is no whole number, never
    quietly seed 1 or seed 42; one line naming the flag otherwise."""
    parts = comma_list(value)
    if not isinstance(parts, tuple):
        raise ValueError(f"{flag}: {value!r} is not a comma list of whole numbers, e.g. {example}")
    numbers = []
    for part in parts:
        text = part.strip() if isinstance(part, str) else None
        if isinstance(part, bool) or not (isinstance(part, int) or (text and text.lstrip("-").isdigit())):
            raise ValueError(f"{flag}: {value!r} is not a comma list of whole numbers ({part!r} is not one), "
                             f"e.g. {example}")
        numbers.append(int(part))
    return tuple(numbers)


def no_bool(value: Any, flag: str) -> Any:
    """A number setting given True or False (which pydantic would take as 1 or 0): one line naming the flag."""
    if isinstance(value, bool):
        raise ValueError(f"{flag}: {value!r} is not a number")
    return value
