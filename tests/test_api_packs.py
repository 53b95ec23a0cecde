"""The pack commands, `models` and `tasks` are typed functions a script calls (acousticbench.verify_packs,
extract_pack, export_packs, import_packs, build_packs, models_table, task_lines): each prints nothing and returns
what `acousticbench pack ...`, `models` and `tasks` print."""
from __future__ import annotations

import pytest

import acousticbench
from harness_cli import python


def test_verify_returns_the_lines_and_status_the_command_prints(tiny_pack, capfd):
    checked = acousticbench.verify_packs(tiny_pack, "rad")
    assert capfd.readouterr() == ("", "")
    assert checked.ok and checked.status == 0 and checked.lines
    printed = python("-m", "acousticbench", "pack", "verify", "--archive", str(tiny_pack), "--task", "rad")
    assert (printed.returncode, printed.stdout) == (0, "\n".join(checked.lines) + "\n")
    clip = next(p for p in (tiny_pack / "rad").rglob("*.wav"))
    clip.write_bytes(clip.read_bytes()[:-10] + b"\x01" * 10)  # one file altered: the check fails, and says which
    failed = acousticbench.verify_packs(tiny_pack, "rad")
    assert capfd.readouterr() == ("", "")
    assert not failed.ok and failed.status == 1 and any(clip.name in line for line in failed.lines)
    printed = python("-m", "acousticbench", "pack", "verify", "--archive", str(tiny_pack), "--task", "rad")
    assert (printed.returncode, printed.stdout) == (1, "\n".join(failed.lines) + "\n")


def test_extract_returns_what_it_wrote_and_the_line_the_command_prints(tiny_pack, tmp_path, capfd):
    from acousticbench.packs.extract import write_zip

    write_zip(tiny_pack, tmp_path / "pack.zip")
    done = acousticbench.extract_pack(tmp_path / "pack.zip", tmp_path / "api")
    assert capfd.readouterr() == ("", "")
    assert done.files == sum(1 for p in tiny_pack.rglob("*") if p.is_file()) and (tmp_path / "api" / "rad").is_dir()
    printed = python("-m", "acousticbench", "pack", "extract", str(tmp_path / "pack.zip"), "--archive",
                     str(tmp_path / "cli"))
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == done.line().replace(str(tmp_path / "api"), str(tmp_path / "cli")) + "\n"
    assert acousticbench.verify_packs(tmp_path / "api", "rad").ok


def test_export_and_import_return_the_parts_the_commands_print(tiny_pack, tmp_path, capfd):
    pytest.importorskip("pyarrow")
    exported = acousticbench.export_packs(tiny_pack, tmp_path / "export", "rad")
    rebuilt = acousticbench.import_packs(tmp_path / "export", tmp_path / "rebuilt")
    assert capfd.readouterr() == ("", "")
    assert [part.pack for part in exported.parts] and rebuilt.packs and acousticbench.verify_packs(
        tmp_path / "rebuilt", "rad").ok
    printed = python("-m", "acousticbench", "pack", "export", str(tmp_path / "cli-export"), "--archive", str(tiny_pack),
                     "--task", "rad")
    assert printed.returncode == 0, printed.stderr
    shown = printed.stdout.splitlines()
    expected = [line.replace(str(tmp_path / "export"), str(tmp_path / "cli-export")) for line in exported.lines()]
    assert shown[:-1] == expected[:-1]  # each pack's configs and rows; the last line names the seconds it took
    assert shown[-1].split(" in ")[0] == expected[-1].split(" in ")[0]
    printed = python("-m", "acousticbench", "pack", "import", str(tmp_path / "export"), "--archive",
                     str(tmp_path / "cli-rebuilt"))
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == rebuilt.line().replace(str(tmp_path / "rebuilt"), str(tmp_path / "cli-rebuilt")) + "\n"


def test_models_and_tasks_return_what_the_commands_print(capfd):
    table, lines = acousticbench.models_table(), acousticbench.task_lines()
    assert capfd.readouterr() == ("", "")
    assert python("-m", "acousticbench", "models").stdout == table + "\n"
    assert python("-m", "acousticbench", "tasks").stdout == "\n".join(lines) + "\n"
    assert "Oracle" in table and any("rad" in line for line in lines)


@pytest.mark.slow
def test_build_returns_each_packs_line_the_command_prints(tmp_path, capfd):
    built = acousticbench.build_packs(tmp_path / "api", benchmarks=["AudioICL"])
    assert capfd.readouterr() == ("", "")
    assert len(built.lines) == 1 and built.lines[0].startswith("Built the open AudioICL pack: ")
    printed = python("-m", "acousticbench", "pack", "build", "--benchmark", "AudioICL", "--archive",
                     str(tmp_path / "cli"))
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == built.lines[0].replace(str(tmp_path / "api"), str(tmp_path / "cli")) + "\n"
