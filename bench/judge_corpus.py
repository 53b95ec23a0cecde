#!/usr/bin/env python3
"""Measure the rules extractor on real model outputs: commit rate per model, coverage of letter-stating answers,
and a random sample of non-trivial commitments to read by hand.

  python bench/judge_corpus.py                         # the figures
  python bench/judge_corpus.py --sample 300 --seed 1   # also print a sample of non-trivial commitments
  python bench/judge_corpus.py --sample 150 --hard     # only those whose answer is more than a letter
  python bench/judge_corpus.py --uncovered 40          # letter-stating answers the rules left to the LLM
  python bench/judge_corpus.py --labels-out old.jsonl  # every label, for `judge agree` or --new-since
  python bench/judge_corpus.py --new-since old.jsonl --sample 300 --seed 1   # sample commitments old.jsonl lacked
  python bench/judge_corpus.py --changed-since old.jsonl  # every label that differs from old.jsonl's, to read

The corpus is SonicBench's released raw outputs (see its README); it is read in place and never copied.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from acousticbench.benchmarks.acoustic.judge.answer_text import answer_text  # noqa: E402
from acousticbench.benchmarks.acoustic.judge.letters import single_letter, states_answer, states_letter  # noqa: E402
from acousticbench.benchmarks.acoustic.judge.restated import NAMED_CLIP  # noqa: E402
from acousticbench.benchmarks.acoustic.judge.rules import RULES_VERSION, extract_choice  # noqa: E402
from acousticbench.benchmarks.acoustic.records import Judgement  # noqa: E402

CORPUS = REPO.parent / "shared" / "data" / "lalm_outputs"


@dataclass(frozen=True)
class Item:
    """One corpus answer, named by model/file:line (1-based)."""

    model: str
    file: str
    line: int
    prompt: str
    text: str
    reference: str | None
    prediction: str | None

    @property
    def id(self) -> str:
        return f"{self.model}/{self.file}:{self.line}"


def raw_text(row: dict) -> str:
    """The raw answer: full_prediction where the release has it (unedited, with reasoning), else prediction."""
    return row.get("full_prediction") or row.get("prediction") or ""


def load(corpus: Path) -> list[Item]:
    items = []
    for path in sorted(corpus.glob("*/*.jsonl")):
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                row = json.loads(line)
                items.append(Item(path.parent.name, path.name, number, row["prompt"], raw_text(row),
                                  row.get("reference"), row.get("prediction")))
    return items


def trivial(item: Item) -> bool:
    """A raw answer that is just a letter ('A', 'b.', '**A**')."""
    return single_letter(item.text) is not None


def figures(items: list[Item], judged: list[Judgement]) -> dict[str, dict[str, int]]:
    """Per model: n, committed, refused, answers that state a letter as their answer (states_answer: not the traces
    cut mid-sentence, counted apart) and how many of those the rules committed to."""
    table: dict[str, Counter] = defaultdict(Counter)
    for item, judgement in zip(items, judged):
        row = table[item.model]
        row["n"] += 1
        row["committed"] += judgement.status == "answered"
        row["refused"] += judgement.status == "refused"
        answer = answer_text(item.text)
        row["cut_trace"] += states_letter(answer) and not states_answer(answer)  # names letters, cut mid-reasoning
        if states_answer(answer):
            row["letter"] += 1
            row["letter_committed"] += judgement.status == "answered"
        row["nontrivial_committed"] += judgement.status == "answered" and not trivial(item)
        row["llm"] += judgement.status == "unparsed" and bool(item.text.strip())  # auto asks the LLM judge these
    return {model: dict(row) for model, row in sorted(table.items())}


def left_to_llm(items: list[Item], judged: list[Judgement]) -> Counter:
    """The letter-stating answers the rules leave, by kind: long reasoning that never concludes (cut off by a token
    limit), a clip named with its letter whose claim is not in the question's words, anything else."""
    kinds: Counter = Counter()
    for item, judgement in zip(items, judged):
        answer = answer_text(item.text)
        if judgement.status == "answered" or not states_letter(answer):
            continue
        kinds["trace cut off" if len(answer) >= 1000 else "first clip (A) ..." if NAMED_CLIP.match(answer)
              else "other"] += 1
    return kinds


def print_figures(table: dict[str, dict[str, int]]) -> None:
    total: Counter = Counter()
    print(f"rules {RULES_VERSION}")
    print(f"{'model':24} {'n':>6} {'commit':>7} {'rate':>6} {'refused':>7} {'letter':>6} {'covered':>7} {'cover%':>7}")
    for model, row in list(table.items()) + [("ALL", None)]:
        if row is None:
            row = dict(total)
        else:
            total.update(row)
        letter = row.get("letter", 0)
        cover = 100 * row.get("letter_committed", 0) / letter if letter else float("nan")
        print(f"{model:24} {row['n']:6d} {row.get('committed', 0):7d} {100 * row.get('committed', 0) / row['n']:5.1f}% "
              f"{row.get('refused', 0):7d} {letter:6d} {row.get('letter_committed', 0):7d} {cover:6.2f}%")
    total_n = sum(row["n"] for row in table.values())
    print(f"left out of 'letter': {sum(r.get('cut_trace', 0) for r in table.values())} traces cut mid-sentence "
          "that name letters while reasoning")
    print(f"LLM judge calls per 1,000 answers (--judge auto): {1000 * sum(r.get('llm', 0) for r in table.values()) / total_n:.1f}")


def show(item: Item, judgement: Judgement, limit: int = 700) -> None:
    answer = answer_text(item.text)
    print(f"=== {item.id}  -> {judgement.chosen or judgement.status}   (ref {item.reference})")
    print(f"  prompt: {item.prompt[:220]!r}")
    if answer != item.text.strip():
        print(f"  raw tail: {item.text[-160:]!r}")
    print(f"  answer: {answer[:limit]!r}{' ...' if len(answer) > limit else ''}")


def print_changes(pairs: list[tuple[Item, Judgement]], old: Path) -> None:
    """Every answer whose label is not the one in `old` (a --labels-out file), each with its answer to read."""
    with old.open(encoding="utf-8") as handle:
        before = {row["id"]: row["chosen"] or row["judge_status"] for row in map(json.loads, handle)}
    changed = [(i, j) for i, j in pairs if i.id in before and before[i.id] != (j.chosen or j.status)]
    kinds = Counter("new" if before[i.id] in ("unparsed", "refused") else "lost" if j.chosen is None else "changed"
                    for i, j in changed)
    print(f"\n{len(changed)} labels differ from {old} ({dict(kinds)})")
    for item, judgement in changed:
        print(f"--- was {before[item.id]}")
        show(item, judgement)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--sample", type=int, default=0, help="print N random non-trivial commitments")
    parser.add_argument("--hard", action="store_true",
                        help="sample only commitments whose answer is more than a letter once reasoning is removed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--uncovered", type=int, default=0, help="print N letter-stating answers not committed")
    parser.add_argument("--model", help="only this model")
    parser.add_argument("--labels-out", type=Path, help="write every answer's label as JSONL (id, chosen, judge_status)")
    parser.add_argument("--new-since", type=Path, help="sample only commitments that this --labels-out file lacked")
    parser.add_argument("--changed-since", type=Path,
                        help="print every answer whose label differs from this --labels-out file's (new, lost, changed)")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"corpus not found: {args.corpus} (pass --corpus DIR)", file=sys.stderr)
        return 2
    items = [i for i in load(args.corpus) if args.model in (None, i.model)]
    judged = [extract_choice(item.prompt, item.text) for item in items]
    print_figures(figures(items, judged))
    print("left to the LLM judge:", dict(left_to_llm(items, judged).most_common()))
    rng = random.Random(args.seed)
    pairs = list(zip(items, judged))
    if args.labels_out:
        with args.labels_out.open("w", encoding="utf-8") as out:
            for item, judgement in pairs:
                out.write(json.dumps({"id": item.id, "chosen": judgement.chosen, "judge_status": judgement.status,
                                      "judge_method": judgement.method}) + "\n")
    before = None
    if args.new_since:
        with args.new_since.open(encoding="utf-8") as handle:
            before = {row["id"] for row in map(json.loads, handle) if row["judge_status"] == "answered"}
    if args.sample:
        pool = [(i, j) for i, j in pairs if j.status == "answered" and not trivial(i)
                and not (args.hard and single_letter(answer_text(i.text))) and (before is None or i.id not in before)]
        kind = "newly committed" if before is not None else "non-trivial commitments"
        print(f"\nsample of {min(args.sample, len(pool))} from {len(pool)} {kind} (seed {args.seed})")
        for item, judgement in rng.sample(pool, min(args.sample, len(pool))):
            show(item, judgement)
    if args.changed_since:
        print_changes(pairs, args.changed_since)
    if args.uncovered:
        pool = [(i, j) for i, j in pairs if j.status != "answered" and states_answer(answer_text(i.text))]
        print(f"\n{min(args.uncovered, len(pool))} of {len(pool)} letter-stating answers left to the LLM judge")
        for item, judgement in rng.sample(pool, min(args.uncovered, len(pool))):
            show(item, judgement, limit=400)
    return 0


if __name__ == "__main__":
    sys.exit(main())
