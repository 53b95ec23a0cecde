"""The physical parameters a question's meta holds (stimuli/*.py write them: RT60, f0, level, azimuth, ...), named
and given their units for the report's answer detail."""
from __future__ import annotations

from typing import Any

# meta key -> (name, unit); the keys the stimulus modules write (meta "clips" per clip, "shared" per question)
NAMES: dict[str, tuple[str, str]] = {
    "f0_hz": ("f0", "Hz"), "base_f0_hz": ("base f0", "Hz"),
    "level_dbfs": ("level", "dBFS"), "base_level_dbfs": ("base level", "dBFS"),
    "sound_s": ("sound length", "s"), "base_sound_s": ("base sound length", "s"),
    "rt60_s": ("RT60", "s"), "base_rt60_s": ("base RT60", "s"), "drr_db_at_base": ("DRR at the base RT60", "dB"),
    "fade_in_s": ("fade-in", "s"), "span_s": ("span", "s"), "onset_s": ("onset", "s"),
    "azimuth_deg": ("azimuth (+ left)", "°"), "itd_us": ("ITD", "µs"), "ild_db": ("ILD", "dB"), "side": ("side", ""),
    "centroid_hz": ("spectral centroid", "Hz"), "base_centroid_hz": ("base spectral centroid", "Hz"),
    "tilt_db_per_octave": ("spectral tilt", "dB/octave"),
    "events": ("events", ""), "sounding_s": ("sounding time", "s"),
    "ioi_s": ("inter-onset interval", "s"), "base_ioi_s": ("base inter-onset interval", "s"), "bpm": ("tempo", "BPM"),
    "source": ("source", ""), "formant_hz": ("formant", "Hz"), "formant_width_oct": ("formant width", "octaves"),
    "event": ("event", ""), "event_hz": ("event frequency", "Hz"),
}
SUFFIXES = (("_hz", "Hz"), ("_dbfs", "dBFS"), ("_db", "dB"), ("_deg", "°"), ("_us", "µs"), ("_s", "s"))


def name_of(key: str) -> str:
    """'RT60 (s)'; a key no module wrote when this was made is named by its unit suffix, else shown as it is."""
    name, unit = NAMES.get(key) or next(((key[: -len(end)].replace("_", " "), unit) for end, unit in SUFFIXES
                                         if key.endswith(end)), (key.replace("_", " "), ""))
    return f"{name} ({unit})" if unit else name


def value_text(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return "—" if value is None else str(value).lower()
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def physical_params(meta: dict[str, Any]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The difference the question asks about (its step, in the task's unit), each clip's own parameters side by side,
    then what its clips share; empty for a pack whose meta holds none (the synthetic noise pack)."""
    rows: list[tuple[str, tuple[str, ...]]] = []
    if isinstance(meta.get("step"), (int, float)):
        rows.append((f"difference asked about ({meta.get('unit') or 'level units'})", (value_text(meta["step"]),)))
    clips = [c for c in meta.get("clips") or [] if isinstance(c, dict)]
    for key in dict.fromkeys(k for clip in clips for k in clip):
        rows.append((name_of(key), tuple(value_text(clip.get(key)) for clip in clips)))
    shared = meta.get("shared") or {}
    rows += [(name_of(key), (value_text(value),)) for key, value in shared.items() if value is not None]
    return tuple(rows)
