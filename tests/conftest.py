"""Shared fixtures: the full open pack is built once per test session (it is deterministic)."""
from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

import harness_cli
from harness_cli import REPO, is_provider_variable

# A suite started with Ctrl-C ignored (under nohup, or as `cmd &` from a script) would hand SIG_IGN to every run.py it
# starts, and the interrupt tests would meet a harness told by its parent not to be interrupted: restore it here.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

SHARED_DATA = REPO.parent / "shared" / "data"
HF_TOKEN = "hf_FAKEtoken0123456789abcdef"  # planted where docker_serve looks; must never be printed
PREBUILT_ARCHIVE = os.environ.get("ACOUSTICBENCH_TEST_ARCHIVE")  # read before no_provider_keys clears it


@pytest.fixture(scope="session", autouse=True)
def _harness_cache(tmp_path_factory) -> None:
    """One cache for the test run, shared by the xdist workers (harness_cli.CACHE); in this process's environment
    to its end too: the pack check writes what it verified when the process exits, after every test's own setting
    is undone."""
    harness_cli.CACHE["ACOUSTICBENCH_CACHE_DIR"] = str(shared_temp(tmp_path_factory) / "harness-cache")
    os.environ.update(harness_cli.CACHE)


@pytest.fixture(autouse=True)
def no_provider_keys(request, monkeypatch):
    """No provider key, endpoint or ACOUSTICBENCH_* setting from the developer's shell reaches a test (live tests
    excepted): a stray OPENAI_API_KEY must not turn `--judge auto` into a paid call. The harness's cache is the test
    run's own."""
    if request.node.get_closest_marker("live") is None:
        for name in [name for name in os.environ if is_provider_variable(name)]:
            monkeypatch.delenv(name)
    for name, value in harness_cli.CACHE.items():
        monkeypatch.setenv(name, value)


@pytest.fixture(scope="session")
def datasets():
    """Hugging Face's `datasets`, imported by the worker that runs a test of it (2.3 s), not by each at collection."""
    import datasets

    return datasets


def pytest_collection_modifyitems(items):
    """A test that needs the full open pack is slow: the pack's build alone is the longest step of the suite."""
    for item in items:
        if "open_pack" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)


def shared_temp(tmp_path_factory) -> Path:
    """A folder of this test run that every pytest-xdist worker sees (each worker's base temp is below it)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session", autouse=True)
def _share_the_audioicl_pack(tmp_path_factory) -> None:
    import audioicl_pack

    audioicl_pack.SHARED = shared_temp(tmp_path_factory)


@pytest.fixture(scope="session")
def open_pack(tmp_path_factory) -> Path:
    """The full open AcousticBench pack (3,800 questions), built once; tests must not modify it."""
    if PREBUILT_ARCHIVE:
        return Path(PREBUILT_ARCHIVE)
    import fcntl

    from acousticbench.benchmarks.acoustic.pack.build import build_open_pack

    # under pytest-xdist every worker asks for it: the first builds it where all can see it, the others wait for it
    shared = shared_temp(tmp_path_factory)
    root = shared / "open_pack" / "archive"
    root.parent.mkdir(exist_ok=True)
    with open(shared / "open_pack.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not root.exists():
            build_open_pack(root)
    return root


def write_tiny_pack(root: Path, task: str = "rad", n_scored: int = 8) -> Path:
    """A small valid pack of noise clips: n_scored scored questions plus a catch, an identical pair and a swap twin."""
    from acousticbench.benchmarks.acoustic.pack.synthetic import write_noise_pack

    return write_noise_pack(root, task, n_scored)


@pytest.fixture
def tiny_pack(tmp_path) -> Path:
    return write_tiny_pack(tmp_path / "archive")


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A HOME with a planted Hugging Face token."""
    (tmp_path / ".cache" / "huggingface").mkdir(parents=True)
    (tmp_path / ".cache" / "huggingface" / "token").write_text(HF_TOKEN + "\n")
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


@pytest.fixture(scope="session")
def vllm_server():
    """Real vLLM (from .venv-vllm) serving the tiny checkpoint, started once per test session by the harness's own
    LocalServer (its start-up is slow); the backend object, its server up at roots[0]."""
    import asyncio

    from acousticbench.run.catalog import get_model
    from acousticbench.core.environment import vllm_venv

    if not (vllm_venv() / "bin" / "python").is_file():
        pytest.skip(f"no real vLLM in {vllm_venv()}: scripts/setup_vllm.sh installs it")
    backend = get_model("Tiny-Qwen2-Audio-vLLM").create()
    backend.roots = [asyncio.run(backend._start())]  # what open() does first, without a session bound to this loop
    yield backend
    backend._stop_process()
