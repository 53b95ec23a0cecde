"""The Human model end to end: run.py serves the listening page, a real headless Chromium (Debian's, via playwright)
answers the calibration and 20 questions by clicking, reloading the page halfway; the run folder is like any run's
and the report draws the human row. One run, one browser session."""
from __future__ import annotations

import asyncio
import hashlib
import io
import json
import queue
import re
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from conftest import write_tiny_pack
from harness_cli import harness_env, run_cli, start_cli

CHROMIUM = Path("/usr/bin/chromium")
LISTENER, DEVICE = "listener-7", "closed headphones"


def http(url: str, headers: dict[str, str] | None = None, body: dict | None = None) -> tuple[int, bytes]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data, headers={**({"Content-Type": "application/json"} if body else {}),
                                                         **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def louder_of(base: str, trial: str) -> str:
    """What a listener with working ears answers on a calibration trial: the clip with more energy."""
    import numpy as np
    import soundfile as sf

    rms = [float(np.sqrt(np.mean(sf.read(io.BytesIO(http(f"{base}clip/{trial}/{n}")[1]))[0] ** 2))) for n in (0, 1)]
    return "A" if rms[0] > rms[1] else "B"


def page_address(process, lines: queue.Queue) -> str:
    threading.Thread(target=lambda: [lines.put(line) for line in process.stderr], daemon=True).start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            found = re.search(r"http://127\.0\.0\.1:\d+/", lines.get(timeout=1))
        except queue.Empty:
            continue
        if found:
            return found.group(0)
    raise AssertionError("run.py printed no page address")


def answer(page, ordinal: int, choice: str) -> str:
    """Play the clips in order, then click `choice`; returns the question id the page showed."""
    page.wait_for_selector(f"#trial.on #where:text-matches('^Question {ordinal} of 20 ')")
    shown = page.get_attribute("#trial", "data-id")
    page.click("#play")
    page.wait_for_selector(f"#answer-{choice}:enabled")
    page.click(f"#answer-{choice}")
    return shown


@pytest.mark.slow
def test_a_person_answers_twenty_questions_by_clicking_and_a_reload_loses_nothing(tmp_path):
    playwright = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.skip("chromium is not installed (apt-get install chromium; scripts/setup_env.sh does it)")
    archive = write_tiny_pack(tmp_path / "archive", "rad", 24)
    process = start_cli("--model", "Human", "--task", "rad", "--max-samples", "20", "--seed", "42", "--archive",
                        str(archive), cwd=tmp_path, env=harness_env(ACOUSTICBENCH_HUMAN_GAP_S="0.05"))
    lines: queue.Queue = queue.Queue()
    try:
        base = page_address(process, lines)
        host = base.removeprefix("http://").rstrip("/")
        assert http(base + "api/state", {"Origin": "http://evil.example"})[0] == 403
        assert http(base + "api/state", {"Host": "attacker.example"})[0] == 403  # DNS rebinding
        assert http(base + "api/state", {"Origin": f"http://{host}"})[0] == 200
        clicked: dict[str, str] = {}
        with playwright.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--autoplay-policy=no-user-gesture-required"])
            page = browser.new_page()
            page.set_default_timeout(15_000)
            requests: list[str] = []
            page.on("request", lambda r: requests.append(r.url))
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(base)
            page.fill("#listener", LISTENER)
            page.fill("#device", DEVICE)
            page.click("#start")
            page.wait_for_selector("#trial.on #where:text('Calibration')")
            page.click("#play")
            page.wait_for_selector("#answer-A:enabled")
            page.click(f"#answer-{louder_of(base, 'calibration-1')}")
            for ordinal in range(1, 21):
                if ordinal == 11:  # halfway: the page forgets everything; the run still asks the 11th question
                    page.reload()
                choice = "AB"[ordinal % 2]
                clicked[answer(page, ordinal, choice)] = choice
            page.wait_for_selector("#gone.on, #done.on, #waiting.on")
            browser.close()
        assert process.wait(timeout=60) == 0
        assert not errors, errors
    finally:
        if process.poll() is None:
            process.kill()
    assert all(url.startswith(base) for url in requests), [u for u in requests if not u.startswith(base)]
    assert any("/clip/rad_" in url for url in requests)
    order = list(clicked)
    assert sorted(order) == [f"rad_{i:04d}" for i in range(1, 21)] and order != sorted(order)  # the seed's order

    [run_dir] = (tmp_path / "results").glob("Human-rad-human-seed42-*")
    records = [json.loads(line) for line in (run_dir / "responses.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == sorted(clicked)
    for record in records:
        assert record["chosen"] == clicked[record["id"]] and record["status"] == "answered"
        assert record["judge"] == {"method": "direct", "model": None}
        assert record["human"]["plays"] == 1 and record["human"]["response_time_s"] >= 0
    assert LISTENER not in (run_dir / "responses.jsonl").read_text()
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["scored"]["n"] == 20 and metrics["judge_methods"] == {"direct": 20}
    assert metrics["scored"]["correct"] == sum(r["correct"] for r in records)
    backend = json.loads((run_dir / "config.json").read_text())["backend"]
    assert backend["listener"] == LISTENER and backend["output_device"] == DEVICE
    assert backend["calibration"]["passed"] and len(backend["calibration"]["attempts"]) == 1

    out = run_cli("--report", "results", "--out", "report.html", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    html = (tmp_path / "report.html").read_text()
    assert re.search(r"<td>Human \[first 20\] <small class=\"human\"", html)
    assert '<div class="model-row human"><h3>Human [first 20]' in html


def test_the_page_answers_only_its_own_address_and_serves_only_the_trial_on_it(tiny_pack):
    """In process, no browser: the page's server on a free port, a question asked as the engine asks it."""
    from acousticbench.benchmarks.acoustic.judge import Judge
    from acousticbench.models.human.listening import Listening
    from acousticbench.models.human.page import PageServer
    from acousticbench.core.records import Prompt

    clips = [str(tiny_pack / "rad" / "audio" / f"rad_0001_{k}.wav") for k in (1, 2)]
    prompt = Prompt(benchmark="AcousticBench", question_id="rad_0001", task="rad", text="Which?", audio=clips, seed=42)

    async def scenario():
        listening = Listening(asyncio.get_running_loop(), 42, 1.0)
        server = PageServer(listening, 0)
        call = lambda path, headers=None, body=None: asyncio.to_thread(http, server.url + path, headers, body)  # noqa: E731
        try:
            status, html = await call("")
            assert status == 200 and not re.search(rb"https?:|src=|<link|@import", html)  # nothing to fetch elsewhere
            foreign = [await call("api/setup", {"Origin": "http://evil.example"}, {"listener": "x"}),
                       await call("api/state", {"Host": "evil.example"}),
                       await call("api/state", {"Sec-Fetch-Site": "cross-site"})]
            assert [status for status, _ in foreign] == [403, 403, 403] and listening.listener is None
            assert (await call("api/setup", None, {"listener": " "}))[0] == 400  # an id is required
            assert (await call("api/setup", None, {"listener": "L1", "device": "speakers"}))[0] == 200
            louder = listening._tone_pair()[1]
            assert (await call("api/calibration", None, {"id": "calibration-1", "choice": louder, "plays": 1,
                                                         "clip_plays": [1, 1]}))[0] == 200
            assert listening.ready.done() and listening.calibration()["passed"]
            asked = asyncio.ensure_future(listening.ask(prompt))
            await asyncio.sleep(0)
            assert (await call("clip/rad_0002/0"))[0] == 404  # only the clips of the question on the page
            status, wav = await call("clip/rad_0001/1")
            assert status == 200 and wav == open(clips[1], "rb").read()
            assert (await call("api/answer", None, {"id": "rad_0002", "choice": "A"}))[0] == 409  # a stale page
            assert (await call("api/answer", None, {"id": "rad_0001", "choice": "B", "plays": 2,
                                                    "clip_plays": [3, 2], "response_time_s": 0.8}))[0] == 200
            reply = await asyncio.wait_for(asked, 5)
            judged = await Judge("rules").judge(prompt.text, reply)
            return reply, judged
        finally:
            server.stop()

    reply, judged = asyncio.run(scenario())
    assert (judged.chosen, judged.method) == ("B", "direct")
    assert reply.human["plays"] == 2 and reply.human["clip_plays"] == [3, 2] and reply.human["response_time_s"] == 0.8


def test_an_episode_is_shown_as_its_turn_and_the_typed_label_is_the_reply():
    """AudioICL's shape (interleaved parts): the page gets the turn with a play button per clip, the demo labels as
    buttons and an answer box; the typed label is the reply's text, scored by the benchmark's own scorer."""
    from acousticbench.models.human.listening import Listening, Refused
    from acousticbench.core.records import Prompt, PromptPart

    parts = [PromptPart(kind="text", text="Count.\n\n[Demo Audio 1] "), PromptPart(kind="audio", audio="/a/1.wav"),
             PromptPart(kind="text", text=" Label: 3\n[Query Audio] "), PromptPart(kind="audio", audio="/a/2.wav"),
             PromptPart(kind="text", text=" Label:")]
    prompt = Prompt(benchmark="AudioICL", question_id="AudioICL00001", task="AudioCount", seed=42, parts=parts,
                    text="Count.\n[Demo Audio 1] <audio 1> Label: 3\n[Query Audio] <audio 2> Label:",
                    audio=["/a/1.wav", "/a/2.wav"])

    async def scenario():
        listening = Listening(asyncio.get_running_loop(), 42, 1.0)
        listening.setup({"listener": "L2"})
        for attempt in range(1, 4):  # three wrong tries end the calibration, marked not passed
            listening.calibrate({"id": f"calibration-{attempt}", "choice": "B" if listening._tone_pair()[1] == "A" else "A"})
        asked = asyncio.ensure_future(listening.ask(prompt))
        await asyncio.sleep(0)
        view = listening.state()
        with pytest.raises(Refused):
            listening.answer({"id": "AudioICL00001", "choice": "A"})  # an episode wants its label typed
        listening.answer({"id": "AudioICL00001", "text": " 5 ", "plays": 1, "clip_plays": [2, 1]})
        return view, await asyncio.wait_for(asked, 5), listening.calibration()

    view, reply, calibration = asyncio.run(scenario())
    assert view["kind"] == "text" and view["labels"] == ["3"]
    assert [p.get("clip") for p in view["parts"] if "clip" in p] == [0, 1] and view["parts"][0]["text"].startswith("Count.")
    assert reply.text == "5" and reply.choice is None and reply.human["clip_plays"] == [2, 1]
    assert calibration["passed"] is False and len(calibration["attempts"]) == 3


def drive(args: list[str], cwd: Path, answers: int, interrupt: bool, listener: str) -> tuple[list[str], int]:
    """run.py with the Human model answered over HTTP as the page does (no browser): the listener's id, a passed
    calibration, `answers` questions; then Ctrl-C (`interrupt`) or the run's end. Returns the ids asked, in order."""
    process = start_cli(*args, cwd=cwd, env=harness_env(ACOUSTICBENCH_HUMAN_GAP_S="0"))
    try:
        base = page_address(process, queue.Queue())
        post = lambda path, body: http(base + path, None, body)  # noqa: E731
        state = lambda: json.loads(http(base + "api/state")[1])  # noqa: E731
        post("api/setup", {"listener": listener})
        post("api/calibration", {"id": "calibration-1", "choice": louder_of(base, "calibration-1"), "clip_plays": [1, 1]})
        asked = []
        for _ in range(answers):
            deadline = time.monotonic() + 30
            while (shown := state())["stage"] != "question" and time.monotonic() < deadline:
                time.sleep(0.02)
            asked.append(shown["id"])
            assert post("api/answer", {"id": shown["id"], "choice": "A", "plays": 1, "clip_plays": [1, 1]})[0] == 200
        if interrupt:
            while state()["stage"] != "question":  # the last answer is on disk once the next question is asked
                time.sleep(0.02)
            process.send_signal(2)
        return asked, process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()


@pytest.mark.slow
def test_resume_continues_a_stopped_listening_session_in_the_same_order(tiny_pack, tmp_path):
    args = ["--model", "Human", "--task", "rad", "--max-samples", "6", "--seed", "42", "--archive", str(tiny_pack)]
    first, code = drive(args, tmp_path, 3, True, "first-sitting")
    assert code == 130
    rest, code = drive([*args, "--resume"], tmp_path, 3, False, "second-sitting")
    ids = [f"rad_{i:04d}" for i in range(1, 7)]
    assert code == 0 and first + rest == sorted(ids, key=lambda i: hashlib.sha256(f"42:{i}".encode()).digest())
    [run_dir] = (tmp_path / "results").glob("Human-rad-human-seed42-*")
    assert len((run_dir / "responses.jsonl").read_text().splitlines()) == 6
    config = json.loads((run_dir / "config.json").read_text())
    assert config["backend"]["listener"] == "second-sitting"
    assert [b["listener"] for b in config["earlier_backends"]] == ["first-sitting"]
