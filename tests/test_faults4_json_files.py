"""Every JSON file the harness writes is JSON that any reader takes: NaN and Infinity, which only Python's lenient
writer produces, never reach a file, and a server's NaN read by Python's lenient reader is written null."""
from __future__ import annotations

import ast
import json

from harness_cli import REPO


def test_every_json_writer_of_the_harness_refuses_nan_and_infinity():
    """json.dumps writes NaN by default; each call must say allow_nan (False where the text goes to a file or a
    server; True only where it is part of a message), or go through core/jsontext.json_text, which writes null."""
    careless = []
    for path in sorted((REPO / "acousticbench").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            called = node.func if isinstance(node, ast.Call) else None
            if (isinstance(called, ast.Attribute) and called.attr in ("dump", "dumps")
                    and isinstance(called.value, ast.Name) and called.value.id == "json"):
                quoting = node.args and isinstance(node.args[0], (ast.JoinedStr, ast.Constant)) or (
                    node.args and isinstance(node.args[0], ast.Call) and getattr(node.args[0].func, "id", "") == "str")
                if not quoting and not any(k.arg == "allow_nan" for k in node.keywords):
                    careless.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert careless == [], careless


def test_a_servers_nan_is_written_null(tmp_path):
    from acousticbench.core.jsontext import json_text
    from acousticbench.run.results import write_json

    write_json(tmp_path / "facts.json", {"decoding": {"temperature": float("nan"), "top_p": [float("inf"), 0.9]}})
    text = (tmp_path / "facts.json").read_text(encoding="utf-8")
    assert json.loads(text, parse_constant=lambda word: 1 / 0) == {"decoding": {"temperature": None,
                                                                               "top_p": [None, 0.9]}}
    assert json_text({"a": float("-inf")}) == '{"a": null}'
