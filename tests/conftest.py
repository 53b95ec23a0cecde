"""Shared fixtures: the full open pack is built once per test session (it is deterministic)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def open_pack(tmp_path_factory) -> Path:
    """The full open AcousticBench pack (3,800 questions), built once; tests must not modify it."""
    prebuilt = os.environ.get("ACOUSTICBENCH_TEST_ARCHIVE")
    if prebuilt:
        return Path(prebuilt)
    from acousticbench.archive.build import build_open_pack

    root = tmp_path_factory.mktemp("open_pack") / "archive"
    build_open_pack(root)
    return root
