"""The rules extractor on 43,200 real answers of 18 public audio-language models (SonicBench's release, read in
place; skipped where the corpus is absent). Expected letters were read by hand; ids are model/file:line."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from acousticbench.benchmarks.acoustic.judge.answer_text import answer_text
from acousticbench.benchmarks.acoustic.judge.letters import states_answer
from acousticbench.benchmarks.acoustic.judge.rules import extract_choice

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "lalm_outputs"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus not present at {CORPUS}")

# (id, chosen, status): what the text states, checked by reading it; a short snippet says what is there
HAND_CHECKED = [
    ("GPT4o_audio/brightness_comparison.jsonl:4", "B", "answered"),  # 'B'
    ("audio-flamingo_2/brightness_comparison.jsonl:1", "A", "answered"),  # 'a'
    ("audio-flamingo_2/pitch_comparison.jsonl:22", "A", "answered"),  # '(a) a'
    ("audio-flamingo_2/texture_recog.jsonl:17", "B", "answered"),  # 'b. keyboard typing'
    ("audio-flamingo_2/texture_recog.jsonl:25", None, "unparsed"),  # 'a. crow or b. keyboard typing? ...'
    ("audio-flamingo_2/brightness_comparison.jsonl:20", None, "unparsed"),  # 'none'
    ("Baichuan-Audio/texture_recog.jsonl:18", "B", "answered"),  # 'B. chirping_birds'
    ("Step-Audio2/timbre_recog.jsonl:14", "B", "answered"),  # 'B. keyboard'
    ("SALMONN/timbre_recog.jsonl:41", None, "unparsed"),  # 'A. organ or B. keyboard?'
    ("Ming/timbre_comparison.jsonl:38", None, "unparsed"),  # 'A piano is being played'
    ("Qwen2-Audio/velocity_recog.jsonl:7", None, "unparsed"),  # 'Slow, A.' (A means high)
    ("Qwen2-Audio/velocity_recog.jsonl:12", "A", "answered"),  # 'fast, A' (fast: 'greater than 75', A: high; rules-4)
    ("Qwen2-Audio/velocity_recog.jsonl:39", None, "unparsed"),  # 'A, low.'
    ("Qwen3-Omni/velocity_recog.jsonl:39", "B", "answered"),  # 'slow, B' (slow: otherwise, B: low; rules-4)
    ("LLaMA-Omni/counting_recog.jsonl:17", None, "unparsed"),  # 'A B A B A'
    ("LLaMA-Omni/counting_recog.jsonl:37", None, "unparsed"),  # 'A, B'
    ("LLaMA-Omni/brightness_recog.jsonl:3", None, "refused"),  # "I'm not capable of hearing or processing audio ..."
    ("GPT4o_audio/distance_recog.jsonl:48", None, "refused"),  # "I'm sorry, but I can't determine that ..."
    ("GPT4o_audio/duration_recog.jsonl:17", None, "unparsed"),  # 'Please provide the audio clip, ...'
    ("GPT4o_audio/loudness_recog.jsonl:23", "A", "answered"),  # '... After analyzing, the answer is: A'
    ("GAMA/brightness_comparison.jsonl:33", None, "unparsed"),  # 'The first clip (A) is brighter.' to 'Which wins?'
    ("GAMA/brightness_comparison.jsonl:44", "A", "answered"),  # 'The answer is <A>. The first clip has ...'
    ("GAMA/distance_recog.jsonl:78", "A", "answered"),  # 'The audio is within range (A).'
    ("GAMA/texture_recog.jsonl:38", "A", "answered"),  # 'The answer is A. ... snoring, not a cat.' (A. snoring, B. cat)
    ("GAMA/timbre_recog.jsonl:3", "A", "answered"),  # 'The sound is A. bass.'
    ("GAMA/timbre_recog.jsonl:28", None, "unparsed"),  # '... whether it's A. string or B. mallet.'
    ("GAMA/timbre_comparison.jsonl:5", "A", "answered"),  # "The sound of keyboard is 'A'."
    ("GAMA/reverberation_recog.jsonl:10", "B", "answered"),  # "... no reverb, so the answer is 'B'."
    ("GAMA/counting_comparison.jsonl:6", "A", "answered"),  # 'A: The first segment has more sound pulses.'
    ("GAMA/counting_comparison.jsonl:73", "B", "answered"),  # 'Answer: B'
    ("GAMA/brightness_recog.jsonl:3", None, "unparsed"),  # '<ANSWER>' and nothing in it
    ("Audio-Reasoner/brightness_comparison.jsonl:2", "B", "answered"),  # <THINK>...</THINK><RESPONSE>B</RESPONSE>
    ("Audio-Reasoner/brightness_recog.jsonl:60", None, "unparsed"),  # <RESPONSE>neither</RESPONSE>
    ("Audio-Reasoner/counting_comparison.jsonl:72", None, "unparsed"),  # <THINK> never closed: no answer
    ("MiMo-Audio_think_mode/brightness_comparison.jsonl:1", "B", "answered"),  # '... </think>\nB'
    ("MiMo-Audio_think_mode/velocity_recog.jsonl:91", "B", "answered"),  # "... The answer is 'B'. </think>\nB"
    ("MiMo-Audio_think_mode/direction_comparison.jsonl:27", "A", "answered"),  # 'A\n\nThe first clip (A) gives ...'
    ("MiMo-Audio_think_mode/direction_comparison.jsonl:78", "A", "answered"),  # '... in front is:\n\n**A**\n\nHere ...'
    ("MiMo-Audio_think_mode/loudness_recog.jsonl:83", "B", "answered"),  # 'The audio is soft.\n\nB'
    ("MiMo-Audio_think_mode/loudness_recog.jsonl:75", "A", "answered"),  # '... the answer would be:\n\n**A**'
    ("MiMo-Audio_think_mode/velocity_comparison.jsonl:34", "B", "answered"),  # '... **Final Answer:** B'
    ("MiMo-Audio_think_mode/tempo_comparison.jsonl:45", None, "unparsed"),  # 'The second segment ... gradually.\n\nA'
    ("MiMo-Audio_think_mode/velocity_recog.jsonl:93", None, "unparsed"),  # 'The sound has a strong onset.\n\nB'
    ("MiMo-Audio_think_mode/velocity_recog.jsonl:90", None, "unparsed"),  # reasoning cut off: '... I think'
    ("step_audio_r1/brightness_comparison.jsonl:4", "A", "answered"),  # '... </think>\nA'
    ("step_audio_r1/direction_recog.jsonl:23", "A", "answered"),  # '... so the answer is A.\n</think>\nA'
    ("step_audio_r1/direction_recog.jsonl:22", None, "unparsed"),  # cut off: "... so the answer is 'A"
    ("step_audio_r1/counting_recog.jsonl:98", None, "unparsed"),  # cut off after 'So the answer should be B.'
    ("step_audio_r1/pitch_recog.jsonl:92", None, "unparsed"),  # cut off: '... the only safe answer is B (low'
    ("step_audio_r1/tempo_recog.jsonl:51", None, "unparsed"),  # cut off; says it can't play the audio, not a refusal
    # rules-3
    ("GAMA/counting_recog.jsonl:2", "B", "answered"),  # 'The sound repeats 4 times, as indicated by the letter 'B'.'
    ("GAMA/direction_recog.jsonl:68", "B", "answered"),  # 'The sound is located behind, indicated by the letter 'B'.'
    ("GAMA/texture_recog.jsonl:8", "A", "answered"),  # 'The sound is A. helicopter, ... unlike ... a hand saw.'
    ("GAMA/counting_recog.jsonl:21", None, "unparsed"),  # '... 3 times, indicated by the letter 'A', and 6 times, ... 'B'.'
    ("GAMA/counting_recog.jsonl:98", None, "unparsed"),  # '... produced 5 times, as indicated by the letter 'A' ...' (A: 1)
    ("GAMA/pitch_comparison.jsonl:16", None, "unparsed"),  # '... as indicated by the presence of the A note.'
    ("GAMA/brightness_comparison.jsonl:26", None, "unparsed"),  # '... as indicated by the presence of a' (cut off)
    ("GAMA/duration_comparison.jsonl:13", None, "unparsed"),  # 'The first segment is shorter, ... 'A' ...' (A: first longer)
    ("GAMA/distance_comparison.jsonl:76", "A", "answered"),  # "The first clip, labeled 'A', appears to be more distant"
    ("GAMA/pitch_comparison.jsonl:9", "A", "answered"),  # "... 'A', has a higher pitch than the second segment, ... 'B'."
    ("GAMA/duration_comparison.jsonl:8", None, "unparsed"),  # "The first segment, 'A', is shorter." (A: first longer)
    ("MiMo-Audio_think_mode/loudness_recog.jsonl:28", "A", "answered"),  # '... I would classify it as **loud (A)**.'
    # rules-4
    ("GAMA/reverberation_comparison.jsonl:25", "B", "answered"),  # "The stronger reverberation is in the second clip, ..."
    ("GAMA/timbre_comparison.jsonl:60", "A", "answered"),  # "The sound of reed is in clip 'A'." (which clip is reed?)
    ("GAMA/brightness_comparison.jsonl:13", "A", "answered"),  # "The first clip, marked 'A', has higher brightness."
    ("GAMA/distance_comparison.jsonl:7", "A", "answered"),  # "The first clip (A) sounds closer" to 'more close?'
    ("GAMA/duration_comparison.jsonl:80", "A", "answered"),  # "The first segment, 'A', is longer ..." (A: first longer)
    ("GAMA/timbre_recog.jsonl:64", "A", "answered"),  # "The sound is most likely 'A', guitar."
    ("GAMA/distance_recog.jsonl:20", "A", "answered"),  # "The sound is within 3 meters, marked as 'A'." (B: otherwise)
    ("GAMA/texture_recog.jsonl:56", "A", "answered"),  # 'The sound is A. clapping, ... distinct from ... crickets'
    ("GAMA/distance_comparison.jsonl:20", None, "unparsed"),  # 'The first clip (A) sounds closer' to 'further away?'
    ("GAMA/texture_comparison.jsonl:7", None, "unparsed"),  # 'The first clip (A) is the sound of laughter.' (laughing?)
    ("GAMA/reverberation_recog.jsonl:22", None, "unparsed"),  # "The space is reverberant, ... 'A' in the audio events."
    ("Qwen2-Audio/velocity_recog.jsonl:17", None, "unparsed"),  # 'Slow, A.' (slow: B)
    # rules-6
    ("MiMo-Audio_think_mode/loudness_comparison.jsonl:14", "B", "answered"),  # '... the second clip carries weaker
    # sound intensity.\n\nB' to 'Which one carries weaker sound intensity?'
    ("MiMo-Audio_think_mode/loudness_recog.jsonl:81", None, "unparsed"),  # 'If the KUFS value is -10, the answer is
    # **A** (loud). If ... -16, ... **B**': the options restated, no answer
    ("step_audio_r1/duration_comparison.jsonl:50", None, "unparsed"),  # cut trace: '... the answer is B.\n\nBut wait, the'
    ("step_audio_r1/velocity_recog.jsonl:67", None, "unparsed"),  # a trace that stops on a full sentence: '... so likely A.'
    # rules-7
    ("MiMo-Audio_think_mode/distance_comparison.jsonl:26", "B", "answered"),  # '... The first clip has a noticeable
    # echo, suggesting the speaker is ... further from the microphone.\n\nB' to 'Which ... seems to be close?'
    ("MiMo-Audio_think_mode/tempo_comparison.jsonl:45", None, "unparsed"),  # 'The second segment plays more
    # gradually.\n\nA': the comparison names the other clip
    ("step_audio_r1/reverberation_comparison.jsonl:15", "A", "answered"),  # '...所以第一段的混响更强。所以答案应该是A。</think>\nA'
    ("GPT4o_audio/velocity_recog.jsonl:33", None, "unparsed"),  # '请提供音频剪辑。' (please provide the clip)
    ("MiMo-Audio_think_mode/direction_comparison.jsonl:11", None, "unparsed"),  # a cut trace quoting Chinese speech
    # rules-8 (rules-6 and rules-7 left it: the lead-in names the other clip)
    ("MiMo-Audio_think_mode/direction_comparison.jsonl:93", "A", "answered"),  # '... In contrast, clip B shows the
    # person from behind ..., which is the opposite of a frontal perspective.\n\nA' to 'Which ... frontal?'
]


@pytest.fixture(scope="module")
def corpus() -> dict[str, tuple[str, str]]:
    """id -> (prompt, raw text): full_prediction where present (unedited), else prediction."""
    items = {}
    for path in sorted(CORPUS.glob("*/*.jsonl")):
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                row = json.loads(line)
                text = row.get("full_prediction") or row.get("prediction") or ""
                items[f"{path.parent.name}/{path.name}:{number}"] = (row["prompt"], text)
    return items


@pytest.mark.slow  # reads the whole real-answer corpus; its hand-checked answers stay in the inner loop
def test_rules_commit_to_99_percent_of_answers_that_state_a_letter(corpus):
    # the denominator: answers that state a letter as their answer. 41,422 texts name a letter; 610 of them are
    # reasoning traces the token limit cut mid-sentence (590 step_audio_r1, 20 MiMo, none with a closing </think>,
    # all read: none concludes; none is committed), which name letters while reasoning and never answer
    stating = committed = 0
    for prompt, text in corpus.values():
        if states_answer(answer_text(text)):
            stating += 1
            committed += extract_choice(prompt, text).status == "answered"
    assert len(corpus) == 43_200
    assert stating == 40_812
    # rules-8: 40,613 of 40,812, 99.51% (rules-7: 40,612; rules-6: 40,611; rules-5 read 98.04% of all 41,422 texts
    # that name a letter, traces included)
    assert committed / stating >= 0.995, f"coverage {committed}/{stating}"


@pytest.mark.parametrize("item, chosen, status", HAND_CHECKED)
def test_hand_checked_answers(corpus, item, chosen, status):
    judgement = extract_choice(*corpus[item])
    assert (judgement.chosen, judgement.status) == (chosen, status)


def test_a_chinese_conclusion_at_the_end_of_real_reasoning_is_read(corpus):
    # step_audio_r1 reasons in English and concludes in Chinese inside its <think> block; read as a reply of its own
    # (as a model without think tags would send it), the conclusion commits, and so do its last sentences alone
    prompt, text = corpus["step_audio_r1/reverberation_comparison.jsonl:15"]
    reasoning = text.split("</think>")[0].replace("<think>", "").strip()
    assert reasoning.endswith("所以第一段的混响更强。所以答案应该是A。")
    assert extract_choice(prompt, reasoning).chosen == "A"
    assert extract_choice(prompt, "所以第一段的混响更强。").chosen == "A"  # 'so the first clip's reverberation is stronger'
    assert extract_choice(prompt, "所以第二段的混响更强。\n\nA").status == "unparsed"
