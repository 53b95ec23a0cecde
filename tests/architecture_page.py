"""docs/architecture.md read as data by tests/test_architecture.py: its table of layers (what each folder may import)
and its list of rules, each of which a test there enforces; the page is the one statement of both."""
from __future__ import annotations

import re
from collections.abc import Callable

from harness_cli import REPO

PAGE = REPO / "docs" / "architecture.md"
LAYER_OF_FRONT = {"acousticbench", "acousticbench.__main__"}  # above every layer: `import acousticbench`, python -m
ROW = re.compile(r"^\| `(\w+)/` \|.*\| ([^|]+) \|$")
RULE = re.compile(r"^- `([a-z-]+)`: ")
_ENFORCED: dict[str, list[str]] = {}


def _section(heading: str) -> list[str]:
    """The lines of one `## ` section of the page."""
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    start = lines.index(f"## {heading}") + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start:end]


def layer_rules() -> dict[str, set[str]]:
    """folder -> what it may import ("core": the whole folder; "core.records": that module), from the page's table."""
    rules = {}
    for line in _section("The layers"):
        match = ROW.match(line.strip())
        if match:
            allowed = match.group(2).strip()
            names = set(re.findall(r"`([\w.]+)`", allowed))
            assert names or allowed == "nothing", f"docs/architecture.md: {match.group(1)}/ may import {allowed!r}?"
            rules[match.group(1)] = names
    return rules


def layer_violations(graph: dict[str, set[str]], rules: dict[str, set[str]]) -> list[str]:
    """Every import of the graph (module -> the harness modules it imports) that its layer's rule does not allow."""
    bad = []
    for module, deps in sorted(graph.items()):
        if module in LAYER_OF_FRONT:
            continue
        layer = module.split(".")[1]
        allowed = {layer} | rules.get(layer, set())
        for dep in sorted(deps):
            inside = dep.removeprefix("acousticbench.")
            if not any(inside == name or inside.startswith(name + ".") for name in allowed):
                bad.append(f"{module} imports {dep}")
    return bad


def listed_rules() -> set[str]:
    """The names of the rules the page lists."""
    return {m.group(1) for line in _section("The rules") if (m := RULE.match(line))}


def enforces(rule: str) -> Callable:
    """Marks a test as (part of) the page's rule `rule`."""
    def mark(test: Callable) -> Callable:
        _ENFORCED.setdefault(rule, []).append(test.__name__)
        return test
    return mark


def enforced() -> dict[str, list[str]]:
    """rule -> the tests that enforce it."""
    return dict(_ENFORCED)
