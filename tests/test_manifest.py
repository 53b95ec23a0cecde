"""The serving manifest in config.json (server and engine versions, model revision, chat template hash, processor
sampling rate, generation settings applied, judge), and the paired view and --compare-reference naming every
difference between two runs' manifests beside any change in answers."""
from __future__ import annotations

import json

from conftest import write_tiny_pack
from harness_cli import harness_env, run_cli, run_dirs, script
from report_page import Page, browser  # noqa: F401 (a fixture)
from servers import openai_server

MODEL = "local/served-model"


def served_as(version: str, template: str, decoding: dict, revision: str) -> dict:
    """A server's options: vLLM's /version and /tokenize, and a /v1/models entry as a server that says more lists it."""
    listing = [{"id": MODEL, "object": "model", "created": 0, "owned_by": "local", "decoding": decoding,
                "revision": revision, "sampling_rate": 16000, "max_model_len": 4096}]
    return {"version": version, "chat_template": template, "listing": listing}


def run_against(root, archive, options: dict, *extra: str):
    with openai_server.serve(**options) as server:
        out = run_cli("--model", "Voxtral-Mini-3B", "--task", "rad", "--archive", str(archive), "--judge", "rules",
                      *extra, cwd=root, env=harness_env(ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT=server.url))
    assert out.returncode in (0, 1), out.stderr
    return out


def test_two_runs_served_differently_name_every_difference(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 6)
    first = served_as("0.11.0", "{{ system }}<|im_start|>", {"do_sample": False}, "abc123")
    second = served_as("0.12.1", "<|im_start|>{{ system }}", {"do_sample": True, "temperature": 0.7}, "abc123")
    run_against(tmp_path, archive, first)
    (one,) = run_dirs(tmp_path / "results")
    manifest = json.loads((one / "config.json").read_text())["manifest"]
    assert manifest["server_version"] == "0.11.0" and manifest["model_revision"] == "abc123"
    assert manifest["processor_sampling_rate"] == 16000 and len(manifest["chat_template_render_sha256"]) == 64
    assert manifest["generation"]["temperature"] == 0.0 and manifest["labelling"]["judge"]["mode"] == "rules"

    out = run_cli("--promote-reference", str(one), "--references", "refs", cwd=tmp_path, env=harness_env())
    assert out.returncode == 0, out.stderr
    out = run_against(tmp_path, archive, second, "--compare-reference", "--references", "refs")
    assert "served otherwise than the reference: server_version: 0.11.0 -> 0.12.1" in out.stdout
    assert "chat_template_render_sha256" in out.stdout and "server_decoding.temperature: (none) -> 0.7" in out.stdout
    two = next(f for f in run_dirs(tmp_path / "results") if f != one)
    assert any("server_version" in line
               for line in json.loads((two / "comparison.json").read_text())["serving_differences"])

    out = script("compare_runs.py", str(one), str(two), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    at = lines.index("Serving manifests differ in 4 fact(s), beside any change in answers:")
    assert sorted(line.split(":")[0].strip() for line in lines[at + 1:]) == [
        "chat_template_render_sha256", "server_decoding.do_sample", "server_decoding.temperature", "server_version"]
    out = script("compare_runs.py", str(one), str(one), cwd=tmp_path)
    assert "Serving manifests: the same" in out.stdout


def test_the_paired_views_name_how_two_rows_were_served_otherwise(tmp_path, browser):
    """leaderboard --paired and the report's model-against-model view."""
    archive = write_tiny_pack(tmp_path / "archive", "rad", 6)
    for model, variable, version in (("Voxtral-Mini-3B", "ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT", "0.11.0"),
                                     ("Qwen2-Audio-7B-Instruct", "ACOUSTICBENCH_QWEN2_AUDIO_7B_INSTRUCT_ENDPOINT",
                                      "0.12.1")):
        with openai_server.serve(**served_as(version, "{{ system }}", {"do_sample": False}, "abc123")) as server:
            out = run_cli("--model", model, "--task", "rad", "--archive", str(archive), "--judge", "rules",
                          cwd=tmp_path, env=harness_env(**{variable: server.url}))
        assert out.returncode in (0, 1), out.stderr
    out = script("leaderboard.py", "results", "--paired", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    served = out.stdout.split("How each two rows were served otherwise")[1]
    (line,) = [line for line in served.splitlines() if line.startswith("- ")]
    assert "vs" in line and "server_version: 0.11.0 -> 0.12.1" in line
    assert "chat_template_render_sha256" not in line  # the same template on both: only what differs is named

    out = run_cli("--report", "results", "--out", "report.html", cwd=tmp_path, env=harness_env())
    assert out.returncode == 0, out.stderr
    page = Page(browser, tmp_path / "report.html")
    version = {"Voxtral-Mini-3B": "0.11.0", "Qwen2-Audio-7B-Instruct": "0.12.1"}
    for _ in range(2):  # as first shown, then with A and B swapped: the facts read as A's value -> B's
        a, b = (page.page.eval_on_selector(f"#p-{side}", "s => s.options[s.selectedIndex].text") for side in "ab")
        served = page.page.inner_text("#p-served")
        assert served == f"Served otherwise (serving manifests): server_version: {version[a]} -> {version[b]}."
        page.page.select_option("#p-a", label=b)
        page.page.select_option("#p-b", label=a)
    assert not page.errors
