"""A benchmark's own commands (`acousticbench eval-str`, `judge`, `export-lmms-tasks`, `build-audioicl`) each print
what a typed function returns: the face declares those functions (OwnCommand.functions), a script calls them, and
they print nothing."""
from __future__ import annotations

import json

import pytest

from acousticbench.benchmarks import faces
from harness_cli import python


def own(command: str) -> dict:
    """The typed functions a benchmark's command prints from, by name, found through the registered faces."""
    (found,) = [c for face in faces().values() for name, c in face.commands.items() if name == command]
    return {f.__name__: f for f in found.functions}


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_every_command_a_benchmark_adds_declares_the_functions_it_prints_from():
    commands = {name: c for face in faces().values() for name, c in face.commands.items()}
    assert commands and all(c.functions for c in commands.values()), [n for n, c in commands.items() if not c.functions]


def test_judge_agree_and_extract_return_what_the_command_prints(tmp_path, capfd):
    first = write(tmp_path / "rules.jsonl", [{"id": "q1", "chosen": "A"}, {"id": "q2", "chosen": "B"},
                                             {"id": "q3", "chosen": None}])
    second = write(tmp_path / "llm.jsonl", [{"id": "q1", "chosen": "A"}, {"id": "q2", "chosen": "A"},
                                            {"id": "q3", "chosen": "B"}])
    answers = write(tmp_path / "answers.jsonl", [
        {"id": "q1", "prompt": "Which clip is louder? A. The first clip B. The second clip", "response": "A"},
        {"id": "q2", "prompt": "Which clip is louder? A. The first clip B. The second clip", "response": "(B)"}])
    functions = own("judge")
    agreement = functions["labelings_agreement"](first, second)
    rows = functions["judged"](answers, rules_only=True)
    assert capfd.readouterr() == ("", "")
    assert (agreement.agreed, [r["chosen"] for r in rows]) == (1, ["A", "B"])
    from acousticbench.benchmarks.acoustic.judge.agreement import report

    printed = python("-m", "acousticbench", "judge", "agree", str(first), str(second))
    assert printed.returncode == 0 and printed.stdout == report(agreement, "rules.jsonl", "llm.jsonl", 50) + "\n"
    printed = python("-m", "acousticbench", "judge", "extract", "--rules-only", str(answers))
    assert printed.returncode == 0 and [json.loads(line) for line in printed.stdout.splitlines()] == rows


def test_eval_str_returns_the_rows_it_wrote_and_the_line_the_command_prints(tmp_path, capfd):
    (tmp_path / "in").mkdir()
    public = write(tmp_path / "in" / "Qwen2-Audio-7B-Instruct_results_k5.jsonl",
                   [{"id": "AudioICL02101", "task": "AudioRemap", "response": "The answer is EGE", "gt": "EGE"},
                    {"id": "AudioICL01801", "task": "MorseCode", "response": "Prior.", "gt": "prior"}])
    scores = own("eval-str")["string_match_scores"](public.parent, tmp_path / "api.csv")
    assert capfd.readouterr() == ("", "")
    assert [(r["task"], r["n"]) for r in scores.rows] == [("AudioRemap", 1), ("MorseCode", 1)]
    printed = python("-m", "acousticbench", "eval-str", "--in", str(public.parent), "--out", str(tmp_path / "cli.csv"))
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == scores.line().replace("api.csv", "cli.csv") + "\n"
    assert (tmp_path / "cli.csv").read_bytes() == (tmp_path / "api.csv").read_bytes()


def test_export_lmms_tasks_returns_the_files_it_wrote_and_the_line_the_command_prints(tiny_pack, tmp_path, capfd):
    written = own("export-lmms-tasks")["lmms_tasks"](tmp_path / "api", tiny_pack, "rad")
    assert capfd.readouterr() == ("", "")
    assert written.written and all(p.is_file() and p.parent == tmp_path / "api" for p in written.written)
    printed = python("-m", "acousticbench", "export-lmms-tasks", str(tmp_path / "cli"), "--archive", str(tiny_pack),
                     "--task", "rad")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == written.line().replace(str(tmp_path / "api"), str(tmp_path / "cli")) + "\n"


@pytest.mark.slow
def test_build_audioicl_returns_the_line_the_command_prints(tmp_path, capfd):
    line = own("build-audioicl")["build_open_pack"](tmp_path / "api")
    assert capfd.readouterr() == ("", "")
    printed = python("-m", "acousticbench", "build-audioicl", "--archive", str(tmp_path / "cli"))
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == line.replace(str(tmp_path / "api"), str(tmp_path / "cli")) + "\n"
