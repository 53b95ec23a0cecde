"""The strict rules extractor: commits to A or B only when the text states the option unambiguously."""
from __future__ import annotations

import re
from dataclasses import dataclass

from acousticbench.benchmarks.acoustic.judge.answer_text import answer_text
from acousticbench.benchmarks.acoustic.judge.chinese import gloss, has_chinese
from acousticbench.benchmarks.acoustic.judge.claims import tied_claims
from acousticbench.benchmarks.acoustic.judge.compared import compared_clip, stated_comparison
from acousticbench.benchmarks.acoustic.judge.cues import (BOUNDARY, CLOSE, CONDITION, HEDGE, NEGATION, OPEN, SECOND_THOUGHTS, mentions_letter,
                                      plain, sentence_at)
from acousticbench.benchmarks.acoustic.judge.last_line import fits_lead_in, line_letter
from acousticbench.benchmarks.acoustic.judge.letters import single_letter, states_letter, unfinished
from acousticbench.benchmarks.acoustic.judge.options import Terms, affirmed, option_terms, words, words_fit
from acousticbench.core.refusal import is_refusal
from acousticbench.benchmarks.acoustic.judge.restated import restated_choice
from acousticbench.benchmarks.acoustic.records import Judgement

RULES_VERSION = "rules-8"  # rules-8: Chinese 只写/输出/回复 conclusions; "the opposite of" a way; rules-7: last-line letters

_LETTER = (rf"(?P<open>(?:{OPEN}[ \t]*)*)(?<![A-Za-z0-9])(?P<letter>[AaBb])"
           rf"(?![A-Za-z0-9]|['’]s\b|-[A-Za-z])(?P<close>(?:[ \t]*{CLOSE})*)")
_ADVERB = r"(?:(?:therefore|thus|clearly|definitely|certainly|simply|indeed|(?:most\s+)?likely|probably)\s+)?"
_NOUN = r"(?:(?:option|choice|letter|clip|segment)\s+)?"
_EXPLICIT = [re.compile(lead + _LETTER, re.IGNORECASE) for lead in (
    rf"\b(?:answer|choice|option|selection|response|output|verdict|classification|conclusion|pick)\s*(?:[:：=]|-\s"
    rf"|\bis\b\s*:?|\b(?:would|should|will|must)\s+be\b\s*:?)\s*{_ADVERB}{_NOUN}",
    rf"\bI\s+(?:(?:would|will|'ll|’ll)\s+)?(?:choose|select|pick|go\s+with|opt\s+for|"
    rf"(?:classify|label|categori[sz]e)\s+(?:it|this|the\s+\w+)\s+as)\s+{_NOUN}",
    r"\\boxed\{\s*(?:\\text\{)?\s*",
    r"\b(?:is|are|be)\s*[:：]\s*",  # '... the clip with more echo is: **A**'
)] + [re.compile(rf"(?:\boption\s+)?{_LETTER}\s+is\s+(?:the\s+)?(?:(?:correct|right|best|final)\b|answer\b)",
                 re.IGNORECASE),
      # "B's the clear choice"
      re.compile(rf"(?P<open>{OPEN}*)(?<![A-Za-z0-9])(?P<letter>[AB])(?P<close>{CLOSE}*)['’]s\s+(?:the\s+)?"
                 r"(?:clear|correct|right|best|obvious|only|better|final)\s+(?:choice|answer|option|pick|one)\b")]
_IS = re.compile(rf"(?:\bis|\bbe|\bit['’]s)\s+(?:(?:classified|identified|labell?ed)\s+as\s+"
                 rf"|(?:more\s+|most\s+)?likely\s+to\s+be\s+)?{_ADVERB}{_NOUN}{_LETTER}", re.IGNORECASE)
# after 'The sound is 'A'': the end, a reason ('as ...', 'indicating ...') or the option's name ('- fast', 'for fast')
_IS_END = re.compile(r"\s*(?:\([^)\n]*\)\s*)?(?:[.!\n]|$|,?\s*(?:as|because|since|indicating|meaning|which|suggesting|"
                     r"for)\b|\s*[-–—]\s*\w)", re.IGNORECASE)
_LEADING = re.compile(rf"^\s*(?P<open>{OPEN}*)\s*(?P<letter>[AaBb])(?![A-Za-z0-9]|-[A-Za-z]|['’]s\b)(?P<close>{CLOSE}*)"
                      r"(?P<delim>\s*[.:：)\-–—,](?=\s|$)|\s+(?=\()|[ \t]*(?=\n|$)|\s+)")
_WORDS_LETTER = re.compile(rf"^(?P<words>[^\n]{{1,60}}?)[\s,:;\-–—]+(?P<open>{OPEN}*)(?P<letter>[AB])"
                           rf"(?P<close>{CLOSE}*)[.!]?$")
# '... than the second clip, which is labeled as 'B'': the letter names a clip, it states no answer
_LABELLED = re.compile(r"is\s+(?:labell?ed|identified|classified)\s+as\b", re.IGNORECASE)
_CLIP_BEFORE = re.compile(r"\b(?:clip|segment|part|sound|one|speaker|event|recording|sample|tone|note)\s*,\s*which\s+$",
                          re.IGNORECASE)
_REASON = re.compile(r",?\s*\b(?:as|because|since)\b", re.IGNORECASE)
_NOT_WHEN = re.compile(r"\b(?:if|unless|whether|assuming|provided)\b|\?", re.IGNORECASE)
_CONNECTORS = {"because", "since", "as", "based", "given", "due", "which", "here"}
_POSITIONAL = re.compile(r"\b(?:first|second|former|latter|1st|2nd)\b", re.IGNORECASE)
_EDGE = 300  # a long answer commits only near its start (answer first) or its end (answer last)
_LONG = 1000


@dataclass(frozen=True)
class _Hit:
    start: int
    end: int
    letter: str
    ok: bool
    line: bool = False


def extract_choice(prompt: str, response: str, cut: bool = False) -> Judgement:
    """Read `response` to the question `prompt`: answered by rules, refused, or unparsed (left to the LLM judge).

    Precision over coverage. After reasoning is removed and a tagged final answer preferred (answer_text), these
    commit: the whole answer is a letter, decorated or repeated ("A", "b.", "**A**", "(B)", "☞A", "A A A", "AAAA");
    a short label and a letter that agree with the prompt's options ("a. keyboard", "A (first clip)", "slow, B");
    a line that is only a letter or 'Option B' (after a sentence that fits it: one that puts the question's own words
    in its clip, "... the second clip carries weaker sound intensity.\n\nB", or says the question's way of its clip
    or the opposite way of the other, "Overall, the second clip sounds louder.", "The first clip is quieter.",
    compared.py); an explicit statement ("Answer: B", "the correct answer is 'A'", "I choose B",
    "B is correct", "B's the clear choice", "... is: **A**", in the first sentence "The sound is A." and in the last
    "so it's 'B'."); a claim tied to its letter ("the sound is from the front, as indicated by the letter 'A'",
    claims.py); a clip named with its letter in the question's or the option's own words, or the question's words
    placed in a lettered clip (restated.py); "The sound is most likely 'A', guitar." (the option's own name after the
    letter). Chinese is read in the same English words (chinese.py: '答案是A' is 'answer: A', '选B' 'I choose B');
    a short Chinese answer that names no letter commits by a comparison of the clips ('第二个片段更响。' to 'Which is
    louder?'). The last commitment wins.
    Words that set the other option aside ("not a crow", "unlike ...") are no contradiction. Nothing commits
    when it is hedged or conditional ("if", "maybe", "whether"), negated, followed by the other letter in its
    sentence ("A or B"), followed by second thoughts ("wait", "actually"), when letter-only lines disagree, when
    the words next to the letter name the other option, or when a long answer is cut off or states a letter only
    in its middle (reasoning). A clear refusal with no letter anywhere is `refused`. With `cut` (the backend says
    the token limit stopped the reply) the unfinished last sentence is dropped first: only what was said in full
    before the cut is read ('A' alone, cut, may be the start of 'A piano ...').
    """
    original = answer_text(response)
    text = before_cut(gloss(original)) if cut else gloss(original)  # Chinese conclusions in the words read below
    if not cut and (_cut_off(text) or unfinished(text)):  # what coverage leaves out (states_answer) is never read
        return Judgement(chosen=None, status="unparsed", method="none")
    terms = option_terms(prompt)
    letter = _whole_answer(text, terms) or _final_commitment(text, prompt, terms, has_chinese(original))
    if letter is not None:
        return Judgement(chosen=letter, status="answered", method="rules")
    if is_refusal(text) and not states_letter(text):
        return Judgement(chosen=None, status="refused", method="rules")
    return Judgement(chosen=None, status="unparsed", method="none")


def _final_commitment(text: str, prompt: str, terms: Terms | None, chinese: bool = False) -> str | None:
    """The last commitment, if nothing casts doubt on it: no catch in it, no second thoughts after it,
    no disagreeing letter-only lines. A Chinese answer that names no letter commits by its comparisons alone."""
    hits = _commitments(text, prompt, terms)
    if chinese and not states_letter(text):
        hits = [_Hit(*compared) for compared in [stated_comparison(text, prompt)] if compared]
    if len(text) >= _LONG:  # a statement in the middle of long reasoning is not the answer
        hits = [h for h in hits if h.start < _EDGE or len(text) - h.end < _EDGE]
    if not hits:
        return None
    last = hits[-1]
    if not last.ok or len({h.letter for h in hits if h.line}) > 1 or SECOND_THOUGHTS.search(text[last.end:]):
        return None
    return last.letter


def _whole_answer(text: str, terms: Terms | None) -> str | None:
    """The answer as a whole: a lone letter, or a short label and a letter ('slow, B') that agree."""
    letter = single_letter(text)
    if letter or "\n" in text or len(words(text)) > 6:
        return letter
    m = _WORDS_LETTER.match(text)
    if m and not mentions_letter(m.group("words")) and plain(m.group("words")):
        if words_fit(m.group("letter"), m.group("words"), terms, short=True):
            return m.group("letter")
    return None


def _commitments(text: str, prompt: str, terms: Terms | None) -> list[_Hit]:
    """Every place the text commits (ok) or tries to commit with a catch (not ok), in order."""
    leading = _leading(text, terms)
    hits = [leading] if leading else []
    offset = 0
    for line in text.splitlines(keepends=True):
        letter = line_letter(line)
        if letter and line.strip():
            ok = fits_lead_in(text[:offset], letter, prompt, terms)
            hits.append(_Hit(offset, offset + len(line.rstrip()), letter, ok, line=True))
        offset += len(line)
    for pattern in _EXPLICIT:
        hits += [_statement(text, m, terms, prompt) for m in pattern.finditer(text)]
    first_end = BOUNDARY.search(text)
    for m in _IS.finditer(text[: first_end.end() if first_end else len(text)]):
        if not _names_clip(text, m):
            hits.append(_statement(text, m, terms, prompt, needs_end=True))
    core = re.sub(r"[\s.!]+$", "", text)
    last_start = sentence_at(core, len(core), len(core))[0]
    for m in _IS.finditer(text, last_start):  # a quoted final verdict: '... so the right classification is 'A'.'
        if (m.group("open") + m.group("close")).strip() and not _names_clip(text, m):
            hits.append(_statement(text, m, terms, prompt, needs_end=True))
    hits += [_Hit(*tie) for tie in tied_claims(text, prompt, terms)]
    restated = restated_choice(text, prompt, terms)
    hits += [_Hit(*restated, ok=True)] if restated else []
    by_position: dict[int, _Hit] = {}
    for hit in hits:
        if hit and (hit.start not in by_position or hit.line):
            by_position[hit.start] = hit
    return [by_position[k] for k in sorted(by_position)]


def _names_clip(text: str, m: re.Match) -> bool:
    """'... than the second clip, which is labeled as 'B'': the letter is a clip's name, not a statement."""
    return bool(_LABELLED.match(m.group()) and _CLIP_BEFORE.search(text[:m.start()]))


def before_cut(text: str) -> str:
    """A cut reply up to the end of its last finished sentence (a line break or final punctuation)."""
    ends = [m.end() for m in BOUNDARY.finditer(text.rstrip())]
    return text[:ends[-1]].strip() if ends else ""


def _cut_off(text: str) -> bool:
    """A long answer that stops mid-sentence (a token limit): whatever it said last was not its answer."""
    last_line = text.rstrip().rsplit("\n", 1)[-1]
    return len(text) >= _LONG and len(last_line) > 40 and bool(re.search(r"[\w,;:(\-'\"‘“]$", text.rstrip()))


def _leading(text: str, terms: Terms | None) -> _Hit | None:
    """'A. The first clip', '(a) the first', 'A: keyboard' on the first line: the letter, then its label."""
    m = _LEADING.match(text)
    if m is None:
        return None
    label_follows = not m.group("delim").strip() and text[m.end():m.end() + 1] not in ("", "\n", "(")
    if label_follows and not (m.group("open") or m.group("close")):
        return None  # 'A piano is playing': an article
    rest = text[m.end():].split("\n", 1)[0]
    letter = m.group("letter").upper()
    listed = any(_LEADING.match(line) and _LEADING.match(line).group("letter").upper() != letter
                 for line in text.splitlines()[1:])  # 'A: loud' over 'B: soft' lists the options
    ok = (not listed and not mentions_letter(rest, other_than=letter) and plain(rest)
          and words_fit(letter, rest, terms, short=len(words(rest)) <= 3))
    return _Hit(m.start("letter"), m.end("letter"), letter, ok)


def _statement(text: str, m: re.Match, terms: Terms | None, prompt: str, needs_end: bool = False) -> _Hit | None:
    """Check one explicit statement: hedges and negation before it, the other letter or a condition after it, a
    comparison of the clips before it in its sentence that names the other one ('第二段更响，选A')."""
    letter, start, end = m.group("letter"), m.start("letter"), m.end()
    decorated = bool(re.search(r"[^\s]", m.group("open") + m.group("close")))
    after = text[end:]
    after_colon = re.search(r"[:：=]\s*$", text[m.start():start]) and re.match(r"\s*(?:\n|$)", after)
    if letter.islower() and not decorated and not after_colon and not re.match(r"\s*[.!,;:)]", after):
        return None  # 'the answer is a sound ...': an article
    if letter == "A" and not decorated:
        word = re.match(r"\s+([a-z]+)", after)
        if word and word.group(1) not in _CONNECTORS:
            return None
    rest, terminator = _rest_of_sentence(text, end)
    if needs_end and not _IS_END.match(after) and not _names_option(after, letter.upper(), terms):
        return None
    sentence_start = max([b.end() for b in BOUNDARY.finditer(text, 0, start)] or [0])
    prefix = text[sentence_start:start]
    clause = re.split(r"[,;:]", prefix)[-1]
    letter = letter.upper()
    ok = not (HEDGE.search(prefix) or NEGATION.search(clause) or terminator == "?"
              or mentions_letter(rest, other_than=letter) or _conditional(rest)
              or (needs_end and (_POSITIONAL.search(clause) or mentions_letter(prefix, other_than=letter)))
              or not words_fit(letter, affirmed(rest), terms, short=False)
              or compared_clip(prefix, prompt, strict=False) not in (None, letter))
    return _Hit(start, end, letter, ok)


def _conditional(rest: str) -> bool:
    """Is the statement conditional ('A if the first is louder')? A 'when' inside its reason ('A. reed, as it is an
    instrument that sounds when played') is no condition on the answer."""
    reason = _REASON.search(rest)
    if reason is None:
        return bool(CONDITION.search(rest))
    return bool(CONDITION.search(rest[:reason.start()]) or _NOT_WHEN.search(rest[reason.start():]))


def _names_option(after: str, letter: str, terms: Terms | None) -> bool:
    """After 'The sound is most likely 'A'': ', guitar.' names the letter's own option (and not the other's)."""
    m = re.match(r",\s*([^,.;:!?\n(]+)", after)
    return bool(terms and m and set(words(m.group(1))) & terms[letter] and words_fit(letter, m.group(1), terms, short=False))


def _rest_of_sentence(text: str, pos: int) -> tuple[str, str]:
    """The rest of the sentence after a letter (a period right after the letter is a label's, not the end)."""
    skip = re.match(r"\s*[.:)]?", text[pos:]).end()
    m = re.compile(r"[.!?](?=\s|$)|\n").search(text, pos + skip)
    if m is None:
        return text[pos:], ""
    return text[pos:m.start()], m.group()
