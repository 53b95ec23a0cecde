"""Each image's pins are written once (acousticbench/models/images.py): the Dockerfiles take every version as a build
argument and hold none of their own, and docker_serve.sh --dry-run prints the pins the table holds."""
from __future__ import annotations

import re
from dataclasses import replace

import pytest

from acousticbench.models.images import IMAGES
from acousticbench.models.open_weight import OPEN_WEIGHT
from conftest import REPO

VERSION_LITERAL = re.compile(r"(==|:v?)\d+\.\d+")  # e.g. torch==2.4.1 or image:2.9.1, outside an ARG reference


def stages(dockerfile: str) -> dict[str, list[str]]:
    """The lines of each named stage (FROM ... AS name), continuations joined; '' holds what comes before any."""
    text = (REPO / dockerfile).read_text().replace("\\\n", " ")
    found: dict[str, list[str]] = {"": []}
    current = ""
    for line in text.splitlines():
        match = re.match(r"FROM\s+\S+(?:\s+AS\s+(\S+))?", line.strip(), re.IGNORECASE)
        if match:
            current = match.group(1) or f"stage{len(found)}"
            found[current] = []
        found[current].append(line.split("#")[0] if line.lstrip().startswith("#") else line)
    return found


def args_of(lines: list[str]) -> set[str]:
    return {m.group(1) for line in lines for m in [re.match(r"\s*ARG\s+(\w+)", line)] if m}


def chain(dockerfile: str, target: str | None) -> list[str]:
    """The lines a target's build runs: the global ARGs, its base stages, then its own (all of a one-stage file)."""
    found = stages(dockerfile)
    if target is None:
        return [line for part in found.values() for line in part]
    lines = list(found.get("", []))
    name = target
    own: list[list[str]] = []
    while name:
        own.insert(0, found[name])
        base = re.match(r"FROM\s+(\S+)", found[name][0].strip()).group(1)
        name = base if base in found else None
    return lines + [line for part in own for line in part]


@pytest.mark.parametrize("key", list(IMAGES))
def test_each_dockerfile_target_takes_exactly_the_tables_pins(key):
    image = IMAGES[key]
    lines = chain(image.dockerfile, image.target)
    assert args_of(lines) == set(image.build_args), f"{image.dockerfile} ({image.target}) and models/images.py disagree"
    for line in lines:
        if line.strip().startswith("#"):
            continue
        assert not VERSION_LITERAL.search(re.sub(r"\$\{\w+\}", "", line)), f"a version written in the Dockerfile: {line}"


def test_every_model_is_served_from_an_image_in_the_table():
    assert {m.image for m in OPEN_WEIGHT} <= set(IMAGES.values())
    by_name = {m.name: m.image for m in OPEN_WEIGHT}
    assert by_name["MiniCPM-o-4.5"].build_args["TRANSFORMERS_VERSION"] == "4.51.0"  # OpenBMB's README
    assert by_name["MiniCPM-o-4.5"].build_args["TORCH_VERSION"] <= "2.8.0"
    assert by_name["Kimi-Audio-7B-Instruct"].build_args["TORCH_VERSION"] == "2.4.1"  # Moonshot's requirements.txt
    assert by_name["Kimi-Audio-7B-Instruct"].build_args["TRANSFORMERS_VERSION"].startswith("4.4")
    assert by_name["Kimi-Audio-7B-Instruct"].build_args["FLASH_ATTN_WHEEL"].endswith(".whl")  # no source build
    for image in IMAGES.values():
        if "BASE_IMAGE" in image.build_args:  # the torch of the base image is the pinned one
            assert f":{image.build_args['TORCH_VERSION']}-" in image.build_args["BASE_IMAGE"]


def test_dry_run_prints_the_pins_of_the_models_image(home, capsys):
    pytest.importorskip("docker")
    from acousticbench.serve import __main__ as cli

    for model in OPEN_WEIGHT:
        assert cli.main([model.serve_name, "--dry-run"]) == 0
        out = capsys.readouterr().out
        printed = dict(re.findall(r"^#   (\w+)=(\S+)", out, re.MULTILINE))
        assert printed == model.image.build_args, model.serve_name
        (tag,) = re.findall(r"^# image (\S+): built on first use", out, re.MULTILINE)
        assert re.fullmatch(rf"acousticbench/{model.image.name}:[0-9a-f]{{12}}", tag), tag


@pytest.fixture
def scratch_repo(tmp_path, monkeypatch):
    """specs.REPO pointed at an empty folder that the test fills, with the source-hash cache emptied before and after."""
    from acousticbench.serve import specs

    monkeypatch.setattr(specs, "REPO", tmp_path)
    specs._source_hash.cache_clear()
    yield tmp_path
    specs._source_hash.cache_clear()


@pytest.mark.parametrize("serve_name, copies_our_code", [("voxtral_mini_3b", False), ("minicpm_o_4_5", True)])
def test_an_image_tag_changes_with_its_dockerfile_and_pins_and_only_ours_with_our_code(scratch_repo, serve_name,
                                                                                      copies_our_code):
    from acousticbench.serve import specs

    spec = specs.SPECS[serve_name]
    dockerfile = scratch_repo / spec.image_recipe.dockerfile
    dockerfile.parent.mkdir(parents=True)
    dockerfile.write_text((REPO / spec.image_recipe.dockerfile).read_text())

    def tag_after(change) -> str:
        change()
        specs._source_hash.cache_clear()
        return spec.image

    first = tag_after(lambda: None)
    edited = tag_after(lambda: dockerfile.write_text(dockerfile.read_text() + "# edited\n"))
    assert edited != first  # an edited Dockerfile is a new image, built on the next start
    (scratch_repo / "acousticbench").mkdir()
    ours = tag_after(lambda: (scratch_repo / "acousticbench" / "new.py").write_text("x = 1\n"))
    assert (ours != edited) is copies_our_code
    recipe = spec.image_recipe
    repinned = replace(spec, recipe=replace(recipe, pins=(*recipe.pins[:-1], replace(recipe.pins[-1], value="9.9.9"))))
    assert repinned.image != ours and repinned.image.startswith(f"acousticbench/{recipe.name}:")


def test_data_parallel_is_vllms_and_counts_gpus(home, capsys):
    pytest.importorskip("docker")
    from acousticbench.serve import __main__ as cli

    assert cli.main(["qwen2_audio_7b_instruct", "--dry-run", "--dp", "8"]) == 0
    out = capsys.readouterr().out
    assert '"--data-parallel-size", "8"]' in out
    assert cli.main(["qwen2_audio_7b_instruct", "--dry-run", "--dp", "2", "--tp", "2", "--gpus", "0,1"]) == 2
    assert "needs 4 GPUs" in capsys.readouterr().err
    assert cli.main(["minicpm_o_4_5", "--dry-run", "--dp", "2"]) == 2
    assert "--dp applies to the vLLM models" in capsys.readouterr().err
