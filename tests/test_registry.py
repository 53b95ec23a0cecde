"""The model registry: every model of the design is there with what it needs, and listing it stays fast."""
from __future__ import annotations


from acousticbench.run.catalog import MODELS, endpoint_variable
from harness_cli import REPO, python

OPEN_WEIGHT = {
    "Voxtral-Mini-3B": "voxtral_mini_3b", "Qwen2-Audio-7B-Instruct": "qwen2_audio_7b_instruct",
    "Qwen2.5-Omni-7B": "qwen2_5_omni_7b", "Qwen3-Omni-30B-A3B-Instruct": "qwen3_omni_30b_a3b_instruct",
    "Kimi-Audio-7B-Instruct": "kimi_audio_7b_instruct", "MiniCPM-o-4.5": "minicpm_o_4_5",
}
API = {"GPT-4o": ("openai", "gpt-4o-audio-preview"), "GPT-Audio-Mini": ("openai", "gpt-audio-mini"),
       "Gemini-3.1-Pro": ("gemini", "gemini-3.1-pro-preview"), "Gemini-3-Flash": ("gemini", "gemini-3-flash-preview")}


def test_every_design_model_is_registered_with_its_settings():
    for name, serve_name in OPEN_WEIGHT.items():
        entry = MODELS[name]
        assert entry.family == "open-weight" and entry.settings["serve_name"] == serve_name
        assert entry.settings["temperature"] == 0.0  # greedy for open-weight models
        assert endpoint_variable(serve_name) in entry.needs and f"docker_serve.sh {serve_name}" in entry.needs
        assert "GPU" in entry.needs
        limits = entry.settings["limits"]  # from the one table; MiniCPM-o merges, the rest refuse beyond their limit
        assert (limits.merge_over == 1) == (name == "MiniCPM-o-4.5")
        assert (limits.audio_items == 5) == (name == "Voxtral-Mini-3B")  # vLLM issue #22109
        transformers_server = name in ("Kimi-Audio-7B-Instruct", "MiniCPM-o-4.5")  # one request at a time
        assert entry.create(endpoint="http://127.0.0.1:1").default_concurrency == (4 if transformers_server else 32)
    for name, (module, api_model) in API.items():
        assert MODELS[name].backend.startswith(f"acousticbench.models.{module}")
        assert MODELS[name].settings["api_model"] == api_model
    cascades = [m for m in MODELS.values() if m.backend.endswith("cascade:Cascade")]
    assert {m.settings["stt"] for m in cascades} == {"local", "openai"}
    assert endpoint_variable("voxtral_mini_3b") == "ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT"


def test_list_models_imports_no_provider_sdk():
    code = ("import sys; from acousticbench.cli import main; main(['--list-models']); "
            "sys.exit(bool({'openai', 'google.genai', 'faster_whisper'} & set(sys.modules)))")
    out = python("-c", code, cwd=REPO)
    assert out.returncode == 0, out.stderr
    for name in MODELS:
        assert name in out.stdout
    assert "needs: ACOUSTICBENCH_MINICPM_O_4_5_ENDPOINT, printed by ./scripts/docker_serve.sh minicpm_o_4_5" in out.stdout
    assert "needs: GEMINI_API_KEY or GOOGLE_API_KEY" in out.stdout
