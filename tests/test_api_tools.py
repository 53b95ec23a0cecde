"""The tools over finished runs are typed functions a script calls (acousticbench.leaderboard, compare, load_runs),
and the command line prints from the values they return: a script gets the very numbers `acousticbench leaderboard`
and `acousticbench compare` print."""
from __future__ import annotations

import csv
import io

import pytest

import acousticbench
from acousticbench.core.errors import UserError
from harness_cli import python


@pytest.fixture
def two_models(tiny_pack, tmp_path):
    results = tmp_path / "results"
    made = acousticbench.evaluate(model=["Random", "Always-A"], task="rad", seeds=[7, 8], archive=tiny_pack,
                                  results_dir=results)
    assert made.status == 0
    return results, made


def test_the_leaderboard_a_script_gets_is_the_one_the_command_prints(two_models, capfd):
    results, made = two_models
    board = acousticbench.leaderboard(results)
    assert capfd.readouterr() == ("", "")  # the function prints nothing
    printed = python("-m", "acousticbench", "leaderboard", "--csv", str(results))
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == board.csv()
    assert [dict(row) for row in csv.DictReader(io.StringIO(printed.stdout))] == \
        [{k: str(v) for k, v in row.items()} for row in board.rows]
    markdown = python("-m", "acousticbench", "leaderboard", str(results))
    assert markdown.returncode == 0 and markdown.stdout == board.markdown()
    # its rows are the runs evaluate() returned: each model's mean over its two seeds
    by_model = {row["model"]: row for row in board.rows}
    assert set(by_model) == {"Random", "Always-A"}
    assert sorted((e.model, e.seed, e.accuracy) for e in board.entries) == \
        sorted((r.model, r.seed, r.accuracy) for r in made)
    paired = python("-m", "acousticbench", "leaderboard", "--paired", str(results))
    assert paired.returncode == 0 and paired.stdout == board.paired().markdown()


def test_compare_hands_a_script_the_counts_and_test_the_command_prints(two_models):
    _, made = two_models
    a, b = (next(r.run_dir for r in made if (r.model, r.seed) == (model, 7)) for model in ("Random", "Always-A"))
    comparison = acousticbench.compare([a], [b])
    printed = python("-m", "acousticbench", "compare", str(a), str(b))
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == "\n".join(comparison.lines()) + "\n"
    paired = comparison.paired
    assert f"Agreement on chosen: {paired.agree}/{paired.answers} " in printed.stdout
    assert paired.result is not None and f"p = {paired.result.p_value:.4g}" in printed.stdout
    accuracy_a, accuracy_b = (next(r.accuracy for r in made if r.run_dir == d) for d in (a, b))
    assert paired.result.accuracy_a == pytest.approx(accuracy_a) and paired.result.accuracy_b == pytest.approx(accuracy_b)


def test_a_tool_given_no_runs_raises_the_line_the_command_prints(tmp_path):
    with pytest.raises(UserError, match="is not a folder"):
        acousticbench.leaderboard(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="no finished runs found"):
        acousticbench.leaderboard(tmp_path / "empty")
    printed = python("-m", "acousticbench", "leaderboard", str(tmp_path / "empty"))
    assert (printed.returncode, printed.stderr) == (2, "error: no finished runs found.\n")


def test_rerun_hands_back_each_run_with_the_line_the_command_prints(two_models, tmp_path):
    import json
    import shutil

    _, made = two_models
    run = next(r for r in made if r.model == "Always-A")
    copy = tmp_path / "copy"
    shutil.copytree(run.run_dir, copy)
    lines = (run.run_dir / "responses.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    failed = {**first, "status": "error", "error": "HTTP 500 from the server", "chosen": None, "correct": None}
    for folder in (run.run_dir, copy):  # its first question failed: rerun asks it again
        (folder / "responses.jsonl").write_text("\n".join([json.dumps(failed), *lines[1:]]) + "\n")
    [again] = acousticbench.rerun(run.run_dir, model="Always-A", judge="rules")
    printed = python("-m", "acousticbench", "rerun", "--model", "Always-A", "--judge", "rules", str(copy))
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == again.line.replace(str(run.run_dir / "responses.jsonl"), str(copy / "responses.jsonl")) + "\n"
    assert (again.before["error"], again.after["error"]) == (1, 0)
    assert again.run.records[0].status == "answered" and again.run == acousticbench.load_runs(run.run_dir)[0]
    with pytest.raises(TypeError, match="unknown option.*colour.*judge_model"):
        acousticbench.rejudge(run.run_dir, colour="red")


# each command of `acousticbench` -> the function of `import acousticbench` it prints from
FUNCTION_OF = {"run": "evaluate", "models": "models_table", "tasks": "task_lines", "pack build": "build_packs",
               "pack verify": "verify_packs", "pack extract": "extract_pack", "pack export": "export_packs",
               "pack import": "import_packs", "report": "report", "reference promote": "promote_references",
               "leaderboard": "leaderboard", "compare": "compare", "rerun": "rerun", "rejudge": "rejudge",
               "serve": "serve_model"}


def test_every_command_has_a_function_a_script_calls():
    """A command added without its function fails here: the console's subcommands (down to their actions) are the
    table's, each names a function of the package, and a benchmark's own commands declare theirs."""
    import argparse

    from acousticbench.benchmarks import faces
    from acousticbench.cli.subcommands import console_parser

    def commands(parser, prefix=""):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    inner = list(commands(sub, f"{prefix}{name} "))
                    yield from inner or [f"{prefix}{name}"]

    own = {name: c for face in faces().values() for name, c in face.commands.items()}
    assert set(commands(console_parser())) == set(FUNCTION_OF) | set(own)
    assert all(callable(getattr(acousticbench, name)) for name in FUNCTION_OF.values())
    assert all(c.functions and all(map(callable, c.functions)) for c in own.values())
