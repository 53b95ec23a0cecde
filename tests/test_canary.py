"""The start-of-run canary, on by default for served and API models: against our servers, an honest one passes and
costs eight requests; a server that drops the second clip (guessing, or inferring "the other one" from the clip it
kept), cuts clips after a second, mixes stereo to mono or narrows the band is caught by a plain run, which exits 1 with
one line and marks the runs it invalidates; a stalling server costs each probe one attempt; --no-canary asks nothing;
a local model is told, in one line, that the canary does not apply."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from acousticbench.run.canary import PROBES, probes, verdict
from conftest import write_tiny_pack
from harness_cli import harness_env, run_cli, run_dirs
from servers import gemini_server, openai_server
from servers.ear import Mangle
from servers.local import FaultPlan
from servers.listener import Listener, pack_questions

KNOWS = (1.0, 0.95, 0.9, 0.85, 0.8)
SERVED = ("--model", "Voxtral-Mini-3B", "--judge", "rules")


def served_run(root: Path, archive: Path, task: str, *extra: str, **options):
    """A plain run of the Voxtral stand-in against an OpenAI-wire server with `options`: (the command, its run
    folder or None, the canary's requests to the server)."""
    with openai_server.serve(options.pop("plan", None), **options) as server:
        run = run_cli(*SERVED, "--task", task, "--archive", str(archive), *extra, cwd=root,
                      env=harness_env(ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT=server.url))
        received = server.probes
    folders = run_dirs(root / "results") if (root / "results").is_dir() else []
    return run, (folders[-1] if folders else None), received


def canary_of(folder: Path) -> dict:
    return json.loads((folder / "config.json").read_text())["canary"]


def test_no_answer_from_one_clip_passes_every_probe():
    """Each pitch pair shares its first (or its second) clip byte for byte and has the other answer: a listener that
    hears one clip answers both alike, so it misses one of them."""
    paths = {pid: paths for pid, _, paths, _ in probes()}
    for position in (0, 1):
        answers = defaultdict(set)
        for pid, kind, _, answer in PROBES:
            if kind == "pitch":
                answers[hashlib.sha256(Path(paths[pid][position]).read_bytes()).hexdigest()].add(answer)
        assert any(len(found) == 2 for found in answers.values()), position


def test_what_reaches_the_model_is_read_from_answers_that_move_with_the_audio_not_from_accuracy():
    right = {pid: answer for pid, _, _, answer in PROBES}
    reversed_pitch = {**right, **{pid: "B" if a == "A" else "A" for pid, kind, _, a in PROBES if kind == "pitch"}}
    assert verdict(reversed_pitch, {})["verdict"] == "passed"  # wrong on every pitch, yet it hears both clips
    poor_at_pitch = {**right, **{pid: "A" for pid, kind, _, _ in PROBES if kind == "pitch"}}
    assert verdict(poor_at_pitch, {})["verdict"] == "inconclusive"  # no pitch heard: nothing said of the clips
    one_clip = {**right, "mid_then_high": "A"}  # the first clip's tone decides; the second's never moves the answer
    assert verdict(one_clip, {})["hears_both_clips"] is False
    assert "ignores it" in verdict({pid: "A" for pid in right}, {})["finding"]
    assert verdict({**right, "right": "A"}, {})["channels"] == 1


def test_an_honest_server_passes_at_the_cost_of_eight_requests(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 4)
    run, folder, received = served_run(tmp_path, archive, "rad")
    assert run.returncode == 0, run.stderr
    assert "canary" not in run.stderr
    canary = canary_of(folder)
    assert canary["verdict"] == "passed" and canary["hears_both_clips"] and canary["channels"] == 2
    assert len(received) == len(PROBES) == 8
    assert json.loads((folder / "metrics.json").read_text())["listener"] is None


@pytest.mark.parametrize("mangle, said", [
    (Mangle(keep_clips=1), "the model does not hear both clips"),
    (Mangle(keep_clips=1, infer=True), "the model does not hear both clips"),  # "the other one" does not pass
    (Mangle(keep_s=1.0), "the audio does not reach the model whole"),  # the probe's tone comes after the first second
    (Mangle(rate=8000), "the model does not hear both clips"),  # the 6.4 kHz tone is gone
], ids=["drops-second-clip", "drops-and-infers", "keeps-the-first-second", "telephone-band"])
def test_a_plain_run_against_a_server_that_loses_audio_exits_1_with_one_line(tmp_path, mangle, said):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 4)
    run, folder, _ = served_run(tmp_path, archive, "rad", mangle=mangle)
    assert run.returncode == 1, run.stderr
    [line] = [line for line in run.stderr.splitlines() if "canary" in line]
    assert line.startswith("error: Voxtral-Mini-3B: canary:") and said in line and "rad" in line
    assert canary_of(folder)["verdict"] == "failed"
    metrics = json.loads((folder / "metrics.json").read_text())
    assert metrics["listener"].startswith("canary: the model did not hear")  # marked: left out of the average


def test_the_leaderboard_and_the_report_mark_a_run_the_canary_invalidated(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 4)
    run, _, _ = served_run(tmp_path, archive, "rad", mangle=Mangle(keep_clips=1, infer=True))
    assert run.returncode == 1
    report = run_cli("--report", "results", "--out", "report.html", cwd=tmp_path, env=harness_env())
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "report.html").read_text()
    assert "Does the audio arrive?" in page and "failed 1" in page
    assert page.count("canary: the model did not hear both clips") >= 2  # the leaderboard's mark and the section
    board = subprocess.run([sys.executable, str(Path(__file__).parents[1] / "scripts" / "leaderboard.py"),
                            str(tmp_path / "results")], capture_output=True, text=True, env=harness_env())
    assert board.returncode == 0, board.stderr
    assert "† canary: the model did not hear both clips" in board.stdout


def test_stereo_mixed_to_mono_fails_a_channel_task_of_a_model_said_to_hear_stereo(tmp_path, open_pack):
    """GPT-Audio-Mini's channels are unknown to the registry: its server mixing to mono makes dir chance."""
    with openai_server.serve(model_ids=["gpt-audio-mini"], mangle=Mangle(mono=True)) as server:
        run = run_cli("--model", "GPT-Audio-Mini", "--task", "dir", "--max-samples", "4", "--archive", str(open_pack),
                      "--judge", "rules", cwd=tmp_path,
                      env=harness_env(OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=server.url + "/v1"))
    assert run.returncode == 1, run.stderr
    assert "hears stereo mixed to mono" in run.stderr and "dir" in run.stderr
    [folder] = run_dirs(tmp_path / "results")
    assert canary_of(folder)["channels"] == 1
    metrics = json.loads((folder / "metrics.json").read_text())
    assert metrics["listener"] == "mono listener: chance by construction"
    lines = [json.loads(line) for line in (folder / "responses.jsonl").read_text().splitlines()]
    assert all(any(note.startswith("stereo heard as mono") for note in r["notes"]) for r in lines)  # per record
    assert metrics["audio_received"]["stereo_as_mono"] == len(lines)


def test_a_gemini_server_that_drops_the_second_clip_is_caught(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 4)
    with gemini_server.serve(mangle=Mangle(keep_clips=1, infer=True)) as server:
        run = run_cli("--model", "Gemini-3-Flash", "--task", "rad", "--archive", str(archive), "--judge", "rules",
                      cwd=tmp_path, env=harness_env(GEMINI_API_KEY="test", GOOGLE_GEMINI_BASE_URL=server.url))
    assert run.returncode == 1, run.stderr
    assert "error: Gemini-3-Flash: canary:" in run.stderr and "does not hear both clips" in run.stderr


def test_a_stalling_server_costs_each_probe_one_attempt_and_no_verdict(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 4)
    probe_keys = {hashlib.sha256(Path(paths[0]).read_bytes()).hexdigest() for _, _, paths, _ in probes()}
    plan = FaultPlan(by_key={key: ["stall"] * 4 for key in probe_keys})  # only the probes stall; questions are answered
    run, folder, received = served_run(tmp_path, archive, "rad", plan=plan, slow_s=60)
    assert run.returncode == 0, run.stderr
    assert len(received) == 8  # one attempt each, not the run's four
    canary = canary_of(folder)
    assert canary["verdict"] == "inconclusive" and canary["no_answer"]["count"] == 8
    assert "canary" not in run.stderr  # none answered: config.json says so; the run's own requests show the server


def test_probes_refused_give_no_verdict_and_do_not_fail_the_run(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 4)
    run, folder, _ = served_run(tmp_path, archive, "rad", "--max-error-rate", "1", plan=FaultPlan(always="400"))
    assert run.returncode in (0, 1), run.stderr
    canary = canary_of(folder)
    assert canary["verdict"] == "inconclusive" and canary["no_answer"]["count"] == 8
    assert "400" in canary["no_answer"]["error"] and "error: Voxtral-Mini-3B: canary" not in run.stderr


def test_no_canary_asks_nothing_and_a_local_model_is_told_it_does_not_apply(tmp_path, tiny_pack):
    run, folder, received = served_run(tmp_path, tiny_pack, "rad", "--no-canary", "--max-samples", "2",
                                       mangle=Mangle(keep_clips=1))
    assert run.returncode == 0, run.stderr
    assert not received and canary_of(folder)["verdict"] == "skipped"
    local = run_cli("--model", "Oracle", "--task", "rad", "--archive", str(tiny_pack), "--max-samples", "2",
                    "--canary", "--results-dir", "local", cwd=tmp_path)
    assert local.returncode == 0, local.stderr
    assert "note: Oracle: the canary does not apply: Oracle is a local model" in local.stderr
    quiet = run_cli("--model", "Oracle", "--task", "rad", "--archive", str(tiny_pack), "--max-samples", "2",
                    "--results-dir", "quiet", cwd=tmp_path)
    assert "canary" not in quiet.stderr  # on by default: a local model's runs say nothing of it


LISTENERS = {"listener/hears": Listener("hears", knows=KNOWS),
             "listener/mono": Listener("mono", knows=KNOWS, channels=1)}


@pytest.mark.slow
def test_a_mono_listeners_dir_run_is_marked_from_the_probe(tmp_path, open_pack):
    out = {}
    with openai_server.serve(model_ids=list(LISTENERS), listeners=LISTENERS,
                             questions=pack_questions(open_pack, "dir")) as server:
        for api in LISTENERS:
            run = run_cli(*SERVED, "--api-model", api, "--task", "dir", "--max-samples", "10", "--archive",
                          str(open_pack), "--results-dir", api[9:], cwd=tmp_path,
                          env=harness_env(ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT=server.url))
            assert run.returncode == 0, run.stderr  # the registry says Voxtral hears mono: no surprise, no exit 1
            [folder] = run_dirs(tmp_path / api[9:])
            out[api] = json.loads((folder / "metrics.json").read_text())
    # the catalog lists Voxtral as mono; the probe, which heard left from right, is what decides
    assert out["listener/hears"]["listener"] is None
    assert out["listener/mono"]["listener"] == "mono listener: chance by construction"


def test_a_model_whose_clips_are_merged_is_told_in_one_line_that_the_canary_does_not_apply(tmp_path, tiny_pack):
    with openai_server.serve() as server:
        run = run_cli("--model", "MiniCPM-o-4.5", "--task", "rad", "--archive", str(tiny_pack), "--max-samples", "2",
                      "--judge", "rules", cwd=tmp_path, env=harness_env(ACOUSTICBENCH_MINICPM_O_4_5_ENDPOINT=server.url))
        probed = server.probes
    assert run.returncode == 0, run.stderr
    [line] = [line for line in run.stderr.splitlines() if "canary" in line]
    assert line.startswith("note: MiniCPM-o-4.5: the canary does not apply: MiniCPM-o-4.5 takes one audio input")
    [folder] = run_dirs(tmp_path / "results")
    assert canary_of(folder)["verdict"] == "skipped" and not probed


# each writer says it is ready, waits for the other five, then writes the probe clips into the empty cache at once
WRITER = """import sys, time
from pathlib import Path
from acousticbench.run.canary import probes
folder, gate, me = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
(gate / me).touch()
deadline = time.monotonic() + 60
while len(list(gate.iterdir())) < 6 and time.monotonic() < deadline:
    time.sleep(0.001)
probes(folder)
"""


def test_runs_that_write_the_probe_clips_at_once_each_get_whole_clips(tmp_path):
    for attempt in range(4):  # a race: several fresh caches, each written by six processes at the same moment
        folder, gate = tmp_path / f"cache-{attempt}", tmp_path / f"ready-{attempt}"
        gate.mkdir()
        writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(folder), str(gate), str(n)], env=harness_env(),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n in range(6)]
        ended = [writer.communicate(timeout=120) for writer in writers]
        assert [w.returncode for w in writers] == [0] * 6, [err[-2000:] for _, err in ended]
        assert not list(folder.glob("*.tmp"))  # nothing half-written is left beside the clips
