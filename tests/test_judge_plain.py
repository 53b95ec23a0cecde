"""Plainly written answers the rules read since rules-3, each kind with real corpus answers for and against it
(SonicBench's released outputs, quoted short; the prompt is the question's, instructions trimmed)."""
from __future__ import annotations

import pytest

from acousticbench.benchmarks.acoustic.judge.rules import extract_choice

COUNT_1_4 = "How many times does the sound repeat? Only answer letter 'A' for 1, 'B' for 4."
FRONT_BACK = "Where is the sound located: in front or behind? Only answer letter 'A' if it is from the front, 'B' if it is from the back."
HELICOPTER = "Listen: is it A. helicopter or B. hand_saw? Only answer 'A' or 'B'."
BRIGHT = "Would you classify the sound as bright (sparkling) or dark (mellow)? Say only 'A' (brightness) or 'B' (dark)."
NEAR = "Is the sound within the nearby space? Say 'A' if the sound is within 3 meters, 'B' if it is distant."
DISTANT = ("Which one appears to be more distant? Only answer letter 'A' (refers to the first clip) or 'B' (refers to the "
           "second clip).")
SHORTER = ("Which segment is shorter? Answer only with a single letter: 'A' if the first segment has a longer duration, "
           "'B' if the second segment has a longer duration.")
NOTE = "Which clip has a higher musical note? Reply only 'A' or 'B' (A = first, B = second)."
CROW = "Is the sound A. crow or B. clapping? Only answer 'A' or 'B'."

# a claim, then the letter it is tied to (GAMA); words that set the other option aside ('not a dog') are no contradiction
TIED = [
    (COUNT_1_4, "The sound repeats 4 times, as indicated by the letter 'B'.", "B"),  # GAMA/counting_recog:2
    (FRONT_BACK, "The sound is located behind, indicated by the letter 'B'.", "B"),  # GAMA/direction_recog:68
    (BRIGHT, "The sound is bright (A) as it has a sparkling quality to it, suggesting a high-energy, lively tone.", "A"),
    (NEAR, "The sound is 'A', indicating that the conversation is happening within a close proximity.", "A"),
    (HELICOPTER, "The sound is A. helicopter, as it is a continuous, high-pitched noise, unlike the rhythmic, repetitive "
                 "sound of a hand saw.", "A"),  # GAMA/texture_recog:8
    ("Determine if it is A. dog or B. coughing? Only answer 'A' or 'B'.",
     "The audio event is identified as B. Coughing, as the audio event is a coughing sound, not a dog's sound.", "B"),
]
NOT_TIED = [  # 'The first clip (A) is brighter.' to 'Which wins?' is in NOT_RESTATED
    (DISTANT, "The first clip (A) sounds closer, as it has a longer duration."),
    (SHORTER, "The first segment is shorter, as indicated by the 'A' in the audio description."),  # A means longer
    ("How many times is the sound repeated? Only answer letter 'A' for 3, 'B' for 6.",
     "The sound is repeated 3 times, indicated by the letter 'A', and 6 times, indicated by the letter 'B'."),
    ("How many times is the sound produced? Only answer letter 'A' for 1, 'B' for 4.",
     "The sound is produced 5 times, as indicated by the letter 'A' being used 5 times."),  # 5 is neither count
    (NOTE, "The first clip has a higher musical note, as indicated by the presence of the A note."),  # the note A
    ("Is the sound within the nearby spot? Reply with 'A' for close, 'B' for far (3 meters as threshold).",
     "The woman's speech is not close, as it is not described as 'A'."),
    # GAMA/texture_recog:37: the name is A's, the reason is B's
    (CROW, "The sound is A. Crow, as indicated by the presence of a continuous, rhythmic pattern of clapping sounds."),
    ("Which one is brighter? Answer 'A' or 'B'.", "The first clip is brighter, as indicated by the letter 'A'."),  # no terms
]


# a clip named with its letter, then the question's own words (GAMA): no understanding needed, only the same words
WINS = ("Compare the brightness of two clips separated by 0.5 seconds of silence. Which wins? Only answer letter 'A' "
        "(refers to the first clip) or 'B' (refers to the second clip).")
LESS_LOUD = ("Two sound clips are connected by 0.5 seconds of silence. Which part comes with less loudness? Output only "
             "'A' (first) or 'B' (second).")
PITCH = ("Two tones are separated by 0.5 seconds of silence. Assess which segment appears higher in pitch. Only answer "
         "letter 'A' (refers to the first clip) or 'B' (refers to the second clip).")
RESTATED = [
    (DISTANT, "The first clip, labeled 'A', appears to be more distant, as it contains a longer duration of silence "
              "before the second clip.", "A"),  # GAMA/distance_comparison:76
    (LESS_LOUD, "The second part, 'B', has less loudness as indicated by the silence between the two segments.", "B"),
    (PITCH, "The first segment, marked as 'A', has a higher pitch than the second segment, marked as 'B'.", "A"),
    ("Please determine which clip is the sound of insects? Only answer letter 'A' (refers to the first clip) or 'B' "
     "(refers to the second clip).", "The first clip (A) is the sound of insects.", "A"),
]
NOT_RESTATED = [
    (WINS, "The first clip (A) is brighter."),  # 'brighter' is not the question's word
    (LESS_LOUD, "The first part (A) has more loudness, as it contains a beep."),  # the opposite direction
    (PITCH, "The first segment, marked as 'B', has a higher pitch."),  # the letter is not the first clip's
    (PITCH, "The first segment, marked as 'A', has a higher pitch than the second segment, marked as 'A'."),
    (LESS_LOUD, "The first part (A) has less loudness, or maybe the second part (B)."),
    # a shorter first segment named 'A' where 'A' means longer: in test_judge_rules_option_words's NOT_RESTATED
]


# the kinds an outside sample showed (paraphrased: the shared corpus has almost none of them), for and against
ECHO = "Which clip has more echo? Answer 'A' (first) or 'B' (second)."
RAIN = "Is it A. rain or B. wind? Only answer 'A' or 'B'."
PLAIN = [
    (ECHO, "B. Let me know if you have other questions!", "B"),  # the letter first, then boilerplate
    (ECHO, "B\n\nLet me know if you have any other questions!", "B"),
    (ECHO, "A. I hope this helps!", "A"),
    (ECHO, "After listening to each, the clip with more echo is: **A**", "A"),  # a lead-in ending in a colon
    (ECHO, "After listening, the clip with more echo is: A", "A"),
    (RAIN, "Based on the texture, the best description is: A. rain", "A"),
    (ECHO, "The first has a long tail of reflections, so the right classification is 'A'.", "A"),  # a quoted verdict
    (ECHO, "The first clip is dry, so it's 'B'.", "B"),
    (ECHO, "The second clip rings on after the notes stop. B's the clear choice.", "B"),
    (ECHO, "The second clip has a longer decay and more reflections, which means more echo.\n\nB", "B"),  # a last line
    (ECHO, "<answer>B</answer", "B"), (ECHO, "<answer>B/answer>", "B"), (ECHO, "<answer>A<answer>", "A"),  # malformed tags
    (ECHO, "answer>A</answer>", "A"), (ECHO, "<think>B</think>", "B"), (ECHO, "<think>\nA\n</think>\n\n", "A"),
    (ECHO, "<think>A</think> The second clip, B.", "B"),  # what follows the reasoning is the answer
    # real: MiMo-Audio_think_mode/loudness_recog.jsonl:28
    ("Is it loud or soft? Say 'A' if loud, 'B' if soft.", "I am a text-based AI and cannot analyze audio. However, "
     "based on the nature of the sound, which is a sharp and percussive click, I would classify it as **loud (A)**.", "A"),
]
NOT_PLAIN = [
    (ECHO, "A or B: I can't tell. Let me know if you have other questions!"),
    (ECHO, "B. Let me know if you want me to reconsider A."),  # the courtesy names the other letter
    (ECHO, "The options are: A. the first clip or B. the second clip."),
    (ECHO, "The clip with more echo is: A? Or maybe B."),
    (RAIN, "Based on the texture, the best description is: A. wind"),  # the name is B's
    (ECHO, "If the tail is longer, the classification is 'A'."),
    (ECHO, "A's the clear choice. Wait, actually B."),
    (ECHO, "<think>A or B</think>"), (ECHO, "<think>The first is longer, so A. But wait, B</think>"),
    # real: GAMA/distance_recog.jsonl:11 and :13
    (NEAR, "The audio does not specify the distance of the listener from the speaker, so the answer is 'A' or 'B'."),
    (NEAR, ". The audio does not contain any sound that could be classified as 'A' (≤3m) or 'B' (>3m)."),
]


@pytest.mark.parametrize("prompt, response, letter", TIED + RESTATED + PLAIN)
def test_claims_restatements_and_plain_answers_commit(prompt, response, letter):
    judgement = extract_choice(prompt, response)
    assert (judgement.chosen, judgement.method) == (letter, "rules")


@pytest.mark.parametrize("prompt, response", NOT_TIED + NOT_RESTATED + NOT_PLAIN)
def test_named_clips_contradictions_hedges_and_revisions_stay_unparsed(prompt, response):
    assert extract_choice(prompt, response).status == "unparsed"
