"""Plainly written answers the rules read since rules-4, each kind with real corpus answers for and against it
(SonicBench's released outputs, quoted short; the prompt is the question's, instructions trimmed)."""
from __future__ import annotations

import pytest

from acousticbench.benchmarks.acoustic.judge.options import option_terms
from acousticbench.benchmarks.acoustic.judge.rules import extract_choice

VELOCITY = ("This is an audio clip. Classify the velocity as fast if it is greater than 75; otherwise, classify it as "
            "slow. Determine if the attack is forceful or soft. Use 'A' for high intensity, 'B' for low. Only answer "
            "'A' or 'B'.")
DYNAMIC = ("You will hear an audio clip. Classify the velocity as fast if it is greater than 75; otherwise, classify it "
           "as slow. Judge the dynamic level: is it forte (high) or piano (low)? Answer 'A' for high, 'B' for low.")

# the prompt's threshold sentence makes 'fast' the word of the high option and 'slow' the word of the low one
THRESHOLD = [
    (DYNAMIC, "fast, A", "A"),  # Qwen2-Audio/velocity_recog:19
    (VELOCITY, "slow, B", "B"),  # Qwen3-Omni/velocity_recog:57
    ("The stimulus is an audio clip. Classify the velocity as fast if it is greater than 75; otherwise, classify it as "
     "slow. Assess if the sound has high or low MIDI velocity. Answer 'A' for high, 'B' for low.", "slow B", "B"),  # MiMo
]
NOT_THRESHOLD = [
    (VELOCITY, "Slow, A."),  # Qwen2-Audio/velocity_recog:7: slow is B's
    (DYNAMIC, "A, low."),  # Qwen2-Audio/velocity_recog:39
    ("You are given an audio clip. Classify the velocity as fast if it is greater than 75; otherwise, classify it as "
     "slow. Does the sound have a strong or weak onset? Answer 'A' for high velocity, 'B' for low.",
     "The sound has a strong onset.\n\nB"),  # MiMo-Audio_think_mode/velocity_recog:93
    ("Is the tempo fast or slow? Answer 'A' for high, 'B' for low.", "fast, A"),  # no threshold sentence: no mapping
]


def test_the_threshold_adds_its_words_to_the_high_and_low_options():
    terms = option_terms(VELOCITY)
    assert {"high", "fast"} <= terms["A"] and {"low", "slow"} <= terms["B"]


REVERB = ("You are given a concatenated audio of two clips with 0.5 seconds of silence in between. Identify the clip "
          "with stronger reverberation. Use 'A' for the first, 'B' for the second.")
BASS = ("We provide an audio clip. Please determine which clip is the sound of bass? Only answer letter 'A' (refers to "
        "the first clip) or 'B' (refers to the second clip).")
LAUGHING = ("You are given a concatenated audio of two clips with 0.5 seconds of silence in between. Please determine "
            "which clip is the sound of laughing? Only answer letter 'A' (refers to the first clip) or 'B' (refers to "
            "the second clip).")
BRIGHTNESS = ("Assess which of the two clips, separated by 0.5 seconds of silence, has higher brightness. Only answer "
              "letter 'A' (refers to the first clip) or 'B' (refers to the second clip).")
MORE_CLOSE = ("Compare the perceived distance of two clips with 0.5 seconds of silence. Which one sounds more close? Only "
              "answer letter 'A' (refers to the first clip) or 'B' (refers to the second clip).")
CLOSE = ("Which one sounds like it's close? Only answer letter 'A' (refers to the first clip) or 'B' (refers to the "
         "second clip).")
NOT_CLOSER = ("Which one sounds like it's not closer? Only answer letter 'A' (refers to the first clip) or 'B' (refers "
              "to the second clip).")
LONGER = ("Listen to two sound clips with a brief pause between them. Which segment continues for more time? Indicate "
          "with 'A' if the first is longer, 'B' if the second is.")
SHORTER = ("Two sound sequences are separated by a moment of silence. Which segment is shorter? Say only 'A' if the "
           "first clip has a longer duration, 'B' if the second does.")
FARTHER = ("Two clips are joined by 0.5 seconds of silence. Which one sounds like it's located further away? Only answer "
           "letter 'A' (refers to the first clip) or 'B' (refers to the second clip).")

# the question's own words (a '0.5 seconds' no longer ends the question), then where they are: a named clip or a letter
RESTATED = [
    (REVERB, "The stronger reverberation is in the second clip, labeled as 'B'.", "B"),  # GAMA/reverberation_comparison:25
    (BASS, "The sound of bass is in the first clip, labeled 'A'.", "A"),  # GAMA/timbre_comparison:78
    ("You receive an audio input. Please determine which clip is the sound of reed? Only answer letter 'A' (refers to "
     "the first clip) or 'B' (refers to the second clip).", "The sound of reed is in clip 'A'.", "A"),  # timbre_comp:60
    ("You are given a concatenated audio of two clips with 0.5 seconds of silence in between. Please determine which "
     "clip is the sound of rain? Only answer letter 'A' (refers to the first clip) or 'B' (refers to the second clip).",
     "The sound of rain is indicated by the letter 'A'.", "A"),  # GAMA/texture_comparison:63
    (BRIGHTNESS, "The first clip, marked 'A', has higher brightness.", "A"),  # GAMA/brightness_comparison:13
    ("The audio consists of two parts separated by 0.5 seconds of silence. Please determine which clip has a higher "
     "velocity (note intensity). Only answer letter 'A' (refers to the first clip) or 'B' (refers to the second clip).",
     "The first clip (A) has a higher velocity (note intensity) as indicated by the continuous presence of the guitar "
     "sound.", "A"),  # GAMA/velocity_comparison:11
    # a comparative is 'more' and its word, and answers a plain 'which is close?'
    (MORE_CLOSE, "The first clip (A) sounds closer, as it has a longer duration and less silence than the second clip "
                 "(B).", "A"),  # GAMA/distance_comparison:7
    (CLOSE, "The first sound event, 'A', is closer to the microphone as it has a clearer and more distinct sound compared "
            "to the second event, 'B'.", "A"),  # GAMA/distance_comparison:42
    ("Which clip exhibits more brightness — the first or the second? They are separated by 0.5 seconds of silence. Only "
     "answer letter 'A' (refers to the first clip) or 'B' (refers to the second clip).", "The first clip (A) is brighter.",
     "A"),  # GAMA/brightness_comparison:57
    ("Which of the two clips sounds less present and more distant? Only answer letter 'A' (refers to the first clip) or "
     "'B' (refers to the second clip).", "The first clip, which is labeled as 'A', is less present and more distant "
     "compared to the second clip, which is labeled as 'B'.", "A"),  # GAMA/distance_comparison:23
    # the letter's own option, in its words
    (LONGER, "The first segment, 'A', is longer than the second segment, 'B'.", "A"),  # GAMA/duration_comparison:80
    ("Two sound sequences are separated by a moment of silence. Which segment continues for more time? Say only 'A' if "
     "the first clip has a longer duration, 'B' if the second does.",
     "The first segment, 'A', has a longer duration, as it spans the entire duration of the audio.", "A"),  # :88
]
NOT_RESTATED = [
    (LAUGHING, "The first clip (A) is the sound of laughter."),  # GAMA/texture_comparison:7: not the question's word
    (FARTHER, "The first clip (A) sounds closer, as it has a longer duration and overlaps with the second clip."),  # :20
    (NOT_CLOSER, "The first sound, 'A', is closer to the microphone, as it has a clearer and more prominent presence."),
    (SHORTER, "The first segment, 'A', is shorter."),  # GAMA/duration_comparison:8: 'A' means the first is longer
    (REVERB, "The stronger reverberation is in the second clip, labeled as 'A'."),  # the second clip is B
    (BASS, "The sound of bass is in clip 'A' or clip 'B'."),
    (BASS, "The sound is in the first clip, labeled as 'A'."),  # says nothing of bass
    (CLOSE, "The first clip (A) is the one."),  # says nothing of the option
    ("Which clip appears to be close, based on reverb-to-direct ratio? Only answer letter 'A' (refers to the first clip) "
     "or 'B' (refers to the second clip).", "The first clip, labeled 'A', appears to be closer to the listener, as it "
     "has a more pronounced reverb."),  # GAMA/distance_comparison:64: the question's 'reverb' is not in the claim
]


CLOSE_3M = "Is the sound without 3 meters? Choose 'A' if close (≤3m), 'B' if far (>3m)."
GUITAR = "Could this be A. guitar or B. string? Only answer 'A' or 'B'."
WITHIN = "Is the sound within the close zone? Just say 'A' if it's within 3 meters, 'B' otherwise."
# 'It is 'A', <the option's name>', a 'when' inside the reason, 'distinct from <the other option>', an option that the
# other letter defines only as 'otherwise'
STATED = [
    (GUITAR, "The sound is most likely 'A', guitar.", "A"),  # GAMA/timbre_recog:64
    (CLOSE_3M, "The sound is 'A', close to the recording device, as it is not affected by the 3 meters distance.", "A"),
    ("Is the sound A. reed or B. keyboard? Only answer 'A' or 'B'.", "The sound is A. reed, as it is a musical instrument "
     "that produces a distinct, resonant sound when played.", "A"),  # GAMA/timbre_recog:49
    ("Assess if the sound is A. clapping or B. crickets? Only answer 'A' or 'B'.", "The sound is A. clapping, as "
     "indicated by the continuous and rhythmic pattern of applause, which is distinct from the sound of crickets which is "
     "typically irregular and sporadic.", "A"),  # GAMA/texture_recog:56
    (WITHIN, "The sound is within 3 meters, marked as 'A'.", "A"),  # GAMA/distance_recog:20
    ("Is the sound source within 3 meters? Just say 'A' if it's within 3 meters, 'B' otherwise.",
     "The sound source is within 3 meters, as indicated by the audio label of 'A'.", "A"),  # GAMA/distance_recog:95
]
NOT_STATED = [
    (GUITAR, "The sound is most likely 'A', string."),  # the name is B's
    (CLOSE_3M, "The sound is 'A', far from the listener."),
    (CLOSE_3M, "The sound is 'A', the woman speaking."),  # names neither option
    ("Is the sound A. reed or B. keyboard? Only answer 'A' or 'B'.", "The sound is A. reed when it is played softly."),
    # ('The sound is A. Crow, ... clapping sounds.' to crow or clapping: test_judge_plain's NOT_TIED)
    (WITHIN, "The sound is not within 3 meters, marked as 'A'."),
    (WITHIN, "The sound is within 3 meters, marked as 'B'."),  # B is 'otherwise'
    (WITHIN, "The sound is beyond 3 meters, as indicated by the letter 'A'."),
    ("Which segment is shorter? Your answer should be 'A' if the first is longer, 'B' otherwise.",
     "The first segment is shorter, as indicated by the letter 'A'."),
]


@pytest.mark.parametrize("prompt, response, letter", THRESHOLD + RESTATED + STATED)
def test_threshold_words_restatements_and_option_names_commit(prompt, response, letter):
    judgement = extract_choice(prompt, response)
    assert (judgement.chosen, judgement.method) == (letter, "rules")


@pytest.mark.parametrize("prompt, response", NOT_THRESHOLD + NOT_RESTATED + NOT_STATED)
def test_other_words_directions_clips_or_names_stay_unparsed(prompt, response):
    assert extract_choice(prompt, response).status == "unparsed"
