"""run.py holds Python's cyclic collector through its start-up: every command lets it go again, and a program that
calls acousticbench itself keeps the collector as it set it."""
from __future__ import annotations

import gc

import pytest

from acousticbench.run import collector
from acousticbench.cli import main


@pytest.fixture
def held():
    collector.hold()
    try:
        yield
    finally:  # the worker goes on with the collector as it was
        collector.release()
        gc.unfreeze()
        gc.enable()


def test_a_command_other_than_a_run_collects_again_with_its_start_up_frozen(held, capsys):
    assert not gc.isenabled()
    assert main(["--list-tasks"]) == 0
    assert gc.isenabled() and gc.get_freeze_count() > 0
    assert "rad" in capsys.readouterr().out


def test_a_run_collects_again_and_ends_with_nothing_frozen(held, tiny_pack, tmp_path):
    assert main(["--model", "Random", "--task", "rad", "--archive", str(tiny_pack), "--results-dir",
                 str(tmp_path / "results")]) == 0
    assert gc.isenabled() and gc.get_freeze_count() == 0  # the run's freeze is undone at its end, as without run.py


def test_a_program_that_turned_the_collector_off_keeps_it_off(tiny_pack, tmp_path):
    gc.disable()
    try:
        assert main(["--model", "Random", "--task", "rad", "--archive", str(tiny_pack), "--results-dir",
                     str(tmp_path / "results")]) == 0
        assert not gc.isenabled() and gc.get_freeze_count() == 0
    finally:
        gc.enable()
