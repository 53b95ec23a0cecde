"""`dir` and the models that hear one channel: its B clip is the channel mirror of A, so a mono listener is at chance by
construction; the run still runs, and metrics.json, the leaderboard and the report say so and leave it out of averages."""
from __future__ import annotations

from acousticbench.benchmarks import Entry
from acousticbench.benchmarks.acoustic.views.leaderboard import markdown, table_rows
from acousticbench.benchmarks.acoustic.metrics import MONO_LISTENER, compute_metrics, listener_note
from acousticbench.models.open_weight import OPEN_WEIGHT
from acousticbench.run.catalog import MODELS
from acousticbench.run.plan import listening
from acousticbench.benchmarks.acoustic.spec import acoustic_spec


def test_only_a_one_channel_listener_on_the_stereo_task_is_marked():
    assert listener_note("dir", 1) == MONO_LISTENER
    assert listener_note("dir", 2) is None and listener_note("dir", None) is None and listener_note("rad", 1) is None


def test_the_table_says_what_every_model_hears():
    assert all(m.channels == 1 for m in OPEN_WEIGHT)  # vLLM's load_audio(mono=True); our server's mean over channels
    assert MODELS["Oracle"].channels == 2 and MODELS["Gemini-3-Flash"].channels == 1
    assert MODELS["GPT-Audio-Mini"].hears == "unknown" and MODELS["Random"].channels is None


def test_a_served_mono_models_dir_run_is_marked_in_its_metrics():
    spec = acoustic_spec(model="Qwen2-Audio-7B-Instruct", task="dir", seed=42)
    assert listening(spec) == {"listener": MONO_LISTENER}
    assert listening(acoustic_spec(model="Oracle", task="dir", seed=42)) == {}
    assert listening(acoustic_spec(model="Qwen2-Audio-7B-Instruct", task="rad", seed=42)) == {}


def _entry(task: str, accuracy: float, listener: str | None = None) -> Entry:
    metrics = compute_metrics([], "Qwen2-Audio-7B-Instruct", task, 42).model_copy(update={"listener": listener})
    return Entry("AcousticBench", "Qwen2-Audio-7B-Instruct", task, "m" * 64, 42, None, 400, accuracy, 0.0, 0.0, metrics=metrics)


def test_the_leaderboard_marks_the_cell_and_leaves_it_out_of_the_average():
    entries = [_entry("rad", 0.8), _entry("dir", 0.5, MONO_LISTENER), _entry("cnt", 0.6)]
    _, (row,) = table_rows(entries, lambda model: 0)
    assert row["marked"] == {"dir": MONO_LISTENER} and abs(row["average"] - 0.7) < 1e-9
    text = markdown(entries, lambda model: 0)
    assert "50.0 ± 0.0 [45.1, 54.9] †" in text and f"† {MONO_LISTENER}: left out of Avg." in text
