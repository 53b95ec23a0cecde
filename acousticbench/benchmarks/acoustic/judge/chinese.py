"""Chinese conclusions in the English words the rules read: '答案是A' is 'answer: A', '选B' is 'I choose B', '第二个片段更响'
is 'the second clip louder'; so a Chinese answer meets the same checks (hedges, conditions, the other letter, a
lead-in that disagrees) as an English one.

Only fixed phrases are glossed, and a statement only where a letter follows it; the rest stays Chinese and means
nothing to the rules. Chinese hedges, conditions and second thoughts are cues of their own (cues.py).
"""
from __future__ import annotations

import re

_CJK = re.compile(r"[\u3400-\u9fff]")
_WIDE = re.compile(r"[\uff01-\uff5e。，、【】「」『』\u3000]")
# full-width forms ('：', '（', 'Ｂ') as ASCII; a sentence's end keeps a space after it, as English has
_WIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}
_PUNCTUATION = [("。", ". "), ("！", "! "), ("？", "? "), ("，", ", "), ("、", ", "), ("；", "; "), ("：", ": "),
                ("【", "["), ("】", "] "), ("「", '"'), ("」", '"'), ("『", '"'), ("』", '"'), ("\u3000", " ")]
_LETTER_NEXT = r"(?=\s*[\"'‘’“”`*_(\[<{]*\s*[AaBb](?![A-Za-z0-9]))"
# the letter alone, not the head of a phrase about its clip ('输出B段的波形': output clip B's waveform)
_LETTER_ALONE = (r"(?=\s*[\"'‘’“”`*_(\[<{]*\s*[AaBb](?![A-Za-z0-9])[\"'’”`*_)\]>}]*\s*"
                 r"(?:$|[^\u3400-\u9fff]|即可|吧|了|啊|呢))")
_THEN = r"(?:应该|应当|应|就|即|只能|必然|肯定|当然)?\s*"
_NOT = "".join(f"(?<!{word})" for word in ("不要", "不需要", "不必", "不用", "不会", "不应", "不该", "别", "勿"))
_CHOOSE = r"(?:我|所以|因此|因而|故|则|应|应该|应当|只能|就|会|最终)*\s*"
_CLIP_WORD = r"(?:音频|片段|声音|录音|段落|样本|音)"
_MEASURE = r"(?:个|段|部分|条|节)"
_STATEMENTS = [  # (Chinese, English) where a letter follows
    (rf"\[?\s*(?:最终|正确|我的)?答案\s*\]?\s*{_THEN}(?:是|为|选)?\s*:?\s*(?:选项\s*)?{_LETTER_NEXT}", " answer: "),
    (rf"(?<![\u3400-\u9fff])答\s*:\s*{_LETTER_NEXT}", " answer: "),
    (rf"(?:最终|正确|我的)(?:选项|选择)\s*{_THEN}(?:是|为)\s*:?\s*{_LETTER_NEXT}", " answer: "),
    (rf"{_THEN}回答\s*(?:是|为)?\s*:?\s*{_LETTER_NEXT}", " answer: "),
    # 只写/输出/回复 'B' (write, output, reply): only after a word that leads to it, so '描写' (describe) is none,
    # and never negated ('不要写A', '不能只写A')
    (rf"(?<![^\s,.:;!?\"'应该就我会将要需以此终当即的]){_NOT}(?:只)?(?:写|输出|回复|给出|填写?|作答)\s*(?:的)?\s*(?:是|为)?\s*:?\s*"
     rf"(?:选项\s*)?{_LETTER_ALONE}", " answer: "),
    (rf"(?:正确|最终)的\s*(?:选项|答案)?\s*{_THEN}(?:是|为)\s*:?\s*{_LETTER_ALONE}", " answer: "),
    (rf"(?:最终)?(?:结果|选项)\s*{_THEN}(?:是|为)\s*:?\s*{_LETTER_ALONE}", " answer: "),
    (rf"结论\s*(?:是|为)?\s*:?\s*{_LETTER_NEXT}", " conclusion: "),
    (rf"(?:我的)?选择\s*(?:是|为)\s*:?\s*(?:选项\s*)?{_LETTER_NEXT}", " my choice is "),
    (rf"{_CHOOSE}选(?:择)?(?:了|的是)?\s*(?:选项\s*)?{_LETTER_NEXT}", " I choose "),
    (rf"(?:^|(?<=[\s,.:;!]))(?:我认为|我觉得|我想)?\s*(?:{_THEN}|那就|所以|因此|一定)\s*是\s*(?:选项\s*)?{_LETTER_NEXT}",
     " it is "),
    (r"(?:选项\s*)?(?<![A-Za-z0-9])([AB])\s*(?:选项)?\s*(?:是|为|才是)?\s*正确(?:的)?(?:答案|选项)?", r" \1 is correct "),
    (r"选项\s*([AB])(?![A-Za-z0-9])", r" option \1 "),
    (r"(?<![A-Za-z0-9])([AB])\s*选项", r" option \1 "),
]
_CLIPS = [  # which clip: '第二个片段', '后一段', '片段B'
    (rf"(?:第一|第1|前一|头一)\s*(?:{_MEASURE}\s*{_CLIP_WORD}?|{_CLIP_WORD})|前者", " the first clip "),
    (rf"(?:第二|第2|后一)\s*(?:{_MEASURE}\s*{_CLIP_WORD}?|{_CLIP_WORD})|后者", " the second clip "),
    (rf"{_CLIP_WORD}\s*([AB])(?![A-Za-z0-9])", r" clip \1 "),
    (rf"(?<![A-Za-z0-9])([AB])\s*{_CLIP_WORD}", r" clip \1 "),
    (r"(?:与|和|跟)\s*(the (?:first|second) clip|clip [AB])\s*(?:相比|比较|比起来)", r" compared to \1 "),
    (r"(?<![对相无好])比(?!较|起|如|方|例|赛|特|喻|率)", " than "),  # not 比较 (compare), 比如 (for example), ...
    (r",?\s*(?:因为|由于)", ", because "),
]
_MORE = r"(?:明显|稍微|略微?|显著|要|还)?\s*(?:更加|更为|更|较为|较|比较)\s*"
_VERY = r"(?:很|非常|相当|十分|特别|偏)\s*"
_LOUDNESS = r"(?:的)?\s*(?:声音|音量|响度)\s*(?:明显|稍微|略微?|显著|要|还)?\s*(?:更加|更为|更|较为|较|比较)?\s*"
# (Chinese, English comparative, English word)
_WAYS = [("响亮", "louder", "loud"), ("大声", "louder", "loud"), ("响", "louder", "loud"), ("安静", "quieter", "quiet"),
         ("轻柔", "softer", "soft"), ("小声", "softer", "soft"), ("轻", "softer", "soft"), ("高", "higher", "high"),
         ("低", "lower", "low"), ("明亮", "brighter", "bright"), ("亮", "brighter", "bright"), ("暗淡", "darker", "dark"),
         ("暗", "darker", "dark"), ("沉闷", "duller", "dull"), ("长", "longer", "long"), ("久", "longer", "long"),
         ("短", "shorter", "short"), ("快", "faster", "fast"), ("急促", "faster", "fast"), ("缓慢", "slower", "slow"),
         ("慢", "slower", "slow"), ("近", "closer", "close"), ("远", "farther", "far"), ("强烈", "stronger", "strong"),
         ("强", "stronger", "strong"), ("有力", "stronger", "strong"), ("弱", "weaker", "weak")]
# 更大, 更多 (bigger, more) stay unread: which property they compare the words do not say ('声音更大' is read above)
# the word ends there ('很轻微' is slight, not soft): what follows is no Chinese, or a particle
_ENDS = r"(?=[^\u3400-\u9fff]|$|一些|一点|些|了|的|得|吧|呢|啊)"
_COMPARISONS = [(rf"{_LOUDNESS}(?:大|响亮|响){_ENDS}", " louder "), (rf"{_LOUDNESS}(?:小|轻|弱){_ENDS}", " softer "),
                (r"音调|音高", " pitch "), (r"亮度", " brightness "), (r"时长|持续时间", " duration "),
                (r"混响", " reverberation "), (r"回声", " echo "), (r"节奏|速度", " tempo ")]
_COMPARISONS += [(rf"{_MORE}{chinese}{_ENDS}", f" {comparative} ") for chinese, comparative, _ in _WAYS]
_COMPARISONS += [(rf"{_VERY}{chinese}{_ENDS}", f" very {plain} ") for chinese, _, plain in _WAYS]
# the loudness phrases first: '第二段声音更大' is the second clip louder, not the second '声音' clip bigger
_GLOSS = [(re.compile(pattern), english)
          for pattern, english in _STATEMENTS + _COMPARISONS[:2] + _CLIPS + _COMPARISONS[2:]]


def has_chinese(text: str) -> bool:
    return bool(_CJK.search(text))


def gloss(text: str) -> str:
    """The text with its Chinese conclusions in English words; a text with no Chinese comes back unchanged."""
    if not (has_chinese(text) or _WIDE.search(text)):
        return text
    for chinese, english in _PUNCTUATION:
        text = text.replace(chinese, english)
    text = text.translate(_WIDTH)
    for pattern, english in _GLOSS:
        text = pattern.sub(english, text)
    return re.sub(r"[ \t]+(?=\n|$)", "", text).strip()
