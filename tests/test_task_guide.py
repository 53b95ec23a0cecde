"""docs/extending.md's "Adding a task", followed on a copy of the package with a toy attribute
(tests/fixtures/toy_task/hum.py): each step edits the file the guide names, and the new task is listed, built,
verified, audited and answered by the Oracle end to end. If a step of the guide stops being enough, this test fails."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness_cli import REPO, harness_env

pytestmark = pytest.mark.slow  # builds and audits a 475-question task

PACKAGE = Path("acousticbench") / "benchmarks" / "acoustic"
HUM = Path(__file__).parent / "fixtures" / "toy_task" / "hum.py"


def edit(path: Path, anchor: str, addition: str) -> None:
    """Add `addition` right after the one place `anchor` stands in `path`, as a developer following the guide would."""
    text = path.read_text()
    assert text.count(anchor) == 1, f"{path}: the guide's anchor {anchor!r} is not there once"
    path.write_text(text.replace(anchor, anchor + addition))


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("harness")
    shutil.copytree(REPO / "acousticbench", src / "acousticbench", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "run.py", src / "run.py")
    shutil.copytree(REPO / "bench", src / "bench", ignore=shutil.ignore_patterns("__pycache__"))  # the audit's command
    pkg = src / PACKAGE
    shutil.copy(HUM, pkg / "stimuli" / "hum.py")  # step 1: the stimulus module
    edit(pkg / "stimuli" / "__init__.py", '"bri": brightness,', '\n    "hum": hum,')  # step 2
    edit(pkg / "stimuli" / "__init__.py", "from acousticbench.benchmarks.acoustic.stimuli import ",
         "hum, ")
    edit(pkg / "tasks.py", '"Which clip sounds brighter?", _FIRST, _SECOND),',  # step 3
         '\n        AcousticTask("hum", "hum", "Hum", 2, "Which clip has the higher hum?", _FIRST, _SECOND),')
    edit(pkg / "shortcuts" / "measures.py", "ATTRIBUTE_MEASURES: dict[str, dict[str, str]] = {",  # step 4
         '\n    "hum": {"zcr_hz": "a pure tone crosses zero twice a period", "rolloff_hz": "a pure tone\'s rolloff is '
         'its frequency", "centroid_hz": "a pure tone\'s centroid is its frequency"},')
    edit(pkg / "shortcuts" / "learned_measures.py", "ATTRIBUTE_FEATURES: dict[str, dict[str, str]] = {",  # step 4
         '\n    "hum": {"spec.*": "a pure tone\'s spectrum is its frequency", "band.*": "its one band is its frequency", '
         '"contrast.*": "its one peak is its frequency", "mfcc.*": "the cepstrum of one peak is its frequency", '
         '"harm.*": "a pure tone\'s period is its frequency", "env.*": "its period against the 5 ms frames sets how '
         'their power ripples"},')
    return src


def run(harness: Path, *args: str, cwd: Path, script: str | None = None) -> subprocess.CompletedProcess:
    command = [str(harness / (script or "run.py"))]
    out = subprocess.run([sys.executable, *command, *args], cwd=cwd, capture_output=True, text=True, timeout=600,
                         env=harness_env(PYTHONPATH=str(harness)))
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr
    return out


BUILD_ONE_TASK = """
import sys
from pathlib import Path
from acousticbench.benchmarks.acoustic import pack
from acousticbench.benchmarks.acoustic.pack import build
from acousticbench.benchmarks.acoustic.tasks import TASKS
root = Path(sys.argv[1])
built = build.build_tasks(root, ["hum"])
sha = {pack.questions_relpath("hum"): pack.write_questions(root, "hum", built["hum"])}
tasks = {"hum": {"title": TASKS["hum"].title, "clips": 2, "n_scored": build.N_SCORED, "n_diagnostic": build.N_DIAGNOSTIC}}
pack.write_manifest(root, "toy", "1", tasks=tasks, sha256=sha)
"""


def test_a_task_added_as_the_guide_says_runs_end_to_end(harness, tmp_path):
    assert "hum  Hum" in run(harness, "--list-tasks", cwd=tmp_path).stdout
    # step 5: the build (of the new task alone: the guide's --build-archive rebuilds all nine)
    subprocess.run([sys.executable, "-c", BUILD_ONE_TASK, "archive"], check=True, timeout=300, cwd=tmp_path,
                   env=harness_env(PYTHONPATH=str(harness)))
    assert "All 475 questions passed checksum verification." in run(harness, "--verify-checksums", "--task", "hum",
                                                                    cwd=tmp_path).stdout
    audit = run(harness, "--archive", "archive", "--task", "hum", cwd=tmp_path, script="bench/shortcut_audit.py")
    assert "hum" in audit.stdout
    oracle = run(harness, "--model", "Oracle", "--task", "hum", "--judge", "rules", cwd=tmp_path)
    assert "Oracle on hum (seed 42): accuracy 1.000" in oracle.stdout
