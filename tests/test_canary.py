"""The start-of-run canary (--canary): tone probes asked before a served model's runs; against simulated listeners, one
that hears passes, a server that drops the second clip and a listener that hears mono are caught, and a mono
listener's `dir` run is marked from the probe (the catalog's channels are not what decides)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from acousticbench.run.canary import probes
from conftest import write_tiny_pack
from harness_cli import harness_env, run_cli, run_dirs
from servers import openai_server
from servers.listener import Listener, Question, pack_questions

KNOWS = (1.0, 0.95, 0.9, 0.85, 0.8)
LISTENERS = {"listener/hears": Listener("hears", knows=KNOWS),
             "listener/drops": Listener("drops", knows=KNOWS, clips=1),  # its server passes on the first clip only
             "listener/mono": Listener("mono", knows=KNOWS, channels=1)}


def probe_questions(folder: Path) -> dict[str, tuple[str, Question]]:
    """What the listeners know of the canary's probes: each keyed, as the server keys it, by its first clip."""
    return {hashlib.sha256(Path(paths[0]).read_bytes()).hexdigest(): (pid, Question(answer, 1))
            for pid, _, paths, answer in probes(folder)}


def run_each(root: Path, archive: Path, task: str, *extra: str) -> dict[str, dict]:
    """Each listener's run of `task` with --canary: served model id -> (config.json, metrics.json)."""
    questions = {**pack_questions(archive, task), **probe_questions(root / "probes")}
    out = {}
    with openai_server.serve(model_ids=list(LISTENERS), listeners=LISTENERS, questions=questions) as server:
        env = harness_env(ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT=server.url)
        for api in LISTENERS:
            run = run_cli("--model", "Voxtral-Mini-3B", "--api-model", api, "--task", task, "--canary", "--archive",
                          str(archive), "--judge", "rules", "--results-dir", f"results-{api[9:]}", *extra, cwd=root,
                          env=env)
            assert run.returncode == 0, run.stderr
            [folder] = run_dirs(root / f"results-{api[9:]}")
            out[api] = {"config": json.loads((folder / "config.json").read_text()),
                        "metrics": json.loads((folder / "metrics.json").read_text()), "stderr": run.stderr}
    return out


def test_the_canary_catches_a_dropped_second_clip_and_a_mono_listener(tmp_path):
    runs = run_each(tmp_path, write_tiny_pack(tmp_path / "archive", "rad", 4), "rad")
    hears, drops, mono = (runs[api] for api in LISTENERS)
    assert hears["config"]["canary"]["two_clips"] == {"right": 4, "of": 4} and hears["config"]["canary"]["channels"] == 2
    assert "canary" not in hears["stderr"]
    assert not drops["config"]["canary"]["hears_second_clip"] and drops["config"]["canary"]["channels"] == 2
    assert "the audio, or the second clip, may not reach the model" in drops["stderr"]
    assert mono["config"]["canary"]["hears_second_clip"] and mono["config"]["canary"]["channels"] == 1
    assert "the model hears mono here" in mono["stderr"]


@pytest.mark.slow
def test_a_mono_listeners_dir_run_is_marked_from_the_probe(tmp_path, open_pack):
    runs = run_each(tmp_path, open_pack, "dir", "--max-samples", "10")
    # the catalog lists Voxtral as mono; the probe, which heard left from right, is what decides
    assert runs["listener/hears"]["metrics"]["listener"] is None
    assert runs["listener/mono"]["metrics"]["listener"] == "mono listener: chance by construction"


def test_probes_that_get_no_answer_give_no_verdict_on_what_the_model_hears(tmp_path):
    from servers.local import FaultPlan

    archive = write_tiny_pack(tmp_path / "archive", "rad", 4)
    with openai_server.serve(FaultPlan(always="400")) as server:  # the server refuses every request it gets
        run = run_cli("--model", "Voxtral-Mini-3B", "--task", "rad", "--canary", "--max-error-rate", "1", "--archive",
                      str(archive), "--judge", "rules", cwd=tmp_path,
                      env=harness_env(ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT=server.url))
    assert run.returncode in (0, 1), run.stderr
    [folder] = run_dirs(tmp_path / "results")
    canary = json.loads((folder / "config.json").read_text())["canary"]
    assert canary["failed"] == canary["of"] == 8 and "400" in canary["error"]
    assert "canary: 8 of 8 probes got no answer" in run.stderr and "hears mono" not in run.stderr
