"""AudioICL's demonstration order, permuted per seed (declared and deterministic), with the spread over orders, and
format compliance apart from correctness, in metrics.json and the report; checked with a listener of ours that
answers with the label of the last demo it was shown, bare or in a sentence."""
from __future__ import annotations

import hashlib
import json
import re

from acousticbench.benchmarks.audioicl.episodes import load_episodes
from audioicl_pack import reduced_pack
from harness_cli import harness_env, run_cli, run_dirs
from servers import openai_server
from servers.fixtures import records


def recency_listener(body: dict) -> str:
    """The last demo's label: bare when the turn's text hashes even, else inside a sentence."""
    text = "".join(part.get("text") or "" for message in body["messages"] if isinstance(message["content"], list)
                   for part in message["content"] if part.get("type") == "text")
    label = re.findall(r"Label: (\S+)", text)[-1]
    return label if hashlib.sha256(text.encode()).digest()[0] % 2 == 0 else f"I think the answer is {label}."


def test_demo_order_and_format_compliance(tmp_path):
    archive = reduced_pack()
    with openai_server.serve(answer_with=recency_listener) as server:
        out = run_cli("--model", "Voxtral-Mini-3B", "--task", "AudioCount", "--shots", "3", "--max-samples", "10",
                      "--seeds", "42,43,44", "--demo-order", "permuted", "--archive", str(archive), cwd=tmp_path,
                      env=harness_env(ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT=server.url))
    assert out.returncode == 0, out.stderr
    episodes = {e.id: e for e in load_episodes(archive / "audioicl" / "meta", 3, ["AudioCount"])}
    predictions: dict[str, set] = {}
    for folder in run_dirs(tmp_path / "results"):
        metrics = json.loads((folder / "metrics.json").read_text())
        lines = records(folder)
        assert metrics["demo_order"] == "permuted" and metrics["format_compliance_n"] == len(lines) == 10
        bare = sum(r["response"] == r["prediction"] for r in lines)
        assert metrics["format_compliance"] == bare / 10 and 0 < bare < 10  # apart from correctness
        for r in lines:  # the demos shown in the order the record declares, the last one's label answered
            order = r["demo_order"]
            assert sorted(order) == [0, 1, 2]
            shown = [episodes[r["id"]].demos[i].label for i in order]
            assert re.findall(r"Label: (\S+)", r["prompt"]) == shown and r["prediction"] == shown[-1]
            predictions.setdefault(r["id"], set()).add(r["prediction"])
    assert any(len(p) > 1 for p in predictions.values())  # the order changed some answers

    out = run_cli("--report", "results", "--out", "report.html", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "report.html").read_text()
    assert "AudioICL: demonstration order and reply format" in page
    changed = sum(len(p) > 1 for p in predictions.values())
    assert f"<td>{changed}/10</td>" in page and "<td>3 permuted</td>" in page
