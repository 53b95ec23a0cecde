"""A reduced open AudioICL pack for the tests, built once per test run and shared by its xdist workers (the build is
deterministic)."""
from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

EPISODES = 20  # per task: enough for the Oracle's >= 0.95, small enough to build in a few seconds
SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "data" / "audioicl_meta_sample"
_BUILT: dict[int, Path] = {}
SHARED: Path | None = None  # set by conftest: the folder every xdist worker of this run sees (pytest's base temp)


def reduced_pack(episodes: int = EPISODES) -> Path:
    """The archive folder holding audioicl/ with the first `episodes` episodes of every task; do not modify it."""
    if episodes not in _BUILT:
        import fcntl

        from acousticbench.benchmarks.audioicl.build import build_audioicl

        if SHARED is None:  # imported outside pytest
            folder = Path(tempfile.mkdtemp(prefix="audioicl-test-pack-"))
            atexit.register(shutil.rmtree, folder, True)
        else:
            folder = SHARED / f"audioicl-pack-{episodes}"
            folder.mkdir(exist_ok=True)
        with open(folder / "lock", "w") as lock:  # the first worker builds, the others wait for it
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (folder / "archive").exists():
                build_audioicl(folder / "building", episodes_per_task=episodes, workers=2)
                (folder / "building").rename(folder / "archive")
        _BUILT[episodes] = folder / "archive"
    return _BUILT[episodes]


def env_without_espeak(folder: Path) -> dict[str, str]:
    """The environment with PATH holding only a link to this Python: no espeak-ng (nor any other program) to find."""
    import sys

    from harness_cli import harness_env

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "python").symlink_to(sys.executable)
    return harness_env(PATH=str(folder))
