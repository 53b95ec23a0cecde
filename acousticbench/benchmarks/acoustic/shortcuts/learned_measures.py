"""The learned audit's declarations per task: the generic features that ARE its attribute, and those that are the
attribute only together with another feature, each pattern with one line of why."""
# A pattern matches a generic feature ("event.count", "mfcc.*") or one column of it ("d:*" is every clip-1-minus-clip-2
# or left-minus-right column). ATTRIBUTE_FEATURES are left out of everything and printed. ALONE_ONLY are the rivals a
# listener could use instead of the attribute (rate for a count, the count for a tempo): each is held to the bound
# alone, as the stimuli must rove them apart from the key, but left out of the forest, which would multiply any two of
# count, rate and span back into the third (with the count left out, rate and span alone gave cnt 0.965). A task
# without an entry has every feature held to the bound.

from __future__ import annotations

SPAN_COUNT = "with the span, which the learner sees, it gives back the count"
PER_EVENT = ("of the event segmentation; any two of count, rate, span, lengths and intervals give the third, so only "
             "alone")

BURST_SHARE = ("a share of the burst's length (the ramps' share is roved per clip): the sounding time over a burst's "
               "length is the count, so only alone")

ONE_SOUND = "one sound at one level: the whole file's level against the sound's is how much of the file it fills"
LONGER_SAMPLE = "a longer sound averages more frames: its long-term spectrum scatters less, so it is smoother"

PARTIALS = "the spacing of the partials under the fixed envelope is the f0"
RIPPLE = ("a steady harmonic tone changes from frame to frame only by how its period (3-7 ms) falls on the frames: "
          "the f0")
RAMPS = "one sound with ramps of fixed length: the longer it lasts, the less of its frames are ramps"

SMOOTHER = ("a room smooths the envelope by its reverberation time (its modulation transfer function, how the STI of "
            "IEC 60268-16 measures a room): the longer the decay, the shallower the fluctuation")
SMEAR = ("each frame holds the tails of the frames before it: the spectrum changes the less from frame to frame, the "
         "longer the room rings")
SCHROEDER = ("a room's frequency response peaks on average every 4/T60 Hz (Schroeder's statistics of room response): "
             "the longer the decay, the more peaks share each analysis band and the flatter the long-term spectrum")

ATTRIBUTE_FEATURES: dict[str, dict[str, str]] = {
    "pit": {"harm.*": "the periodicity is the f0, and zero crossings follow it",
            "spec.entropy": "partials under the fixed envelope: the lower the f0, the more of them, the flatter it is",
            "spec.flatness": PARTIALS, "spec.peak_hz": "the strongest partial is a multiple of the f0",
            "spec.rolloff*": "a rolloff lands on a partial", "contrast.*": PARTIALS,
            "band.*": "the partials cross the octaves' edges as the f0 moves", "mfcc.*": f"{PARTIALS}; the mel bands "
            "below the fundamental are empty, and how many is the f0",
            "spec.flux_*": RIPPLE, "spec.centroid_std_hz": RIPPLE, "env.*": RIPPLE},
    "lou": {"level.*": "level is the attribute", "floor.db": "the whole clip, its noise floor included, is louder",
            "mfcc.mean_0": "the first cepstral coefficient is the log energy, the level"},
    "dur": {"timing.span_s": "a longer sound sounds longer", "timing.offset_s": "both start together: the longer ends later",
            "event.sounding_s": "one sound: its sounding time is its duration",
            "event.length_*": "one sound: its one event's length is its duration",
            "event.rate_hz": "one sound: events per second is one over its duration",
            "level.rms_db": ONE_SOUND, "level.crest_db": ONE_SOUND,
            "spec.entropy": LONGER_SAMPLE, "spec.flatness": LONGER_SAMPLE, "harm.strength": LONGER_SAMPLE,
            "env.*": RAMPS, "mfcc.std_*": RAMPS, "contrast.*": RAMPS,
            "decay.*": "one steady sound: its fall from the loudest frame to its end is its remaining length"},
    "tem": {"event.rate_hz": "events per second is the tempo", "event.ioi_*": "the beat interval is the tempo",
            "mod.*": "the envelope's modulation peaks at the beat rate",
            "env.autocorr_*": "the envelope repeats at the beat interval",
            "env.flux_db": "the level's change per frame over the train: on and off transitions per second, twice the "
                           "beat rate"},
    "rad": {"decay.*": "the decay is the reverberation time",
            "timing.release_s": "the fall from the last event's peak to 20 dB under the loudest frame is the tail's T20",
            "mod.*": "a room smooths the envelope by its reverberation time: its modulation transfer function, "
                     "m(F) = 1 / sqrt(1 + (2 pi F T / 13.8)^2), is how the STI measures a room (IEC 60268-16)",
            "timing.centre": "the energy's centre time in the span is ISO 3382-1's centre time Ts, a reverberation "
                             "measure: the tail holds energy late",
            "env.*": f"the envelope's spread, shape and self-similarity over frames: {SMOOTHER}",
            "mfcc.std_*": SMEAR, "spec.flux_*": SMEAR, "spec.centroid_std_hz": SMEAR,
            "contrast.*": "each frame holds the tails of the frames before it, which fill the dips between its peaks: "
                          "a room lowers spectral contrast the more, the longer it rings",
            "harm.strength": "the tail is the room's free ringing, whose modes decay apart, not the source's "
                             "period: the longer the decay, the more of the sound is tail and the weaker its "
                             "periodicity",
            "spec.entropy": SCHROEDER, "spec.flatness": SCHROEDER},
    "dir": {"d:*": "left minus right of any feature is an interaural difference (level, time, the head's shadow on the "
                   "spectrum): the attribute"},
    "cnt": {"event.count": "the number of separate events is the attribute"},
    "bri": {"spec.*": "brightness is the spectral shape", "band.*": "a brighter tilt moves every octave's share",
            "mfcc.*": "the cepstrum is the spectral envelope, its tilt first",
            "harm.*": "the autocorrelation is the power spectrum's transform, and zero crossings follow the tilt",
            "contrast.*": "a brighter tilt lifts the upper octaves' partials over the noise between them",
            "env.*": "the tilt shapes the waveform within each period, and a 5 ms frame is about one period: the "
                     "frames' ripple is the tilt"},
}

ALONE_ONLY: dict[str, dict[str, str]] = {
    "cnt": {"event.rate_hz": f"events per second: {SPAN_COUNT}", "event.ioi_*": f"the span over the count, {PER_EVENT}",
            "event.gap_*": f"the silence over the count, {PER_EVENT}",
            "event.length_*": f"the sounding time over the count, {PER_EVENT}",
            "env.flux_db": f"the level's change per frame counts on and off transitions: {SPAN_COUNT}",
            "mod.*": f"the envelope's modulation is the event rate: {SPAN_COUNT}",
            "env.autocorr_*": f"the envelope repeats at the mean event interval: {SPAN_COUNT}",
            "timing.attack_s": f"the first burst's rise, {BURST_SHARE}",
            "timing.release_s": f"the last burst's fall, {BURST_SHARE}",
            "decay.*": f"the last burst's fall, {BURST_SHARE}"},
    "tem": {"event.count": "the count over the span is the rate", "event.gap_*": f"the interval less the beat, {PER_EVENT}",
            "event.length_*": f"the beat's length: with the gap, the interval, {PER_EVENT}"},
}
