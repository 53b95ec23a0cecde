"""AcousticBench inside inspect_ai (the [inspect] extra): `inspect eval acousticbench/rad` finds our task through the
entry point, sends the clips as ContentAudio and scores with the harness's own judge, read back with inspect's log
reader."""
from __future__ import annotations

import importlib.metadata
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import write_tiny_pack
from harness_cli import harness_env
from tiktoken_offline import o200k_cache

pytestmark = pytest.mark.skipif(importlib.util.find_spec("inspect_ai") is None, reason="needs the [inspect] extra")


@pytest.fixture(scope="module")
def pack(tmp_path_factory) -> Path:
    return write_tiny_pack(tmp_path_factory.mktemp("inspect") / "archive")


def inspect_cli() -> str:
    found = shutil.which("inspect", path=str(Path(sys.executable).parent)) or shutil.which("inspect")
    assert found, "inspect_ai is installed but its `inspect` command is not on PATH"
    return found


def test_the_entry_point_is_registered():
    names = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="inspect_ai")}
    assert names.get("acousticbench") == "acousticbench.benchmarks.inspect_tasks", (
        "the installed acousticbench has no inspect_ai entry point: reinstall it (pip install -e '.[inspect]'); "
        f"found {names}")


@pytest.mark.slow  # inspect's own start-up is most of it
def test_inspect_eval_runs_our_task_with_mockllm(pack, tmp_path):
    cache = o200k_cache(tmp_path / "tiktoken")  # mockllm counts tokens with o200k_base, which tiktoken downloads
    if cache is None:
        pytest.skip("no offline o200k_base for mockllm (the dev extra's quicktok-v1 provides it)")
    logs = tmp_path / "logs"
    out = subprocess.run([inspect_cli(), "eval", "acousticbench/rad", "--model", "mockllm/model", "--limit", "5",
                          "-T", f"archive={pack}", "--log-dir", str(logs), "--display", "plain"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env=harness_env(TIKTOKEN_CACHE_DIR=str(cache), INSPECT_LOG_LEVEL="warning"))
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    from inspect_ai.log import list_eval_logs, read_eval_log

    (info,) = list_eval_logs(str(logs))
    log = read_eval_log(info.name)
    assert log.status == "success" and log.eval.task_registry_name == "acousticbench/rad"
    assert [s.id for s in log.samples] == ["rad_0001", "rad_0002", "rad_0003", "rad_0004", "rad_0005"]
    for sample in log.samples:
        assert [c.type for c in sample.input[0].content] == ["audio", "audio", "text"]  # both clips, then the question
        score = sample.scores["harness_label"]
        # mockllm's "Default output from mockllm/model" names no option: unparsed, never credited
        assert score.value == "N" and score.answer is None and score.metadata["status"] == "unparsed"
    assert log.results.scores[0].metrics["accuracy"].value == 0.0


@pytest.mark.slow  # a real in-process eval: inspect's imports are most of it
def test_our_scorer_credits_only_answers(pack, tmp_path):
    """Scripted replies through a real inspect eval: right, wrong, refused, hedged and cut replies."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from acousticbench.benchmarks.acoustic.inspect_tasks import acoustic_task

    def reply(text: str, stop: str = "stop") -> ModelOutput:
        output = ModelOutput.from_content("mockllm", text, stop_reason=stop)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer needed
        return output

    replies = [reply("A"), reply("Answer: A"), reply("I'm sorry, but I cannot listen to audio clips."),
               reply("It could be A or B."), reply("A", stop="max_tokens")]  # the targets are A, B, A, B, A
    model = get_model("mockllm/model", custom_outputs=replies)
    (log,) = inspect_eval(acoustic_task("rad", archive=str(pack)), model=model, limit=5, max_samples=1,
                          log_dir=str(tmp_path / "logs"), display="none")
    scores = {s.id: s.scores["harness_label"] for s in log.samples}
    assert [(scores[i].value, scores[i].metadata["status"]) for i in sorted(scores)] == [
        ("C", "answered"), ("I", "answered"), ("N", "refused"), ("N", "unparsed"), ("N", "truncated")]
    assert scores["rad_0002"].answer == "A" and scores["rad_0003"].answer is None
    assert log.results.scores[0].metrics["accuracy"].value == pytest.approx(0.2)


def test_a_missing_pack_is_one_message_naming_the_task_argument(tmp_path):
    from acousticbench.benchmarks.acoustic.inspect_tasks import acoustic_task

    with pytest.raises(Exception) as err:
        acoustic_task("rad", archive=str(tmp_path / "nowhere"))
    message = str(getattr(err.value, "message", err.value))
    assert "no benchmark pack" in message and "-T archive=DIR" in message


@pytest.mark.slow  # builds a reduced AudioICL pack and runs a real in-process eval
def test_audioicl_episodes_interleave_demos_and_are_scored_strictly(tmp_path):
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from acousticbench.benchmarks.audioicl.inspect_tasks import icl_task
    from audioicl_pack import reduced_pack

    task = icl_task("AudioCount", archive=str(reduced_pack(2)), shots=2)
    first = task.dataset[0]
    assert [c.type for c in first.input[0].content] == ["text", "audio", "text", "audio", "text", "audio", "text"]

    def reply(text: str) -> ModelOutput:
        output = ModelOutput.from_content("mockllm", text)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    model = get_model("mockllm/model", custom_outputs=[reply(first.target), reply("I cannot hear audio.")])
    (log,) = inspect_eval(task, model=model, limit=2, max_samples=1, log_dir=str(tmp_path), display="none")
    assert [(s.scores["harness_label"].value, s.scores["harness_label"].metadata["status"]) for s in log.samples] == [
        ("C", "answered"), ("N", "refused")]
