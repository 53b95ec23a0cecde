"""Audio controls (--control): the same questions, seeds and prompts with the audio replaced, written as runs of their
own linked to the real run and never pooled with it; against simulated listeners of known truth, a listener that
ignores its audio is called not listening, and one that hears listens, falls to chance under silence and follows a
swap."""
from __future__ import annotations

import csv
import io
import json

import pytest

from conftest import write_tiny_pack
from harness_cli import harness_env, run_cli, run_dirs, script
from servers import openai_server
from servers.fixtures import records
from servers.listener import Listener, pack_questions

HEARS = Listener("hears", knows=(1.0, 0.95, 0.9, 0.85, 0.8))
DEAF = Listener("deaf", deaf=True)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A hearing and a deaf listener, each run with its controls through run.py and the real server."""
    root = tmp_path_factory.mktemp("controls")
    archive = write_tiny_pack(root / "archive", "rad", 40)
    listeners = {"listener/hears": HEARS, "listener/deaf": DEAF}
    with openai_server.serve(model_ids=list(listeners), listeners=listeners, questions=pack_questions(archive, swapped=True)) as server:
        env = harness_env(ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT=server.url,
                          ACOUSTICBENCH_QWEN2_AUDIO_7B_INSTRUCT_ENDPOINT=server.url)
        for model, api, controls, code in (("Voxtral-Mini-3B", "listener/hears", "silence,noise,swap", 0),
                                           ("Qwen2-Audio-7B-Instruct", "listener/deaf", "silence,no-audio", 1)):
            out = run_cli("--model", model, "--api-model", api, "--task", "rad", "--seeds", "42,43", "--control",
                          controls, "--archive", str(archive), "--judge", "rules", cwd=root, env=env)
            assert out.returncode == code, out.stderr  # the deaf one: its runs go on, and the canary says it
            assert ("error: Qwen2-Audio-7B-Instruct: canary:" in out.stderr) == bool(code)
    return root


def folders(root) -> dict[tuple[str, str | None, int], object]:
    """(model, control, seed) -> the run folder."""
    out = {}
    for folder in run_dirs(root / "results"):
        spec = json.loads((folder / "config.json").read_text())["spec"]
        out[(spec["model"], spec.get("control"), spec["seed"])] = folder
    return out


def test_each_control_is_a_run_of_its_own_linked_to_its_real_run(served):
    runs = folders(served)
    assert len(runs) == 2 * (4 + 3)  # Voxtral: real + 3 controls; Qwen2: real + 2; each over 2 seeds
    for (model, control, seed), folder in runs.items():
        if control is None:
            continue
        config = json.loads((folder / "config.json").read_text())
        assert config["control"]["kind"] == control and f"control-{control}" in folder.name
        assert config["control"]["real_run"] == runs[(model, None, seed)].name
        real = {r["id"]: r for r in records(runs[(model, None, seed)])}
        for r in records(folder):  # the same questions and prompts, other audio, as the fingerprint shows
            assert r["prompt"] == real[r["id"]]["prompt"]
            sent, before = r["sent"], real[r["id"]]["sent"]
            if control == "no-audio":
                assert sent == []
            elif control == "swap":
                assert sent == before[::-1]
            else:
                assert [c["sha256"] for c in sent] != [c["sha256"] for c in before]
                assert [(c["frames"], c["sr"], c["channels"]) for c in sent] == \
                    [(c["frames"], c["sr"], c["channels"]) for c in before]


def test_the_deaf_listener_is_called_not_listening_and_the_hearing_one_listens(served):
    out = script("leaderboard.py", "results", cwd=served)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    board, table = text.split("## Does the model listen?")
    # a control is never a row of the accuracy table, nor averaged with the real runs: a line names it instead
    assert "| Voxtral-Mini-3B [control" not in board and "Left out of the accuracy tables: 10 control runs" in board
    assert "Voxtral-Mini-3B [control: silence] on rad (2 seeds)" in board
    rows = {(cells[0], cells[2]): cells for line in table.splitlines() if line.startswith("| ") and "---" not in line
            for cells in [[c.strip() for c in line.strip("|").split("|")]] if cells[0] != "Model"}
    assert set(rows) == {("Voxtral-Mini-3B", k) for k in ("silence", "noise", "swap")} | \
        {("Qwen2-Audio-7B-Instruct", k) for k in ("silence", "no-audio")}
    for control in ("silence", "no-audio"):
        deaf = rows[("Qwen2-Audio-7B-Instruct", control)]
        assert deaf[3] == deaf[4] and deaf[8].startswith("not listening")
    for control in ("silence", "noise"):
        hears = rows[("Voxtral-Mini-3B", control)]
        assert hears[8].startswith("listens") and float(hears[6]) < 0.01  # it listens: the control changed its answers
        assert float(hears[3]) > 85.0
    assert 30.0 <= float(rows[("Voxtral-Mini-3B", "silence")][4]) <= 70.0  # chance under silence
    swap = rows[("Voxtral-Mini-3B", "swap")]  # the swapped clips: it follows them, the share never an accuracy
    assert float(swap[4]) > 85.0 and float(swap[3]) < 15.0 and swap[8].startswith("follows the swap")


def test_the_report_shows_the_controls(served):
    out = run_cli("--report", "results", "--out", "report.html", cwd=served)
    assert out.returncode == 0, out.stderr
    page = (served / "report.html").read_text()
    assert "Does the model listen?" in page and "not listening" in page and "follows the swap" in page
    assert "Left out of the accuracy tables and the model-against-model view: 10 control runs" in page


def test_a_swap_controls_records_name_the_clips_as_sent_and_their_key(served):
    runs = folders(served)
    for seed in (42, 43):
        real = {r["id"]: r for r in records(runs[("Voxtral-Mini-3B", None, seed)])}
        for r in records(runs[("Voxtral-Mini-3B", "swap", seed)]):
            assert r["audio"] == real[r["id"]]["audio"][::-1]
            assert r["answer"] == {"A": "B", "B": "A", None: None}[real[r["id"]]["answer"]]


def test_a_control_runs_failures_are_asked_again_with_the_controls_audio(tmp_path):
    import soundfile as sf

    from servers.local import FaultPlan

    archive = write_tiny_pack(tmp_path / "archive", "rad", 4)
    with openai_server.serve(FaultPlan(always="400")) as server:  # every answer of the first session fails
        out = run_cli("--model", "Voxtral-Mini-3B", "--task", "rad", "--control", "silence", "--max-error-rate", "1",
                      "--archive", str(archive), "--judge", "rules", cwd=tmp_path,
                      env=harness_env(ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT=server.url))
    assert out.returncode in (0, 1), out.stderr
    (control,) = (f for f in run_dirs(tmp_path / "results") if "control-silence" in f.name)
    with openai_server.serve() as server:
        out = script("rerun_nones.py", "--model", "Voxtral-Mini-3B", str(control / "responses.jsonl"), cwd=tmp_path,
                     env=harness_env(ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT=server.url))
        assert out.returncode == 0, out.stderr
        sent = [clip for request in server.state.received for clip in openai_server.request_key(request.body)[1]]
    assert len(sent) == 2 * 7 and all(not sf.read(io.BytesIO(clip))[0].any() for clip in sent)  # silence only
    assert all(r["status"] == "answered" and r["sent"][0]["frames"] > 0 for r in records(control))


def test_no_audio_for_a_model_that_needs_its_clips_is_refused_before_anything_runs(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 4)
    out = run_cli("--model", "Random,Oracle", "--task", "rad", "--control", "silence,no-audio",
                  "--archive", str(archive), cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.strip().splitlines() == [
        "error: --control no-audio asks each question with no audio part, and Oracle cannot be asked without its "
        "clips: drop no-audio from --control, or run it without Oracle."]
    assert not (tmp_path / "results").exists()
    out = run_cli("--model", "Random", "--task", "rad", "--control", "no-audio", "--archive", str(archive),
                  cwd=tmp_path)  # a model that does not need its clips is asked without them
    assert out.returncode == 0, out.stderr
    (control,) = (f for f in run_dirs(tmp_path / "results") if "control-no-audio" in f.name)
    assert all(r["status"] == "answered" and r["sent"] == [] for r in records(control))


def test_swap_where_a_question_has_no_two_clips_to_exchange_is_refused_before_anything_runs(tmp_path):
    from audioicl_pack import reduced_pack

    out = run_cli("--model", "Random", "--task", "AudioCount", "--shots", "1", "--control", "swap", "--archive",
                  str(reduced_pack()), cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.strip().splitlines() == [
        "error: --control swap exchanges a question's two clips, or a stereo clip's channels, and AudioCount question "
        "AudioICL00001 has its clips among the text (demonstrations, then the query): drop swap for this task."]
    assert not (tmp_path / "results").exists()
