"""The attribute's own measures per task: the audit cues that read the attribute itself, each with one line of why."""
# These are not exempted silently: the audit prints each with its eval figure, as a confound that follows from the
# attribute, and leaves it out of the bound and out of the joint fit. Every other cue of shortcuts/features.py must
# stay near chance alone and together. A list must be closed under the differences the joint fit can form: when
# crest_db (peak minus overall level) is listed, so is every other pair with the overall level, or the fit would
# rebuild it from two pairs that are not.

from __future__ import annotations

from acousticbench.benchmarks.acoustic.shortcuts.features import LEVEL, PAIRS


def involving(feature: str, why: str) -> dict[str, str]:
    """`feature` and every level pair that has it on one side (crest_db and floor_to_peak_db among them)."""
    named = {"crest_db": {"peak_db", "rms_db"}, "floor_to_peak_db": {"peak_db", "floor_db"}}
    pairs = [p for p in PAIRS if feature in p.split("-")] + [n for n, parts in named.items() if feature in parts]
    return {p: why for p in (feature, *pairs)}


ONE_SOUND = "one sound at one level: how much of the file it fills is its duration"
ILD = "left minus right is the interaural level difference, the attribute"
ITD = "left minus right is the interaural time difference, the attribute"
ILD_TWICE = ("left minus right of two levels is the difference of two ILDs, each over its own part of the clip; the "
             "diotic background dilutes the whole clip's ILD most, so the difference takes the ILD's sign")
DIOTIC = "the background is the same in both ears: the level over it, left minus right, is the ILD"
PARTIALS = "the partials move with f0"
TAIL = ("with the span roved apart from RT60, the sounding frames after the dry sound are the tail's: how many, how loud "
        "and in how many fragments they hover at the threshold is the time it takes to fall 20 dB, a T20")

EDGES = ("the sounding frames at each event's two edges hold some of the silence between events, whose background "
         "crosses zero at its own rate: crossings per second of sound count the edges per second of sound, twice the "
         "events over the sounding time")

ATTRIBUTE_MEASURES: dict[str, dict[str, str]] = {
    "pit": {"zcr_hz": PARTIALS, "rolloff_hz": f"the rolloff lands on a partial, and {PARTIALS}"},
    "lou": {**{name: "level is the attribute" for name in LEVEL},
            "floor_db": "the whole clip, noise floor included, is louder"},
    "dur": {"span_s": "a longer sound sounds longer", "offset_s": "both start together: the longer one ends later",
            "silent_fraction": ONE_SOUND, **involving("rms_db", ONE_SOUND),
            "decay_db_per_s": "one steady sound: the fall from its loudest moment to its end is flatter the longer it lasts"},
    "tem": {"onset_count": "beats per span: with the span roved, the count over the span is the rate",
            "zcr_hz": f"{EDGES}: with the sounding time (the silent fraction) the count, and with the span the rate"},
    "rad": {"decay_db_per_s": "the decay slope is the reverberation time",
            **involving("sounding_rms_db", TAIL), **involving("event_mean_db", TAIL), **involving("event_max_db", TAIL),
            "onset_count": TAIL},
    "dir": {**{name: ILD for name in LEVEL}, **{p: ILD_TWICE for p in PAIRS}, **involving("floor_db", DIOTIC),
            "crest_db": ILD_TWICE, "floor_to_peak_db": ILD, "onset_s": ITD,
            "offset_s": ITD, "decay_db_per_s": f"{ITD}: the lagging ear's sound ends later within its last frame"},
    "cnt": {"onset_count": "the number of separate events is the attribute",
            "zcr_hz": f"{EDGES}, which the silent fraction gives: the number of events"},
    "bri": {"centroid_hz": "brightness is the spectral centroid", "rolloff_hz": "a brighter tilt moves the rolloff up",
            "zcr_hz": "a brighter tilt crosses zero more often"},
}
