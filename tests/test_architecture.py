"""The package's shape as docs/architecture.md fixes it: each layer imports only what the page's table lets it, no
import cycles, a backend needs only its own SDK, and outside acousticbench/benchmarks/ nothing names a benchmark. The
table and the list of rules are read from the page, and every rule it lists is a test here (and every test here a
rule it lists), so the page and the code cannot drift apart."""
from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
from pathlib import Path

import pytest

from architecture_page import LAYER_OF_FRONT, enforced, enforces, layer_rules, layer_violations, listed_rules
from harness_cli import REPO, python

PACKAGE = REPO / "acousticbench"


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """Every harness module `path` imports, at any depth of the file (lazy imports inside functions count too)."""
    found = set()
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            for alias in node.names:  # `from package import module` imports the module
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return {m for m in found if m in modules}


LOADED_BY_NAME = re.compile(r"^(acousticbench(?:\.\w+)+):\w+$")  # "module:Class", imported when first used


def loaded_by_name(path: Path, modules: set[str]) -> set[str]:
    """The harness modules a file loads through "module:Class" strings (the catalog's backends)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = LOADED_BY_NAME.match(node.value)
            if match:
                assert match.group(1) in modules, f"{path}: {node.value!r} names no module of the harness"
                found.add(match.group(1))
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    """module -> the harness modules it imports, by import statement (at any depth) or by a "module:Class" string."""
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    # a package that loads its own plugins by name (serve/adapters) is a registry, not an upward import
    return {name: (imports_of(path, set(files))
                   | {m for m in loaded_by_name(path, set(files)) if not m.startswith(name + ".")}) - {name}
            for name, path in files.items()}


def test_the_graph_sees_modules_loaded_by_name(graph):
    assert "acousticbench.benchmarks.oracle" in graph["acousticbench.run.catalog"]  # the Oracle, loaded when first used
    assert "acousticbench.models.openai_compat" in graph["acousticbench.run.catalog"]


def outside_benchmarks() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py") if "benchmarks" not in p.relative_to(PACKAGE).parts}


@enforces("seam-imports")
def test_outside_the_benchmarks_nothing_imports_a_benchmarks_own_module(graph):
    bad = sorted(f"{m} imports {dep}" for m in outside_benchmarks() for dep in graph[m]
                 if dep.startswith("acousticbench.benchmarks.") and dep.count(".") > 2)
    assert not bad, bad


def what_benchmarks_own() -> tuple[set[str], set[str], set[str]]:
    """Every registered benchmark's names (as registered, and its package's folder), its task codes (the names its
    face answers to in --task that stand for one task: a group such as 'all' is a word of the face, not a task), and
    the fields of its record that the seam does not declare for every benchmark (a record's base, a Prompt, a Reply,
    an Entry, an answer's and a clip's facts, a model's capabilities as the catalog lists them)."""
    from dataclasses import fields

    from acousticbench.benchmarks import BENCHMARKS, AnswerFacts, ClipFacts, Entry, faces, get_benchmark
    from acousticbench.core.records import Prompt, PromptPart, RecordBase, Reply
    from acousticbench.run.catalog import MODELS

    names = set(BENCHMARKS) | {package.rpartition(".")[2] for package in BENCHMARKS.values()}
    codes = {code for face in faces().values() for code in face.task_names() if face.claim_tasks([code]) == [code]}
    declared = set().union(*(model.model_fields for model in (RecordBase, Prompt, PromptPart, Reply)),
                           *({f.name for f in fields(kind)} for kind in (Entry, AnswerFacts, ClipFacts)),
                           *(entry.capabilities for entry in MODELS.values()))
    owned = set().union(*(get_benchmark(name).record_type.model_fields for name in BENCHMARKS)) - declared
    return names, codes, owned


def outside_the_benchmarks_and_scripts() -> dict[str, Path]:
    return {**outside_benchmarks(), **{f"scripts/{p.name}": p for p in (REPO / "scripts").glob("*.py")}}


def what_it_names(path: Path, words: set[str], fields: set[str]) -> list[str]:
    """Where a file says one of `words` as a string, or uses one of `fields` as a string, a flag, an attribute, a
    keyword argument or a field it declares."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}  # a method, never a field
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            flag = node.value.startswith("--") and node.value[2:].replace("-", "_") in fields
            if node.value in words or node.value in fields or flag:
                found.append(f"{node.lineno} says {node.value!r}")
        elif isinstance(node, ast.Attribute) and node.attr in fields and id(node) not in called:
            found.append(f"{node.lineno} reads .{node.attr}")
        elif isinstance(node, ast.keyword) and node.arg in fields:
            found.append(f"{node.lineno} passes {node.arg}=")
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id in fields:
            found.append(f"{node.lineno} declares {node.target.id}")
    return found


def test_the_finder_knows_what_a_benchmark_owns(tmp_path):
    names, codes, owned = what_benchmarks_own()
    assert {"AcousticBench", "AudioICL", "acoustic", "audioicl"} <= names
    assert {"rad", "dir", "AudioCount", "MorseCode"} <= codes and not {"all", "audioicl"} & codes
    assert {"chosen", "answer", "judge", "prediction", "gt", "shots", "scoring", "split"} <= owned
    # the seam's words: a record's base, a Prompt's, an Entry's and an answer's facts, a model's capability
    assert not {"id", "status", "task", "audio", "prompt", "correct", "kind", "logprobs"} & owned
    bad, fine = tmp_path / "bad.py", tmp_path / "fine.py"
    bad.write_text("x = r.chosen if r.split == 'rad' else run.spec(judge='llm')\nparser.add_argument('--scoring')\n")
    fine.write_text("reply = backend.answer(prompt)\nhelp = 'the AudioICL pack'\n")  # a method; prose
    assert len(what_it_names(bad, names | codes, owned)) == 5 and what_it_names(fine, names | codes, owned) == []


@enforces("seam-names")
def test_outside_the_benchmarks_nothing_names_a_benchmark_its_tasks_or_its_fields():
    """Every module outside acousticbench/benchmarks/, and every script, goes through the seam: no benchmark's name,
    no task code, no field only a benchmark's record has (the model and serve layers, below the seam, take a Prompt
    and give a Reply: their words are a wire's, so only names and task codes are checked there)."""
    names, codes, owned = what_benchmarks_own()
    bad = []
    for module, path in outside_the_benchmarks_and_scripts().items():
        below = module.startswith(("acousticbench.models", "acousticbench.serve"))
        bad += [f"{module}:{where}" for where in what_it_names(path, names | codes, set() if below else owned)]
    for asset in (PACKAGE / "tools" / "report" / "assets").iterdir():  # the report page's script and styles too
        bad += [f"{asset.name} says {name!r}" for name in names if name in asset.read_text(encoding="utf-8")]
    assert not bad, bad


def own_fields() -> set[str]:
    """The fields of each benchmark's spec and record that the other benchmark's lack: its own."""
    from acousticbench.benchmarks import faces, get_benchmark

    specs, records = [], []
    from acousticbench.benchmarks import BENCHMARKS

    for name in BENCHMARKS:
        records.append(set(get_benchmark(name).record_type.model_fields))
        options = faces()[name].options
        specs.append(set(options.model_fields) | ({options.VARIANT[0]} if options.VARIANT else set()))
    shared = set.intersection(*records) | set.intersection(*specs)
    return (set.union(*records) | set.union(*specs)) - shared


@enforces("seam-probes")
def test_outside_the_benchmarks_nothing_probes_for_a_benchmarks_fields():
    fields = own_fields()
    assert {"shots", "split", "judge", "gt", "prediction", "chosen"} <= fields  # the finder knows them
    bad = []
    for module, path in outside_the_benchmarks_and_scripts().items():
        if module.startswith(("acousticbench.models", "acousticbench.serve")):
            continue  # below the benchmarks: they never hold a spec or a record (an adapter's own `logprobs` is not one)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("hasattr", "getattr")
                    and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and node.args[1].value in fields):
                bad.append(f"{module}:{node.lineno} {node.func.id}(..., {node.args[1].value!r})")
    assert not bad, bad


@enforces("seam-probes")
def test_the_tools_probe_nothing():
    """The tools read what a benchmark declares (its Benchmark members), never whether it happens to have a thing."""
    bad = [f"{module}:{node.lineno}" for module, path in outside_benchmarks().items()
           if module.startswith("acousticbench.tools")
           for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
           if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "hasattr"]
    assert not bad, bad


@enforces("judge-home")
def test_the_judge_lives_in_acousticbenchs_package():
    from acousticbench.benchmarks import BENCHMARKS

    home = BENCHMARKS["AcousticBench"]
    assert importlib.util.find_spec(f"{home}.judge") is not None
    stray = sorted(str(p.relative_to(REPO)) for p in PACKAGE.rglob("*judge*")
                   if (p.is_dir() or p.suffix == ".py") and "__pycache__" not in p.parts
                   and not module_name(p).startswith(home + "."))
    assert not stray, stray


@enforces("loaded-by-name")
def test_a_string_loaded_backend_is_never_above_the_catalog(graph):
    """The catalog loads backends by name; each must be a model backend or a seam-level module, never a tool."""
    by_name = loaded_by_name(PACKAGE / "run" / "catalog.py", set(graph))
    assert by_name  # the catalog does load its backends by name
    for dep in by_name:
        assert dep.startswith("acousticbench.models.") or dep.count(".") == 2 and dep.startswith(
            "acousticbench.benchmarks."), dep


@enforces("layers")
def test_every_module_imports_only_what_its_layer_may(graph):
    rules = layer_rules()
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert set(rules) == folders, f"docs/architecture.md's rows: {sorted(rules)}; the package's: {sorted(folders)}"
    assert layer_violations(graph, rules) == []


def test_the_layer_check_finds_an_upward_import_and_one_outside_a_partial_allowance():
    rules = {"core": set(), "models": {"core.records"}, "run": {"core", "models"}}
    graph = {"acousticbench.core.records": {"acousticbench.run.sweep"}, "acousticbench.models.base":
             {"acousticbench.core.records", "acousticbench.core.settings"}, "acousticbench.run.sweep":
             {"acousticbench.models.base", "acousticbench.core.settings", "acousticbench.run.cells"},
             "acousticbench": {"acousticbench.run.sweep"}, "acousticbench.run.cells": set()}
    assert layer_violations(graph, rules) == ["acousticbench.core.records imports acousticbench.run.sweep",
                                              "acousticbench.models.base imports acousticbench.core.settings"]
    assert LAYER_OF_FRONT == {"acousticbench", "acousticbench.__main__"}


def test_every_rule_the_page_lists_is_a_test_here_and_every_test_here_a_rule_it_lists():
    assert listed_rules() == set(enforced()), "docs/architecture.md's rules and tests/test_architecture.py differ"


@enforces("judge-home")
def test_engine_imports_no_judge_and_the_judge_uses_the_engines_retry_policy(graph):
    assert not {d for d in graph["acousticbench.engine.executor"] if d.startswith("acousticbench.benchmarks.acoustic.judge")}
    assert "acousticbench.engine.retry" in graph["acousticbench.engine.executor"] and "acousticbench.engine.retry" in graph["acousticbench.benchmarks.acoustic.judge.llm"]


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm: the groups of modules that import each other, directly or through others."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for dep in graph[node]:
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [g for g in groups if len(g) > 1]


@enforces("no-cycles")
def test_no_import_cycles_anywhere(graph):
    assert strongly_connected(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


BLOCK = "import sys; [sys.modules.__setitem__(m, None) for m in {blocked!r}]; from acousticbench.cli import main; sys.exit(main({argv!r}))"


def run_without(blocked: list[str], *argv: str, cwd: Path) -> subprocess.CompletedProcess:
    """run.py in a process where the named packages cannot be imported, as if their extra were not installed."""
    code = BLOCK.format(blocked=blocked, argv=list(argv))
    return python("-c", code, cwd=cwd, timeout=300)


@enforces("own-sdk")
@pytest.mark.parametrize("model, blocked, extra", [
    ("Voxtral-Mini-3B", ["aiohttp"], "api"),
    ("GPT-Audio-Mini", ["openai"], "api"),
    ("Gemini-3-Flash", ["google", "google.genai"], "api"),
    ("Tiny-Qwen2-Audio", ["aiohttp"], "hf-server"),  # aiohttp is in two extras: the model's own is named
])
def test_a_missing_extra_is_one_line_naming_it(model, blocked, extra, tiny_pack, tmp_path):
    out = run_without(blocked, "--model", model, "--task", "rad", "--archive", str(tiny_pack),
                      "--endpoint", "http://127.0.0.1:9", cwd=tmp_path)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.count("\n") == 1 and f"[{extra}] extra" in out.stderr and blocked[0] in out.stderr
    assert not (tmp_path / "results").exists()


@enforces("own-sdk")
@pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in ("torch", "transformers", "fastapi", "uvicorn")),
                    reason="Tiny-Qwen2-Audio needs torch and the [hf-server] extra")
@pytest.mark.slow  # starts our transformers server with Tiny-Qwen2-Audio
def test_tiny_qwen2_audio_runs_with_neither_provider_sdk(tiny_pack, tmp_path):
    out = run_without(["openai", "google", "google.genai", "faster_whisper", "docker"], "--model", "Tiny-Qwen2-Audio",
                      "--task", "rad", "--max-samples", "3", "--judge", "rules", "--archive", str(tiny_pack), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Tiny-Qwen2-Audio on rad (seed 42)" in out.stdout and "0 errors" in out.stdout


@pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in ("torch", "transformers", "fastapi", "uvicorn")),
                    reason="Tiny-Qwen2-Audio needs torch and the [hf-server] extra")
def test_a_sweep_starts_the_local_server_once(open_pack, tmp_path):
    import json

    out = run_without([], "--model", "Tiny-Qwen2-Audio", "--task", "rad,pit", "--seeds", "42,43", "--max-samples", "2",
                      "--judge", "rules", "--archive", str(open_pack), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    configs = [json.loads(p.read_text()) for p in (tmp_path / "results").glob("*/config.json")]
    assert sorted((c["spec"]["task"], c["spec"]["seed"]) for c in configs) == [("pit", 42), ("pit", 43), ("rad", 42), ("rad", 43)]
    assert len({c["backend"]["server_pid"] for c in configs}) == 1  # one server for the four runs
    assert "Sweep: 4 runs, 4 finished, 0 failed" in out.stdout


# the modules that must loop over the registered benchmarks and never name one (the integrator widens this)
BENCHMARK_FREE = ("acousticbench.tools.leaderboard", "acousticbench.tools.report")
SEAM = "acousticbench.benchmarks"


def _benchmark_free_files() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py") if module_name(p).startswith(BENCHMARK_FREE)}


@enforces("benchmark-free-tools")
def test_the_leaderboard_and_report_import_only_the_seam(graph):
    files = _benchmark_free_files()
    assert {"acousticbench.tools.leaderboard", "acousticbench.tools.report.answers"} <= set(files)
    bad = sorted(f"{m} imports {dep}" for m in files for dep in graph[m] if dep.startswith(SEAM + "."))
    loaded = sorted(f"{m} names {node.value}" for m, path in files.items() for node in ast.walk(ast.parse(path.read_text()))
                    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith(SEAM + "."))
    assert not bad and not loaded, bad + loaded


@enforces("benchmark-free-tools")
def test_the_shared_view_kit_is_ground_floor_and_benchmarks_draw_without_the_report(graph):
    assert graph["acousticbench.core.tables"] == set()
    bad = sorted(f"{m} imports {dep}" for m, deps in graph.items() if m.startswith(SEAM)
                 for dep in deps if dep.startswith(BENCHMARK_FREE))
    assert not bad, bad


def _backend_members() -> set[str]:
    """What the Backend protocol declares: its annotated attributes and its methods."""
    from acousticbench.models.base import Backend

    return set(Backend.__annotations__) | {name for name in vars(Backend) if not name.startswith("_")}


def backend_probes(source: str, members: set[str]) -> list[str]:
    """getattr/hasattr calls on a backend (an object named like one) or for a member the protocol declares."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
                and len(node.args) > 1):
            name = node.args[1].value if isinstance(node.args[1], ast.Constant) else None
            if "backend" in ast.unparse(node.args[0]).lower() or name in members:
                found.append(f"{node.lineno} {ast.unparse(node)}")
    return found


@enforces("backend-probes")
def test_outside_the_models_nothing_probes_a_backend_it_reads_what_the_protocol_declares():
    members = _backend_members()
    assert {"endpoint_names", "retry_settings", "presentation_order", "max_concurrency"} <= members
    assert backend_probes('order = getattr(session.backend, "presentation_order", None)', members)  # the finder finds
    bad = [f"{module}:{probe}" for module, path in {module_name(p): p for p in PACKAGE.rglob("*.py")}.items()
           if not module.startswith("acousticbench.models") for probe in backend_probes(path.read_text(), members)]
    assert not bad, bad


@enforces("backend-members")
def test_every_registered_backend_has_every_member_the_protocol_declares():
    from acousticbench.core.errors import UserError
    from acousticbench.run.catalog import MODELS

    members, checked = _backend_members(), 0
    for entry in MODELS.values():
        try:
            backend = entry.backend_class()
        except UserError:  # its extra is not installed here
            continue
        checked += 1
        assert not members - set(dir(backend)), (entry.name, sorted(members - set(dir(backend))))
    assert checked >= 4  # the local models at least


def protocol_members(protocol: type) -> set[str]:
    """Every member a Protocol declares, its bases' included: methods and annotated attributes."""
    names = set()
    for cls in protocol.__mro__:
        if cls.__module__ == "acousticbench.benchmarks":
            names |= {n for n in vars(cls) if not n.startswith("_")} | set(getattr(cls, "__annotations__", {}))
    return names


@enforces("benchmark-members")
def test_every_registered_benchmark_and_face_has_every_declared_member():
    """The run path and the tools read these members plainly: a benchmark or face lacking one would fail mid-run."""
    from acousticbench.benchmarks import Benchmark, Face, Views, faces, get_benchmark

    assert {"prepare", "record_maker", "outcome", "views", "item_noun"} <= protocol_members(Benchmark)
    for name, face in faces().items():
        bench = get_benchmark(name)
        assert not [m for m in protocol_members(Benchmark) if not hasattr(bench, m)], name
        assert isinstance(bench.views, Views), name
        assert isinstance(face, Face) and face.tasks, name  # a value with every member, its tasks given
