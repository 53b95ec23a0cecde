"""rules-7 and rules-8: a letter alone on the last line after reasoning commits when the sentence before it compares
the clips the letter's way, and Chinese conclusions commit as their English words do; hedged, conditional, echoed or
self-contradicting answers stay with the LLM judge."""
from __future__ import annotations

import pytest

from acousticbench.benchmarks.acoustic.judge.rules import extract_choice

LOUDER = ("Two clips with a 0.5-second silent interval. Which one is louder? Only answer letter 'A' (refers to the "
          "first clip) or 'B' (refers to the second clip). Do not add any explanation, punctuation, or extra text.")
PITCH = ("Two clips are played in sequence with a 0.5-second pause between them. Please determine which clip has a "
         "higher pitch. Answer 'A' for first, 'B' for second.")
CLOSE = ("Which of the two clips seems to be close? Only answer letter 'A' (refers to the first clip) or 'B' (refers "
         "to the second clip).")
LOUD_OR_SOFT = "Is the sound loud or soft? Respond with 'A' for loud, 'B' for soft. Only answer 'A' or 'B'."
SHORTER = "Which segment is shorter? Reply only 'A' if the first is longer, 'B' if the second is."
REASONING = ("Let me compare the two clips. The first clip is a sustained string note; the second is a brass hit "
             "with a sharp attack. I will weigh their peak levels and how long each lasts. ") * 6


def judged(prompt: str, response: str) -> str:
    judgement = extract_choice(prompt, response)
    return judgement.chosen if judgement.status == "answered" else judgement.status


@pytest.mark.parametrize("response, letter", [
    ("Overall, the second clip sounds louder.\n\nB", "B"),
    ("In conclusion, the second clip is noticeably louder.\n\nB", "B"),
    ("Therefore, the first clip is louder than the second.\n\nA", "A"),
    ("Clip B is louder than clip A.\n\nB", "B"),
    ("The first clip is quieter.\n\nB", "B"),  # the other clip, the opposite way
    ("The second clip is less quiet.\n\nB", "B"),
    ("Let me analyze.\nClip A: quiet.\nClip B: loud.\n\nB", "B"),
    ("Clip A is quieter, while clip B is noticeably louder.\n\nB", "B"),  # clauses on each clip that agree
    ("The first clip is soft, while the second has a sharp attack.\n\nB", "B"),
    ("Therefore, B is the louder clip, not A.\n\nB", "B"),
    ("The second clip, not the first, is louder.\n\nB", "B"),
    (REASONING + "\n\nSo the second clip is louder.\n\nB", "B"),  # long reasoning, the letter at its end
    ("So the second clip is louder.\n\nOption B", "B"),
    ("The second clip is louder.\n\n**Option B**", "B"),
    ("Answer:\nA", "A"),
])
def test_a_last_line_letter_after_a_comparison_that_fits_it_commits(response, letter):
    assert judged(LOUDER, response) == letter


def test_letters_that_head_what_is_said_of_each_clip_are_no_answers():
    headed = "A:\nThe first clip is soft.\n\nB:\nThe second clip is loud.\n\n"
    assert judged(LOUDER, headed + "B") == "B"
    assert judged(LOUDER, headed.replace("A:", "**A:**").replace("B:", "**B:**") + "Answer: B") == "B"
    assert judged(LOUDER, headed + "A") == "unparsed"  # the last comparison names the other clip
    assert judged(LOUDER, "A\nThe first clip is soft.\n\nB\nThe second clip is loud.\n\nB") == "unparsed"  # bare


def test_a_lead_in_may_give_its_reason_in_other_words_where_the_question_names_a_way():
    # MiMo-Audio_think_mode/distance_comparison.jsonl:26, its last sentence: the first clip far, so the second close
    response = ("The second clip has a much clearer, more direct sound with minimal echo or reverberation. The first "
                "clip has a noticeable echo, suggesting the speaker is in a larger room or further from the "
                "microphone.\n\nB")
    assert judged(CLOSE, response) == "B"
    assert judged(CLOSE, response[:-1] + "A") == "unparsed"


@pytest.mark.parametrize("response", [
    "Comparing the two clips, the second clip is quieter.\n\nB",  # the other way: it contradicts its letter
    "The first clip is louder.\n\nB",
    "Therefore, the first clip is louder than the second.\n\nB",
    "Clip B is louder than clip A.\n\nA",
    "The first clip is quieter.\n\nA",
    "The second clip might be louder.\n\nB",  # hedged
    "Is it A or B?\n\nB",  # the question echoed
    "Which is louder, the first or the second?\n\nB",
    "Options:\nA\nB",  # an option list echoed: both letters
    "A: first clip\nB: second clip",
    "The second clip is louder.\n\nA or B",
    "The second clip is louder.\n\nA\n\nB",  # letter-only lines that disagree
    "Clip A is quiet while clip B is loud.\n\nA",
    "Clip A is soft, but clip B is even softer.\n\nB",  # clauses that disagree: left to the LLM judge
    "The first clip is louder in the intro, but the second is louder overall.\n\nB",
    "The first clip might be soft, while the second is loud.\n\nB",
    "The second clip is not louder.\n\nB",
    "The second clip is louder.\n\nB-flat",  # a letter inside a word is no letter
    "The second clip is louder.\n\nAB",
    REASONING + "\n\nSo the first clip is louder.\n\nB",
])
def test_a_last_line_letter_that_disagrees_hedges_or_echoes_does_not(response):
    assert judged(LOUDER, response) == "unparsed"


def test_a_statement_after_a_comparison_of_the_other_clip_in_its_sentence_does_not_commit():
    assert judged(LOUDER, "The second clip is louder, so the answer is A.") == "unparsed"
    assert judged(LOUDER, "The second clip is louder, so the answer is B.") == "B"
    assert judged(LOUDER, "第一段很安静，所以答案是B。") == "B"


def test_the_opposite_of_the_questions_way_names_the_other_clip():
    # MiMo-Audio_think_mode/direction_comparison.jsonl:93, its last sentence: clip B the opposite of frontal
    frontal = ("Which of the two clips is more likely to be judged as frontal? Only answer letter 'A' (refers to the "
               "first clip) or 'B' (refers to the second clip).")
    response = ("The person in clip A is speaking directly from the front. In contrast, clip B shows the person from "
                "behind, which is the opposite of a frontal perspective.\n\n")
    assert judged(frontal, response + "A") == "A"
    assert judged(frontal, response + "B") == "unparsed"
    assert judged(LOUDER, "Clip A is the opposite of loud.\n\nB") == "B"  # read as loud before rules-8
    assert judged(LOUDER, "Clip A is the opposite of loud.\n\nA") == "unparsed"
    assert judged(LOUDER, "The opposite side is louder in clip A.\n\nB") == "unparsed"  # no 'opposite of'


def test_another_property_is_no_comparison():
    assert judged(PITCH, "The second clip has less reverb.\n\nB") == "unparsed"
    assert judged(PITCH, "The second clip has a higher pitch.\n\nB") == "B"
    assert judged(PITCH, "The second clip has a lower pitch.\n\nB") == "unparsed"


@pytest.mark.parametrize("response, letter", [
    ("答案是A", "A"), ("答案：B", "B"), ("答案是：A", "A"), ("答案为：A", "A"), ("选A", "A"), ("选择B", "B"),
    ("故选B", "B"), ("所以答案应该是A。", "A"), ("正确答案是B", "B"), ("正确选项为A", "A"), ("【答案】B", "B"), ("答：A", "A"),
    ("回答：B", "B"), ("结论：B", "B"), ("我认为是B。", "B"), ("应该是B。", "B"), ("选项B。", "B"), ("A选项", "A"),
    ("答案是 **B**。", "B"), ("答案是Ｂ。", "B"), ("Ｂ", "B"), ("答案是选项B", "B"), ("因此，答案是B。", "B"),
    ("根据音频内容，第二段的响度更大，因此答案是B。", "B"), ("答案：A（第一个片段）", "A"), ("不是A，答案是B。", "B"),
    # rules-8: what to write, output or reply, as a reasoning trace ends
    ("只写“B”", "B"), ("所以只写“B”。", "B"), ("应该回答'B'", "B"), ("所以应该输出B。", "B"), ("因此我应该只输出“A”。", "A"),
    ("我会写B。", "B"), ("只需要写B", "B"), ("所以我的回复是B", "B"), ("应输出“A”", "A"), ("输出：B", "B"),
    ("正确的是B", "B"), ("选项为B", "B"), ("结果是B", "B"),
    ("用户要求只回答A或B。第二段更响，所以应该回答'B'。", "B"),
])
def test_chinese_statements_of_a_letter_commit(response, letter):
    assert judged(LOUDER, response) == letter


@pytest.mark.parametrize("prompt, response, letter", [
    (LOUDER, "第一个音频更响。", "A"),
    (LOUDER, "第二个片段更响", "B"),
    (LOUDER, "第二段的音量更大。", "B"),
    (LOUDER, "后者更响。", "B"),
    (LOUDER, "第一段比第二段更安静。", "B"),  # the first quieter: the second louder
    (LOUDER, "与第一段相比，第二段更响。", "B"),
    (LOUDER, "总的来说，第二段明显更响。", "B"),
    (LOUDER, "第二个片段更响，因为它的振幅更大。", "B"),
    (LOUDER, "第一段很安静，第二段更响。", "B"),
    (PITCH, "第二个片段的音调更高", "B"),
    (PITCH, "第二个片段的音调更低", "A"),
    (LOUDER, "第二段更响。\n\nB", "B"),
])
def test_chinese_comparisons_of_the_clips_commit_as_the_options_order_them(prompt, response, letter):
    assert judged(prompt, response) == letter


@pytest.mark.parametrize("prompt, response", [
    (LOUDER, "可能是A"),  # hedged
    (LOUDER, "我不确定，可能是A"),
    (LOUDER, "我会选A，但不太确定。"),
    (LOUDER, "答案可能是A"),
    (LOUDER, "如果第一段更响，答案是A。"),  # conditional
    (LOUDER, "如果第一段更响，选A；否则选B。"),
    (LOUDER, "答案是A还是B？"),  # both letters, a question
    (LOUDER, "答案是A或B"),
    (LOUDER, "答案是A。等等，不对，应该是B。"),  # second thoughts
    (LOUDER, "选项A表示第一个片段，选项B表示第二个片段。"),  # the options echoed
    (LOUDER, "第一个片段更响还是第二个片段更响？"),
    (LOUDER, "第二段更响，第一段更响。"),
    (LOUDER, "两个片段一样响。"),
    (LOUDER, "第二段不如第一段响。"),  # a negation
    (LOUDER, "第二次更响"),  # a second time, not a second clip
    (LOUDER, "第一段很安静，第二段更轻。"),  # its clauses disagree
    (LOUDER, "第二段更大"),  # bigger: which property, the words do not say
    (LOUDER, "第二段更响，选A"),  # its own comparison names the other clip
    (LOUDER, "比如第二段更响，选B"),  # an example
    (LOUDER, "第一段更响。\n\nB"),  # the lead-in names the other clip
    (PITCH, "第二个片段的音量更高"),  # volume, not pitch
    (SHORTER, "第二段更短"),  # the options have a way of their own ('A' if the first is longer)
    (LOUD_OR_SOFT, "声音很轻。\n\nA"),  # soft, then the loud option's letter
    (LOUD_OR_SOFT, "答案是A，因为声音很轻。"),
    (LOUDER, "用户要求只写A或B"),  # the instruction restated: both letters
    (LOUDER, "题目要求只输出A或B。"),
    (LOUDER, "如果第一段更响就写A，否则写B。"),  # conditional
    (LOUDER, "如果是第二段更响，输出B。"),
    (LOUDER, "我不能只写A"),  # negated
    (LOUDER, "不要写A"),
    (LOUDER, "也许应该输出B"),  # hedged
    (LOUDER, "我会写A，但不确定。"),
    (LOUDER, "写A还是写B？"),
    (LOUDER, "描写A段"),  # describe, not write
    (LOUDER, "选项为A和B。"),
    (LOUDER, "输出B段的波形"),  # the letter heads a phrase about its clip: no answer
    (LOUDER, "测量结果是B段更安静。"),
    (LOUDER, "正确的是B段更安静"),
])
def test_hedged_conditional_echoed_or_contradicting_chinese_does_not(prompt, response):
    assert judged(prompt, response) == "unparsed"


def test_an_english_answer_is_read_as_it_was():
    # the gloss touches only text with Chinese or full-width forms
    assert judged(LOUDER, "The answer is B.") == "B"
    assert judged(LOUDER, "The second clip is louder.") == "unparsed"  # English comparisons alone: the LLM judge's


def test_the_clips_map_to_letters_as_the_prompt_orders_them():
    reversed_options = ("Which one is louder? Only answer letter 'A' (refers to the second clip) or 'B' (refers to the "
                        "first clip).")
    assert judged(reversed_options, "第二段更响。") == "A"
    assert judged(reversed_options, "So the second clip is louder.\n\nA") == "A"
    assert judged(reversed_options, "So the second clip is louder.\n\nB") == "unparsed"
