"""Hostile posts to the Human model's listening page while a real run.py serves it on 127.0.0.1: a body that is not
JSON, not UTF-8, nested past any reader's depth, larger than the page takes, or of the wrong types, a length that is
no number, each gets a 4xx naming the reason; nothing reaches the run's terminal as a traceback, and the listener's
real answers afterwards are recorded as ever."""
from __future__ import annotations

import http.client
import json
import queue
import urllib.parse

import pytest

from harness_cli import harness_env, start_cli
from servers.fixtures import records
from test_human import http as page, louder_of, page_address

MAX_BODY = 64 * 1024
BODIES = {  # path, raw body, headers: what a broken or hostile client posts
    "not JSON": ("api/setup", b"{listener: me", {}),
    "not UTF-8": ("api/setup", b'{"listener": "\xe9l\xe8ve"}', {}),
    # 20,000 deep: within the page's 64 KiB, far past the depth Python's JSON reader can follow
    "nested past any depth": ("api/setup", b'{"listener": ' + b"[" * 20_000 + b"]" * 20_000 + b"}", {}),
    "nested clip plays": ("api/calibration", b'{"id": "calibration-1", "choice": "A", "clip_plays": '
                          + b"[" * 20_000 + b"]" * 20_000 + b"}", {}),
    "larger than the page takes": ("api/setup", b'{"listener": "' + b"x" * (MAX_BODY + 10) + b'"}', {}),
    "a length that is no number": ("api/setup", b'{"listener": "me"}', {"Content-Length": "lots"}),
    "a negative length": ("api/setup", b'{"listener": "me"}', {"Content-Length": "-5"}),
    "the listener an object": ("api/setup", b'{"listener": {"name": "me"}}', {}),
    "the device a list": ("api/setup", b'{"listener": "me", "device": ["a"]}', {}),
    "a list, not an object": ("api/setup", b'["listener", "me"]', {}),
    "NaN seconds": ("api/answer", b'{"id": "rad_0001", "choice": "A", "response_time_s": NaN}', {}),
    "choice an object": ("api/calibration", b'{"id": "calibration-1", "choice": {"A": 1}}', {}),
    "id a list": ("api/answer", b'{"id": ["rad_0001"], "choice": "A"}', {}),
}


def post_raw(base: str, path: str, body: bytes, headers: dict) -> tuple[int, bytes]:
    where = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=10)
    try:
        connection.putrequest("POST", "/" + path)
        sent = {"Content-Type": "application/json", "Content-Length": str(len(body)), **headers}
        for name, value in sent.items():
            connection.putheader(name, value)
        connection.endheaders()
        try:
            connection.send(body)
        except OSError:  # the page refused before reading it all
            pass
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@pytest.mark.parametrize("case", [c for c in BODIES if c != "NaN seconds"])
def test_a_hostile_post_gets_a_4xx_with_the_reason_and_no_traceback(case, tiny_pack, tmp_path):
    path, body, headers = BODIES[case]
    answered = listen(tiny_pack, tmp_path, lambda base, shown: post_raw(base, path, body, headers), before=True)
    assert len(answered) == 1


def test_a_nan_response_time_is_refused_and_the_real_answer_counts(tiny_pack, tmp_path):
    path, body, headers = BODIES["NaN seconds"]
    listen(tiny_pack, tmp_path, lambda base, shown: post_raw(base, path, body.replace(b"rad_0001", shown.encode()),
                                                             headers), before=False, needle=b"NaN is not JSON")


def listen(tiny_pack, tmp_path, hostile, before: bool, needle: bytes = b"") -> list[str]:
    """run.py serving the page for one question: `hostile(base, question id)` posted before the listener is set up
    (`before`) or while the question is on the page, then the listener's real answer; the run must end as ever."""
    args = ["--model", "Human", "--task", "rad", "--max-samples", "1", "--archive", str(tiny_pack)]
    process = start_cli(*args, cwd=tmp_path, env=harness_env(ACOUSTICBENCH_HUMAN_GAP_S="0"))
    lines: queue.Queue = queue.Queue()
    try:
        base = page_address(process, lines)
        if before:
            status, said = hostile(base, None)
            assert 400 <= status < 500 and json.loads(said)["error"], (status, said)
            assert json.loads(page(base + "api/state")[1])["stage"] == "setup"  # it set nothing
        assert page(base + "api/setup", None, {"listener": "listener-9"})[0] == 200
        page(base + "api/calibration", None, {"id": "calibration-1", "choice": louder_of(base, "calibration-1"),
                                              "clip_plays": [1, 1]})
        while (shown := json.loads(page(base + "api/state")[1]))["stage"] != "question":
            pass
        if not before:
            status, said = hostile(base, shown["id"])
            assert 400 <= status < 500 and needle in said, (status, said)
        assert page(base + "api/answer", None, {"id": shown["id"], "choice": "B", "clip_plays": [1, 1]})[0] == 200
        code = process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    stderr = ""
    while True:  # what the page_address reader thread took from stderr, up to its end
        try:
            stderr += lines.get(timeout=1)
        except queue.Empty:
            break
    assert code == 0 and "Traceback" not in stderr, stderr
    (run_dir,) = [d for d in (tmp_path / "results").iterdir() if d.is_dir()]
    rows = records(run_dir)
    assert [(r["id"], r["chosen"]) for r in rows] == [(shown["id"], "B")]
    return [r["id"] for r in rows]
