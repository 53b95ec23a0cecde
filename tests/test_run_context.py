"""`run` and `rerun` ask through one run context (acousticbench/run/context.py): the backend made, its prompts checked,
opened with the retry policy it declares and its endpoints watched alike, so a promise of the run path holds under
both. The Human backend's: a person is never timed out and never asked twice, even where ACOUSTICBENCH_REQUEST_TIMEOUT
would cut a server's request after a second."""
from __future__ import annotations

import json
import queue
import time

from harness_cli import REPO, harness_env, start_cli, start_python
from test_human import http, louder_of, page_address

SLOWER_THAN_THE_TIMEOUT_S = 2.5
ENV = {"ACOUSTICBENCH_HUMAN_GAP_S": "0", "ACOUSTICBENCH_REQUEST_TIMEOUT": "1"}


def listen(process, answers: int) -> list[str]:
    """A person at the page: setup, a passed calibration, then `answers` questions, each answered well after the
    request timeout. Returns the ids answered."""
    base = page_address(process, queue.Queue())
    post = lambda path, body: http(base + path, None, body)  # noqa: E731
    state = lambda: json.loads(http(base + "api/state")[1])  # noqa: E731
    post("api/setup", {"listener": "listener-3"})
    post("api/calibration", {"id": "calibration-1", "choice": louder_of(base, "calibration-1"), "clip_plays": [1, 1]})
    answered = []
    for _ in range(answers):
        deadline = time.monotonic() + 30
        while (shown := state())["stage"] != "question" and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(SLOWER_THAN_THE_TIMEOUT_S)  # the person listens for a while
        assert post("api/answer", {"id": shown["id"], "choice": "A", "plays": 1, "clip_plays": [1, 1]})[0] == 200
        answered.append(shown["id"])
    return answered


def finished(process) -> int:
    try:
        return process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()


def test_the_human_is_never_timed_out_nor_asked_twice_under_run_and_rerun(tiny_pack, tmp_path):
    run = start_cli("--model", "Human", "--task", "rad", "--max-samples", "2", "--seed", "42", "--archive",
                    str(tiny_pack), cwd=tmp_path, env=harness_env(**ENV))
    assert len(listen(run, 2)) == 2 and finished(run) == 0
    [run_dir] = (tmp_path / "results").glob("Human-rad-human-seed42-*")
    records = [json.loads(line) for line in (run_dir / "responses.jsonl").read_text().splitlines()]
    assert [(r["status"], r["attempts"]) for r in records] == [("answered", 1), ("answered", 1)]

    # the second answer's request failed (as a request whose connection broke leaves it): rerun asks it again
    failed = {**records[1], "status": "error", "error": "the listening page went away", "chosen": None,
              "correct": None}
    (run_dir / "responses.jsonl").write_text("\n".join(json.dumps(r) for r in (records[0], failed)) + "\n")
    rerun = start_python("-m", "acousticbench", "rerun", "--model", "Human", str(run_dir), cwd=tmp_path,
                         env=harness_env(**ENV), stdout=-1, stderr=-1, text=True)
    assert listen(rerun, 1) == [records[1]["id"]]
    assert finished(rerun) == 0
    again = [json.loads(line) for line in (run_dir / "responses.jsonl").read_text().splitlines()]
    assert again[0] == records[0]
    assert again[1]["status"] == "answered" and again[1]["chosen"] == "A"
    assert again[1]["attempts"] == 2  # the failed one and a single new one: never asked twice, never timed out
