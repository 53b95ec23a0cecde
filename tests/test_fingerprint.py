"""Each record carries a fingerprint of the clips the harness sent (rate, channels, frames, duration, sha256): it
matches, clip for clip, what the server received."""
from __future__ import annotations

import hashlib
import io

import soundfile as sf

from harness_cli import harness_env, run_cli, run_dirs
from servers import openai_server
from servers.fixtures import records


def test_the_records_fingerprint_is_what_the_server_received(tmp_path, open_pack):
    with openai_server.serve() as server:
        env = harness_env(ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT=server.url)
        out = run_cli("--model", "Voxtral-Mini-3B", "--task", "dir", "--archive", str(open_pack), "--judge", "rules",
                      "--max-samples", "6",
                      cwd=tmp_path, env=env)
        assert out.returncode == 0, out.stderr
        received = {}
        for request in server.state.received:
            clips = openai_server.request_key(request.body)[1]
            received[request.key] = clips
    [run] = run_dirs(tmp_path / "results")
    lines = records(run)
    assert lines and all(r["sent"] for r in lines)
    for r in lines:
        clips = received[r["sent"][0]["sha256"]]
        assert [c["sha256"] for c in r["sent"]] == [hashlib.sha256(c).hexdigest() for c in clips]
        for fingerprint, clip in zip(r["sent"], clips):
            info = sf.info(io.BytesIO(clip))
            assert (fingerprint["sr"], fingerprint["channels"], fingerprint["frames"]) == \
                (info.samplerate, info.channels, info.frames)
            assert fingerprint["channels"] == 2  # `dir` is stereo: a downmix would show here
            assert abs(fingerprint["duration_s"] - info.frames / info.samplerate) < 1e-3
