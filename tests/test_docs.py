"""Every command of the README and of docs/*.md runs here as a reader runs it (the conventions: docs/README.md), against
a small pack made of the open packs' first items and local servers standing in for the providers and vLLM; a command
that cannot run on this machine is at least checked against its program's --help. A page that drifts fails here."""
from __future__ import annotations

import fcntl
import os
import shutil
import sys
from contextlib import ExitStack
from pathlib import Path

import pytest

import audioicl_pack
from conftest import shared_temp
from docs_pages import PAGES, LANGUAGES, ANNOTATION, FENCE, Shell, anchors, blocks, links, python_path, run_blocks
from docs_prose import list_mismatches, missing_paths, prose, repository_files, stated_lists
from docs_unrun import check_unrun
from harness_cli import REPO, harness_env
from servers import gemini_server, openai_server
from servers.judge_server import JudgeServer, verdict
from tiktoken_offline import o200k_cache

FIRST_SCORED, DIAGNOSTIC = 20, {401, 402, 426, 427, 451, 452}  # catch trials, identical pairs, swap twins
CHECKOUT = ("run.py", "scripts", "bench", "docs", "tests", "example.env")  # what a page's folder links from the repository


def page_id(page: Path) -> str:
    return page.relative_to(REPO).as_posix()


@pytest.fixture(scope="session")
def docs_pack(tmp_path_factory) -> Path:
    """The open packs' first items: 20 scored and 6 diagnostic questions of each AcousticBench task (the same bytes
    as the full pack's, so the reference runs match them) and the first 20 episodes of each AudioICL task."""
    shared = shared_temp(tmp_path_factory)
    root = shared / "docs-pack" / "archive"
    root.parent.mkdir(exist_ok=True)
    with open(shared / "docs-pack.lock", "w") as lock:  # the first xdist worker builds, the others wait for it
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not root.exists():
            _build_docs_pack(root.parent / "building")
            (root.parent / "building").rename(root)
    return root


def _build_docs_pack(root: Path) -> None:
    from acousticbench.benchmarks.acoustic.pack.build import build_tasks
    from acousticbench.benchmarks.acoustic.pack import questions_relpath, write_manifest, write_questions
    from acousticbench.benchmarks.acoustic.pack.pinned import OPEN_PACK_BENCHMARK, OPEN_PACK_VERSION
    from acousticbench.benchmarks.acoustic.tasks import TASKS

    built = build_tasks(root, list(TASKS), workers=1, numbers=set(range(1, FIRST_SCORED + 1)) | DIAGNOSTIC)
    sha256 = {questions_relpath(code): write_questions(root, code, questions) for code, questions in built.items()}
    tasks = {code: {"title": TASKS[code].title, "clips": TASKS[code].clips, "n_scored": FIRST_SCORED,
                    "n_diagnostic": len(DIAGNOSTIC)} for code in TASKS}
    write_manifest(root, OPEN_PACK_BENCHMARK, OPEN_PACK_VERSION, tasks=tasks, sha256=sha256)
    shutil.copytree(audioicl_pack.reduced_pack() / "audioicl", root / "audioicl", copy_function=os.link)


def judge_the_stated_letter(request: dict):
    """The stand-in LLM judge: the letter a reply states alone, else none (the tests of the judge are elsewhere)."""
    answer = request["messages"][-1]["content"].split("<answer>\n")[-1].split("\n</answer>")[0].strip()
    return verdict(answer if answer in ("A", "B") else "none")


def checkout(page: Path, docs_pack: Path, tmp_path: Path) -> Path:
    """A folder laid out like a checkout, with the docs pack as ./archive."""
    folder = tmp_path / "checkout"
    folder.mkdir()
    for name in CHECKOUT:
        (folder / name).symlink_to(REPO / name)
    references = folder / "reference_trajectories"
    if "--promote-reference" in page.read_text(encoding="utf-8"):  # promoting writes there: the page's own copy
        shutil.copytree(REPO / "reference_trajectories", references)
    else:
        references.symlink_to(REPO / "reference_trajectories")
    (folder / "archive").symlink_to(docs_pack, target_is_directory=True)
    return folder


@pytest.fixture
def reader(page, docs_pack, tmp_path):
    """The page's checkout, and a shell whose keys and endpoints reach local servers."""
    from acousticbench.core.environment import endpoint_variable
    from acousticbench.models.open_weight import OPEN_WEIGHT

    folder = checkout(page, docs_pack, tmp_path)
    with ExitStack() as stack:
        openai = stack.enter_context(openai_server.serve())
        gemini = stack.enter_context(gemini_server.serve())
        judge = stack.enter_context(JudgeServer(judge_the_stated_letter))
        env = harness_env(PATH=python_path(), HOME=str(tmp_path / "home"), OPENAI_API_KEY="sk-docs-local",
                          OPENAI_BASE_URL=f"{openai.url}/v1", GEMINI_API_KEY="docs-local",
                          GOOGLE_GEMINI_BASE_URL=gemini.url, ACOUSTICBENCH_JUDGE_ENDPOINT=judge.url,
                          **{endpoint_variable(m.serve_name): openai.url for m in OPEN_WEIGHT if not m.built_in})
        tiktoken = o200k_cache(tmp_path / "tiktoken")  # inspect's mockllm counts tokens with it; here, no download
        if tiktoken:
            env["TIKTOKEN_CACHE_DIR"] = str(tiktoken)
        yield Shell(folder, env)


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_command_of_the_page_runs_as_documented(page, reader):
    run_blocks([b for b in blocks(page) if b.mode == "run" and b.language != "text"], reader)


SLOW_PAGES = [page for page in PAGES if any(b.mode == "slow" for b in blocks(page))]


@pytest.mark.slow
@pytest.mark.parametrize("page", SLOW_PAGES, ids=page_id)
def test_the_slow_blocks_of_the_page_run_as_documented(page, reader):
    run_blocks([b for b in blocks(page) if b.mode == "slow"], reader)


UNRUN_PAGES = [page for page in PAGES if any(b.mode == "not run" for b in blocks(page))]


@pytest.mark.parametrize("page", UNRUN_PAGES, ids=page_id)
def test_what_cannot_run_here_names_programs_and_flags_that_exist(page, docs_pack, tmp_path):
    shell = Shell(checkout(page, docs_pack, tmp_path), harness_env(PATH=python_path(), HOME=str(tmp_path)))
    for block in blocks(page):
        if block.mode == "not run":
            for command in block.commands():
                check_unrun(command, shell)


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_the_page_follows_the_conventions(page):
    lines = page.read_text(encoding="utf-8").splitlines()
    for block in blocks(page):
        assert block.language in LANGUAGES, f"{block.where}: ```{block.language}: use ```bash, ```python or ```text"
        if block.mode != "run":
            assert block.language == "bash" or block.mode == "slow", \
                f"{block.where}: only ```bash blocks can be `not run` (a ```python block can be `slow`)"
    for i, line in enumerate(lines):  # an annotation stands right before a block, or it annotates nothing
        if ANNOTATION.match(line.strip()) or line.strip().startswith("<!-- doc-test"):
            following = next((text for text in lines[i + 1:] if text.strip()), "")
            assert ANNOTATION.match(line.strip()) and FENCE.match(following), \
                f"{page_id(page)}:{i + 1}: `{line.strip()}` must be `<!-- doc-test: slow|not run: why -->` before a block"


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_link_of_the_page_reaches_a_file_and_heading(page):
    for target, anchor in links(page):
        path = (page.parent / target).resolve() if target else page
        assert path.exists(), f"{page_id(page)}: the link to {target} reaches nothing"
        if anchor and path.suffix == ".md":
            assert anchor in anchors(path), f"{page_id(page)}: {target}#{anchor}: no such heading"


def test_the_readme_is_short_and_opens_with_the_two_set_up_commands():
    """Issue 33's front door: at most 250 lines, and the first block is quickstart.sh and test.sh."""
    readme = REPO / "README.md"
    assert len(readme.read_text(encoding="utf-8").splitlines()) <= 250
    first = blocks(readme)[0].commands()
    assert [c.line.split()[0] for c in first] == ["scripts/quickstart.sh", "scripts/test.sh"]
    assert all((REPO / c.line.split()[0]).stat().st_mode & 0o111 for c in first)


@pytest.fixture(scope="module")
def repository() -> set[str]:
    return repository_files()


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_path_the_page_names_exists(page, repository):
    """`acousticbench/run/sweep.py`, `docs/results.md`, `run/cells.py`: a file or folder the prose names is there."""
    missing = missing_paths(prose(page), repository)
    assert not missing, f"{page_id(page)} names {missing}, which the repository does not have"


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_field_list_the_page_marks_is_its_types_fields(page):
    mismatches = list_mismatches(page.read_text(encoding="utf-8"))
    assert not mismatches, f"{page_id(page)}: " + "; ".join(mismatches)


def settings_types() -> set[str]:
    """Every type a user fills in with settings: each settings model of core/settings.py whose fields are flags, and
    each registered benchmark's options."""
    from pydantic import BaseModel

    from acousticbench.benchmarks import faces
    from acousticbench.core import settings

    harness = {f"{settings.__name__}.{name}" for name, kind in vars(settings).items()
               if isinstance(kind, type) and issubclass(kind, BaseModel) and kind.__module__ == settings.__name__
               and any("per_run" in (f.json_schema_extra or {}) for f in kind.model_fields.values())}
    return harness | {f"{face.options.__module__}.{face.options.__qualname__}" for face in faces().values()}


def test_every_settings_type_has_its_fields_listed_on_the_running_page():
    listed = {kind for kind, beyond, _ in stated_lists((REPO / "docs" / "running.md").read_text(encoding="utf-8"))
              if beyond is None}
    assert "acousticbench.core.settings.RunSettings" in settings_types()  # the finder finds them
    assert settings_types() <= listed, f"docs/running.md lists no fields of {sorted(settings_types() - listed)}"


def test_the_prose_checks_find_a_path_that_is_gone_and_a_list_that_is_short(tmp_path):
    (tmp_path / "acousticbench" / "run").mkdir(parents=True)
    (tmp_path / "acousticbench" / "run" / "sweep.py").write_text("")
    files = {"acousticbench/run/sweep.py"}
    text = ("The run path is `acousticbench/run/sweep.py` (`run/sweep.py`, `sweep.py:run_sweep`); the API was "
            "`acousticbench/api.py` and `cli/commands.py`. Not paths: `results/Oracle-*`, `--flag`, `a b`, `.env`.")
    assert missing_paths(text, files, tmp_path) == ["acousticbench/api.py", "cli/commands.py"]
    marker = "<!-- fields: acousticbench.core.records.GenerationConfig -->"
    short = (f"{marker}`temperature` (`a b`)<!-- /fields --> and "
             f"{marker}`temperature, max_tokens, top_p`<!-- /fields -->")
    assert [m.split(":")[0] for m in list_mismatches(short)] == ["acousticbench.core.records.GenerationConfig"] * 2
    assert "lacks ['max_tokens']" in list_mismatches(short)[0] and "names ['top_p']" in list_mismatches(short)[1]
