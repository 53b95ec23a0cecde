"""Live checks against the real provider APIs: two questions each; skipped unless the key is set (never in CI)."""
from __future__ import annotations

import os

import pytest

from servers.fixtures import evaluate_model, records

pytestmark = pytest.mark.live


def needs(*variables: str):
    return pytest.mark.skipif(not any(os.environ.get(v) for v in variables),
                              reason=f"live test: set {' or '.join(variables)}")


def assert_sane(result) -> None:
    got = records(result.run_dir)
    assert len(got) == 2
    assert all(r["status"] in ("answered", "unparsed", "refused") for r in got), [r["error"] for r in got]


@needs("OPENAI_API_KEY")
def test_gpt_audio_mini_live(tiny_pack, tmp_path):
    assert_sane(evaluate_model("GPT-Audio-Mini", tiny_pack, tmp_path / "results", max_samples=2))


@needs("GEMINI_API_KEY", "GOOGLE_API_KEY")
def test_gemini_flash_live(tiny_pack, tmp_path):
    assert_sane(evaluate_model("Gemini-3-Flash", tiny_pack, tmp_path / "results", max_samples=2))


@needs("OPENAI_API_KEY")
def test_cascade_transcribe_live(tiny_pack, tmp_path):
    assert_sane(evaluate_model("Cascade-Transcribe-GPT-4o-mini", tiny_pack, tmp_path / "results", max_samples=2))
