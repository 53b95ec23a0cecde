"""Each image's pins are written once (acousticbench/models/images.py): the Dockerfiles take every version as a build
argument and hold none of their own, and docker_serve.sh --dry-run prints the pins the table holds."""
from __future__ import annotations

import re
from dataclasses import replace

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

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


# each model's image and that image's pins, as models/images.py writes them: a changed pin must change this too
SERVED_FROM = {"Voxtral-Mini-3B": "vllm", "Qwen2-Audio-7B-Instruct": "vllm", "Qwen2.5-Omni-7B": "vllm",
               "Qwen3-Omni-30B-A3B-Instruct": "vllm", "Kimi-Audio-7B-Instruct": "transformers-kimi",
               "MiniCPM-o-4.5": "transformers-minicpm", "Tiny-Qwen2-Audio": "transformers",
               "Tiny-Qwen2-Audio-vLLM": "vllm-cpu"}
PINS = {
    "vllm": {"VLLM_IMAGE": "vllm/vllm-openai:v0.32.0-cu129", "VLLM_VERSION": "0.32.0", "MISTRAL_COMMON_VERSION": "1.13.1"},
    "vllm-cpu": {"BASE_IMAGE": "acousticbench/torch-cpu:2.13.0-bookworm", "TORCH_VERSION": "2.13.0",
                 "VLLM_VERSION": "0.32.0", "MISTRAL_COMMON_VERSION": "1.13.1"},
    "transformers": {"BASE_IMAGE": "acousticbench/torch-cpu:2.13.0-bookworm", "TORCH_VERSION": "2.13.0",
                     "TRANSFORMERS_VERSION": "5.24.0", "PEFT_VERSION": "0.21.2"},
    "transformers-minicpm": {"BASE_IMAGE": "pytorch/pytorch:2.8.0-cuda12.8-cudnn9-runtime", "TORCH_VERSION": "2.8.0",
                             "TRANSFORMERS_VERSION": "4.51.0", "ACCELERATE_VERSION": "1.12.0",
                             "MINICPMO_UTILS_VERSION": "1.0.5", "LIBROSA_VERSION": "0.11.0"},
    "transformers-kimi": {"BASE_IMAGE": "pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime", "TORCH_VERSION": "2.4.1",
                          "TRANSFORMERS_VERSION": "4.49.0",
                          "KIMI_AUDIO_COMMIT": "faedaac1a45aa5eacd0f466e02fb4ea1e4f56060",
                          "FLASH_ATTN_WHEEL": "https://github.com/Dao-AILab/flash-attention/releases/download/v2.6.3/"
                          "flash_attn-2.6.3+cu123torch2.4cxx11abiFALSE-cp311-cp311-linux_x86_64.whl",
                          "PEFT_VERSION": "0.15.2"},
}


def test_every_model_is_served_from_its_image_with_the_vendors_pins():
    assert {m.name: m.image.name for m in OPEN_WEIGHT} == SERVED_FROM
    assert {image.name: image.build_args for image in IMAGES.values()} == PINS
    minicpm, kimi = PINS["transformers-minicpm"], PINS["transformers-kimi"]
    assert minicpm["TRANSFORMERS_VERSION"] == "4.51.0"  # OpenBMB's README
    assert Version(minicpm["TORCH_VERSION"]) <= Version("2.8.0")  # OpenBMB's README: torch>=2.3.0,<=2.8.0
    assert kimi["TORCH_VERSION"] == "2.4.1"  # Moonshot's requirements.txt
    assert Version(kimi["TRANSFORMERS_VERSION"]) in SpecifierSet(">=4.40,<4.50")  # issue #26: the 4.4x line loads
    assert kimi["FLASH_ATTN_WHEEL"].endswith(".whl")  # no source build
    for image in IMAGES.values():
        if "BASE_IMAGE" in image.build_args:  # the torch of the base image is the pinned one
            assert f":{image.build_args['TORCH_VERSION']}-" in image.build_args["BASE_IMAGE"]


def test_the_cpu_images_hold_the_torch_transformers_and_vllm_the_tests_run_with():
    import importlib.metadata as metadata

    cpu = {k: v for k, v in IMAGES.items() if v.build_args.get("BASE_IMAGE", "").startswith("acousticbench/")}
    assert set(cpu) == {"server", "vllm-cpu"}  # the two tiny models' images, built on the local CPU base
    assert {v.build_args["TORCH_VERSION"] for v in cpu.values()} == {metadata.version("torch").split("+")[0]}
    assert cpu["server"].build_args["TRANSFORMERS_VERSION"] == metadata.version("transformers")
    pinned = re.search(r'"transformers==([^"]+)"', (REPO / "pyproject.toml").read_text()).group(1)
    assert pinned == cpu["server"].build_args["TRANSFORMERS_VERSION"]  # a fresh install gets the image's, not PyPI's newest
    setup = (REPO / "scripts" / "setup_vllm.sh").read_text()
    assert f"release={cpu['vllm-cpu'].build_args['VLLM_VERSION']} " in setup  # the release the vllm tests run


def test_versions_compare_as_versions_not_strings():
    assert "2.10.0" <= "2.8.0" and not Version("2.10.0") <= Version("2.8.0")  # why the checks above use Version


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
    """specs.REPO pointed at an empty folder the test fills; the source-hash cache emptied before and after."""
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
