"""The guide's toy backend (docs/examples/toy_backend.py), registered by a user's script as its docstring shows and
run through acousticbench.evaluate: one record per question, its answers labelled, the backend named in config.json,
and the registry's refusals one line with the fix."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from acousticbench.benchmarks.acoustic.pack import load_questions
from acousticbench.core.errors import UserError
from acousticbench.models.base import BackendBase
from acousticbench.run.catalog import register_model
from harness_cli import REPO, python, run_dirs

EXAMPLES = REPO / "docs" / "examples"
# a user's script: the registry is this process's, so registering in a subprocess leaves the tests' own untouched
SCRIPT = """
import sys
sys.path.insert(0, {examples!r})

import acousticbench
from toy_backend import FirstAnswer

acousticbench.register_model("Toy", FirstAnswer, description="answers the first option, without listening")
result = acousticbench.evaluate(model="Toy", task="rad", archive={archive!r}, judge="rules")
print("status", result.status, [(run.model, run.n, run.accuracy) for run in result])
"""


def test_the_toy_backend_registered_by_a_script_runs_every_question(tiny_pack, tmp_path):
    out = python("-c", SCRIPT.format(examples=str(EXAMPLES), archive=str(tiny_pack)), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("status 0 [('Toy', 8,")  # what the script printed: evaluate() itself prints nothing
    (run_dir,) = run_dirs(tmp_path / "results")
    assert run_dir.name.startswith("Toy-rad-toy-seed42-")
    records = [json.loads(line) for line in (run_dir / "responses.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in records) == sorted(q.id for q in load_questions(tiny_pack, "rad"))
    assert {(r["status"], r["response"], r["chosen"]) for r in records} == {("answered", "The answer is A.", "A")}
    config = json.loads((run_dir / "config.json").read_text())
    assert config["backend"] == {"backend": "toy", "model_id": "Toy"}


class Nameless(BackendBase):
    async def answer(self, prompt):
        raise NotImplementedError


def test_the_registry_refuses_a_taken_name_and_a_backend_without_a_name(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    from toy_backend import FirstAnswer

    with pytest.raises(UserError, match="'Oracle' is already a model .*another name"):
        register_model("Oracle", FirstAnswer)
    with pytest.raises(UserError, match="cannot name a model: --model splits on commas"):
        register_model("Toy,Random", FirstAnswer)
    with pytest.raises(UserError, match="test_guide_backend:Nameless lacks backend_name: subclass .*BackendBase"):
        register_model("Nameless", Nameless)
    with pytest.raises(UserError, match="cannot import toy_backend:Missing"):
        register_model("Missing", "toy_backend:Missing")


def test_a_backend_registered_as_needing_its_clips_is_refused_the_no_audio_control(tiny_pack, tmp_path):
    script = SCRIPT.replace('description="answers the first option, without listening")',
                            'without_audio=False)').replace('judge="rules")', 'judge="rules", control="no-audio")')
    out = python("-c", script.format(examples=str(EXAMPLES), archive=str(tiny_pack)), cwd=tmp_path)
    assert out.returncode == 1 and "Toy cannot be asked without its clips: drop no-audio from --control" in out.stderr
    assert not (tmp_path / "results").exists()
