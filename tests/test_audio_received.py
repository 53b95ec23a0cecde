"""Per record, what the server said it received of the audio: where it reports the audio tokens it consumed (OpenAI's
prompt_tokens_details.audio_tokens, Gemini's usage by modality), each record keeps them beside those the seconds sent
make at the model's rate; a server that cuts clips after a second or drops the second clip, and counts what it kept,
has those records marked as errors of their own cause, never scored, counted in metrics.json and the summary line."""
from __future__ import annotations

import json
import re

from acousticbench.benchmarks.acoustic.pack.synthetic import write_noise_pack
from acousticbench.models.audio_tokens import QWEN2_AUDIO, VOXTRAL, reported
from acousticbench.run.catalog import MODELS
from harness_cli import harness_env, run_cli, run_dirs
from servers import gemini_server, openai_server
from servers.ear import Mangle

GPT = ("--model", "GPT-Audio-Mini", "--task", "rad", "--judge", "rules")


def gpt_run(tmp_path, mangle: Mangle, *extra: str):
    archive = write_noise_pack(tmp_path / "archive", "rad", 4, clip_s=3.0)
    with openai_server.serve(model_ids=["gpt-audio-mini"], mangle=mangle) as server:
        run = run_cli(*GPT, "--archive", str(archive), *extra, cwd=tmp_path,
                      env=harness_env(OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=server.url + "/v1"))
    [folder] = run_dirs(tmp_path / "results")
    lines = [json.loads(line) for line in (folder / "responses.jsonl").read_text().splitlines()]
    return run, lines, json.loads((folder / "metrics.json").read_text())


def test_an_honest_servers_records_keep_the_tokens_it_counted_beside_those_expected(tmp_path):
    run, records, metrics = gpt_run(tmp_path, Mangle())
    assert run.returncode == 0, run.stderr
    assert {json.dumps(r["audio_tokens"]) for r in records} == {json.dumps(
        {"expected": 60, "reported": 60, "counted": "audio"})}  # two 3 s clips at 10 tokens a second
    assert metrics["audio_received"] == {"checked": len(records), "not_received": 0}
    assert "audio not received" not in run.stdout


def test_clips_cut_after_a_second_are_caught_per_record_and_counted(tmp_path):
    run, records, metrics = gpt_run(tmp_path, Mangle(keep_s=1.0), "--no-canary", "--max-error-rate", "1")
    assert run.returncode == 0, run.stderr
    assert all(r["status"] == "error" and r["error"].startswith("audio not received: the server counted 20 audio "
                                                                  "tokens where the 6 s sent make 60") for r in records)
    assert all(r["response"] and r["correct"] in (False, None) and r["chosen"] is None for r in records)
    assert metrics["audio_received"] == {"checked": len(records), "not_received": len(records)}
    assert metrics["error_causes"] == {"audio": len(records)} and metrics["scored"]["correct"] == 0
    assert f"; {len(records)} of all {len(records)} errors audio not received" in run.stdout


def test_a_plain_run_against_a_cutting_server_exits_1(tmp_path):
    run, records, metrics = gpt_run(tmp_path, Mangle(keep_s=1.0))
    assert run.returncode == 1
    assert metrics["audio_received"]["not_received"] == len(records) > 0


def test_a_gemini_server_that_drops_the_second_clip_is_caught_per_record(tmp_path):
    archive = write_noise_pack(tmp_path / "archive", "rad", 4, clip_s=3.0)
    with gemini_server.serve(mangle=Mangle(keep_clips=1)) as server:
        run = run_cli("--model", "Gemini-3-Flash", "--task", "rad", "--archive", str(archive), "--judge", "rules",
                      "--no-canary", "--max-error-rate", "1", cwd=tmp_path,
                      env=harness_env(GEMINI_API_KEY="test", GOOGLE_GEMINI_BASE_URL=server.url))
    assert run.returncode == 0, run.stderr
    [folder] = run_dirs(tmp_path / "results")
    records = [json.loads(line) for line in (folder / "responses.jsonl").read_text().splitlines()]
    assert {(r["audio_tokens"]["expected"], r["audio_tokens"]["reported"]) for r in records} == {(192, 96)}
    assert all(r["status"] == "error" and r["error"].startswith("audio not received") for r in records)


def test_qwen2_audio_counts_as_its_processor_does():
    """25 tokens a second after pooling (vLLM qwen2_audio.py): 1 s is 25, 30 s is 750, 0.5 s is 12."""
    assert [QWEN2_AUDIO.of_clip(s) for s in (1.0, 30.0, 0.5, 0.0)] == [25, 750, 12, 0]


def test_a_prompt_total_is_kept_beside_the_expected_count_and_never_judged(tmp_path):
    """vLLM reports only the prompt's total: even a server that cut every clip has its records scored (the canary is
    what catches it), and metrics.json counts them apart from the records checked."""
    archive = write_noise_pack(tmp_path / "archive", "rad", 4, clip_s=3.0)
    with openai_server.serve(mangle=Mangle(keep_s=1.0)) as server:
        run = run_cli("--model", "Voxtral-Mini-3B", "--task", "rad", "--judge", "rules", "--archive", str(archive),
                      "--no-canary", cwd=tmp_path, env=harness_env(ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT=server.url))
    assert run.returncode == 0, run.stderr
    [folder] = run_dirs(tmp_path / "results")
    records = [json.loads(line) for line in (folder / "responses.jsonl").read_text().splitlines()]
    assert all(r["audio_tokens"]["expected"] == 750 and r["audio_tokens"]["counted"] == "prompt"  # 2 windows of 30 s
               and r["status"] != "error" for r in records)
    metrics = json.loads((folder / "metrics.json").read_text())
    assert metrics["audio_received"] == {"checked": 0, "not_received": 0, "prompt_total_only": len(records)}


def test_voxtral_counts_every_started_30_s_window_whole():
    """Its processor pads each clip to a whole number of 30 s windows of 375 tokens: a cut clip still fills one."""
    assert [VOXTRAL.of_clip(s) for s in (0.5, 30.0, 30.5, 90.0)] == [375, 375, 750, 1125]


def test_a_prompt_total_of_zero_is_no_count_and_judges_nothing():
    """Our transformers server says 0 prompt tokens where its model's code gives no count (Kimi-Audio, MiniCPM-o)."""
    assert reported({"prompt_tokens": 0, "completion_tokens": 3}, QWEN2_AUDIO) is None
    assert reported({"prompt_tokens": 180}, QWEN2_AUDIO) == 180


def test_every_model_asked_over_the_network_names_its_audio_token_rate_and_source_or_says_unknown():
    """`acousticbench models`: for each API and served model, the rate with the vendor's code or page it comes from,
    or 'unknown' and why (then no record is judged by its count); none is left unsaid."""
    listed = run_cli("--list-models")
    assert listed.returncode == 0, listed.stderr
    blocks = {block.split()[0]: block for block in re.split(r"\n(?=\S)", listed.stdout)}
    asked = [m.name for m in MODELS.values() if m.family != "local" or "serve_name" in m.settings]
    assert {"Voxtral-Mini-3B", "Kimi-Audio-7B-Instruct", "MiniCPM-o-4.5", "Cascade-Transcribe-GPT-4o-mini"} \
        <= set(asked)
    for name in asked:
        [line] = re.findall(r"audio tokens: (.*)", blocks[name])
        assert re.search(r"source: .*\w/\w", line) or line.startswith("unknown: "), (name, line)
    assert "375 per started 30 s" in blocks["Voxtral-Mini-3B"]
    assert "its server reports no count: not checked" in blocks["Kimi-Audio-7B-Instruct"]


def test_rejudge_leaves_a_record_whose_audio_did_not_arrive_an_error_and_keeps_the_counts(tmp_path):
    from harness_cli import script
    from servers.judge_server import JudgeServer, verdict

    run, records, _ = gpt_run(tmp_path, Mangle(keep_s=1.0), "--no-canary", "--max-error-rate", "1")
    [folder] = run_dirs(tmp_path / "results")
    with JudgeServer(default=lambda request: verdict("A")) as judge:
        out = script("rejudge.py", str(folder), "--judge-endpoint", judge.url, cwd=tmp_path,
                     env=harness_env(ACOUSTICBENCH_CACHE_DIR=str(tmp_path / "cache")))
        assert judge.requests == []  # no reply of a model that did not get its audio is read as an answer
    assert out.returncode == 0, out.stderr
    after = [json.loads(line) for line in (folder / "responses.jsonl").read_text().splitlines()]
    assert all(r["status"] == "error" for r in after)
    metrics = json.loads((folder / "metrics.json").read_text())
    assert metrics["audio_received"] == {"checked": len(after), "not_received": len(after)}
