"""The AudioICL pack as Hugging Face dataset configs: a `clips` config holding every clip once, and one config per task
whose rows are episodes that name their clips by path, so no clip's bytes repeat across k and episodes."""
from __future__ import annotations

import json
import re
from pathlib import Path

from acousticbench.benchmarks.audioicl import TASKS
from acousticbench.benchmarks.audioicl.pack import (
    FOLDER, MANIFEST, OPEN_BENCHMARK, load_manifest, manifest_sha256, pack_root, verify_audioicl,
)
from acousticbench.core.errors import ArchiveError, UserError
from acousticbench.packs.hf_dataset import AUDIO, INT, PACK_FILES, STRING, STRING_LIST, Part, write_split

BENCHMARK = "AudioICL"
CLIPS = "clips"
CLIPS_SPLIT = "test"  # the hub needs a split name; the pack is a test set (no train/eval split in it)
META = re.compile(r"^meta/meta_k([1-9][0-9]*)\.jsonl$")  # meta_k{k}.jsonl: the config's split k{k}
CLIP_FEATURES = {"path": STRING, "audio": AUDIO}
# One row per episode and k, the way the pack holds them (meta_k{k}.jsonl is split k{k}): `clips`, `tags` and
# `labels` run in listening order, one entry per clip, as the prompt's '[tag] <audio n> Label: label' lines do;
# `episode` is the pack's line verbatim and `line` its place in meta_k{k}.jsonl, which rebuild the file byte for byte.
EPISODE_FEATURES = {"id": STRING, "task": STRING, "k": INT, "line": INT, "object": STRING, "instruction": STRING,
                    "prompt": STRING, "clips": STRING_LIST, "tags": STRING_LIST, "labels": STRING_LIST,
                    "answer": STRING, "episode": STRING}


def meta_files(manifest: dict) -> dict[int, str]:
    """k -> the pack-relative path of meta_k{k}.jsonl, for every one the manifest lists."""
    return dict(sorted((int(m.group(1)), rel) for rel in manifest.get("sha256", {}) if (m := META.match(rel))))


def split_name(k: int) -> str:
    return f"k{k}"


def episode_row(line: str, k: int, position: int, where: str) -> dict:
    """The columns of one meta line (an ArchiveError names `where` when it is not a valid episode)."""
    from acousticbench.benchmarks.audioicl.episodes import parse_episode
    from acousticbench.benchmarks.audioicl.prompts import build_prompt, episode_lines, instruction

    episode = parse_episode(line, Path(where), position + 1, k)
    shown = episode_lines(episode)  # without --morse-alphabet's letters, which are a run's choice, not the episode's
    # the default ('specific') prompt as the model reads it, clips as <audio n> in the order of `clips`
    prompt = build_prompt(episode, Path("."), style="specific", seed=0).text
    return {"id": episode.id, "task": episode.task, "k": k, "line": position, "object": episode.object,
            "instruction": instruction(episode, "specific"), "prompt": prompt, "clips": [s.audio for s in shown],
            "tags": [s.tag for s in shown], "labels": [s.label for s in shown], "answer": episode.gt, "episode": line}


def meta_lines(path: Path) -> list[str]:
    """A meta file as lines, refused unless joining them back yields its bytes (what the import relies on)."""
    data = path.read_bytes()
    lines = data.decode("utf-8").split("\n")[:-1]
    if rebuilt(lines) != data:
        raise ArchiveError(f"{path} is not one episode per line ending in a newline, so an export of it could not be "
                           "rebuilt byte for byte: rebuild the pack.")
    return lines


def rebuilt(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode("utf-8")


def export_pack(archive: Path, out: Path, tasks: list[str] | None) -> Part:
    """The AudioICL pack's tasks (None: all it has) as configs under `out`, plus `clips`, after checking every byte."""
    root = pack_root(archive)
    manifest = load_manifest(root)
    in_pack = [t for t in TASKS if t in manifest.get("tasks", {})]
    missing = [t for t in tasks or [] if t not in in_pack]
    if missing:
        raise UserError(f"--task {','.join(missing)}: not in the AudioICL pack at {root} (it has {', '.join(in_pack)}).")
    report = verify_audioicl(root)
    if not report.ok:
        raise UserError(f"the AudioICL pack at {root} fails `acousticbench pack verify` ({len(report.failures)} "
                        "files): an export must be checkable byte for byte; fix or rebuild the pack first.")
    tasks = tasks or in_pack
    rows: dict[str, dict[int, list[dict]]] = {t: {} for t in tasks}
    for k, rel in meta_files(manifest).items():
        for position, line in enumerate(meta_lines(root / rel)):
            row = episode_row(line, k, position, str(root / rel))
            if row["task"] in rows:
                rows[row["task"]].setdefault(k, []).append(row)
    part = Part(BENCHMARK, manifest["benchmark"], manifest["version"], _license(manifest),
                f"{PACK_FILES}/{FOLDER}/{MANIFEST}", manifest_sha256(root), "")
    for task in tasks:
        part.configs[task] = {split_name(k): write_split(out, task, split_name(k), episodes, EPISODE_FEATURES)
                              for k, episodes in rows[task].items()}
    used = {p for task in rows.values() for episodes in task.values() for row in episodes for p in row["clips"]}
    clips = sorted(rel for rel in manifest["sha256"] if rel.endswith(".wav") and (tasks == in_pack or rel in used))
    part.configs[CLIPS] = {CLIPS_SPLIT: write_split(out, CLIPS, CLIPS_SPLIT, _clip_rows(root, clips), CLIP_FEATURES)}
    # the files no row carries (the manifest, and anything else it lists that is neither a clip nor a meta file)
    kept = [MANIFEST, *(rel for rel in manifest["sha256"] if not rel.endswith(".wav") and not META.match(rel))]
    for rel in kept:
        target = out / PACK_FILES / FOLDER / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((root / rel).read_bytes())
    part.card = _card(part, manifest, complete=tasks == in_pack)
    return part


def _clip_rows(root: Path, clips: list[str]):
    for rel in clips:  # read as written, so the pack's clips are never all in memory at once
        yield {"path": rel, "audio": {"bytes": (root / rel).read_bytes(), "path": rel}}


def _license(manifest: dict) -> str:
    if manifest.get("license"):
        return manifest["license"]
    # the open pack is generated by this harness's own code (MIT); another pack declares none we could state
    return "mit" if manifest.get("benchmark") == OPEN_BENCHMARK else "unknown"


def _card(part: Part, manifest: dict, complete: bool) -> str:
    rows = "\n".join(f"| `{t}` | " + ", ".join(f"{s}: {f.rows}" for s, f in splits.items()) + " |"
                     for t, splits in part.configs.items())
    first = next(iter(part.configs))
    scope = ("every file of the pack" if complete else
             "the clips of the exported tasks only (a partial export: it does not rebuild the pack)")
    return f"""# {part.pack} {part.version} (AudioICL)

The AudioICL pack `{part.pack}` version {part.version}: k-shot in-context rule learning episodes
({manifest.get('counts', {}).get('episodes', '?')} episodes, each at k = 1..5 demos).

- MANIFEST.json sha256: `{part.manifest_sha256}` (the manifest lists the sha256 of every meta file and clip: this
  one value pins every byte; `{part.manifest}` is the manifest itself)
- License: {part.license}{'' if part.license != 'unknown' else ' (the pack declares none: set it before publishing)'}
- `clips` (split `{CLIPS_SPLIT}`): one row per clip, {scope}: `path` (relative to the pack's folder, as the
  episodes name it) and `audio` (datasets' `Audio` feature holding the WAV bytes). A clip recurs across k and
  episodes, so the episode configs name clips instead of holding them.
- One config per task, one split per k (`k1` .. `k5`: the pack's meta_k1..5.jsonl), one row per episode: `id`, `task`,
  `k`, `line` (its line in meta_k{{k}}.jsonl, from 0), `object` (AnomalyDetect's machine), `instruction` (the
  task's instruction, or the episode's own), `prompt` (the default prompt, each clip as `<audio n>`), `clips` (the
  clips' paths in listening order, joinable to `clips.path`), `tags` and `labels` (each clip's tag and the label
  shown after it, null for the clip asked about), `answer` (the gold answer), `episode` (the pack's line, verbatim).

| config | rows per split |
|---|---|
{rows}

```python
from datasets import load_dataset, Audio
clips = load_dataset("PATH", "clips", split="{CLIPS_SPLIT}").cast_column("audio", Audio(decode=False))
at = {{path: i for i, path in enumerate(clips["path"])}}
ep = load_dataset("PATH", "{first}", split="k3")[0]; wavs = [clips[at[p]]["audio"]["bytes"] for p in ep["clips"]]
```

Rebuild the pack, byte for byte: `python run.py --import-dataset PATH --archive ARCHIVE` (the pack lands in
`ARCHIVE/{FOLDER}`), then `python run.py --verify-checksums --task audioicl --archive ARCHIVE`.
"""
