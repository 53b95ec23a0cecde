"""`acousticbench judge extract FILE.jsonl`: add the judged option to every line of a JSONL file.
`acousticbench judge agree FILE_A FILE_B`: how far two labelings of the same answers agree."""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from acousticbench.core.errors import AcousticBenchError, UserError
from acousticbench.benchmarks.acoustic.judge.jsonl import jsonl_rows
from acousticbench.core.records import Reply
from acousticbench.benchmarks.acoustic.judge.modes import DEFAULT_JUDGE_MODEL

# where the raw answer may be: our responses.jsonl, then the public corpora (the unedited text first)
TEXT_FIELDS = ("response", "full_prediction", "prediction")


def read_lines(path: Path) -> list[dict[str, Any]]:
    """Every line as an object with a 'prompt'; a bad line is a UserError naming the file and the line."""
    rows = []
    for number, row in jsonl_rows(path):
        if not isinstance(row, dict) or not isinstance(row.get("prompt"), str):
            raise UserError(f"{path}:{number}: needs a 'prompt' string.")
        if not any(field in row for field in TEXT_FIELDS):
            raise UserError(f"{path}:{number}: needs one of {', '.join(TEXT_FIELDS)}.")
        rows.append(row)
    return rows


def response_text(row: dict[str, Any]) -> str | None:
    """The raw answer: 'response' if the line has it, else a non-empty full_prediction, else prediction."""
    if "response" in row:
        return row["response"]
    return row.get("full_prediction") or row.get("prediction")


async def judge_rows(rows: list[dict[str, Any]], judge: Any) -> list[dict[str, Any]]:
    """Each row with chosen, judge_method and judge_status added (and judge_error when the judge failed)."""
    from acousticbench.benchmarks.acoustic.judge import JudgeFailed

    async def one(row: dict[str, Any]) -> dict[str, Any]:
        text = response_text(row)
        if not isinstance(text, str):  # a failed request has no text to judge
            return {**row, "chosen": None, "judge_method": "none", "judge_status": "error"}
        try:
            judgement, error = await judge.judge(row["prompt"], Reply(text=text)), None
        except JudgeFailed as err:
            judgement, error = err.judgement, str(err)
        out = {**row, "chosen": judgement.chosen, "judge_method": judgement.method, "judge_status": judgement.status}
        return {**out, "judge_error": error} if error else out

    try:
        return await asyncio.gather(*(one(row) for row in rows))
    finally:
        await judge.aclose()

def judged(file: Path | str, *, rules_only: bool = False, judge_model: str = DEFAULT_JUDGE_MODEL,
           endpoint: str | None = None, concurrency: int = 8) -> list[dict[str, Any]]:
    """Every line of a JSONL file of answers with the judged option added (`judge extract` writes them as JSONL)."""
    from acousticbench.benchmarks.acoustic.judge import Judge

    rows = read_lines(Path(file))
    judge = Judge("rules") if rules_only else Judge.create("auto", judge_model, endpoint, concurrency=concurrency)
    judge.check_retirement()  # a retired judge stops here with its fix, not with a failure on every line
    return asyncio.run(judge_rows(rows, judge))


def labelings_agreement(first: Path | str, second: Path | str):
    """How far two labelings of the same answers agree, paired by record id (`judge agree` prints its report)."""
    from acousticbench.benchmarks.acoustic.judge.agreement import agreement, read_labels

    return agreement(read_labels(Path(first)), read_labels(Path(second)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="acousticbench judge", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    extract = commands.add_parser("extract", help="judge every line of FILE.jsonl; the result goes to stdout")
    extract.add_argument("file", type=Path)
    extract.add_argument("--rules-only", action="store_true", help="no LLM judge: what the rules leave stays null")
    extract.add_argument("--judge-model", default=DEFAULT_JUDGE_MODEL)
    extract.add_argument("--judge-endpoint", "--endpoint", dest="endpoint",  # a run's name for it, and the old one
                         help="an OpenAI-compatible base URL for the judge model")
    extract.add_argument("--concurrency", type=int, default=8)
    agree = commands.add_parser("agree", help="agreement of two labelings (responses.jsonl of runs, or extract output), "
                                              "paired by record id: counts, A/B/none confusion, Cohen's kappa")
    agree.add_argument("first", type=Path)
    agree.add_argument("second", type=Path)
    agree.add_argument("--show", type=int, default=50, help="list at most N disagreeing ids (default 50)")
    args = parser.parse_args(argv)
    try:
        if args.command == "agree":
            from acousticbench.benchmarks.acoustic.judge.agreement import report

            print(report(labelings_agreement(args.first, args.second), args.first.name, args.second.name, args.show))
            return 0
        for row in judged(args.file, rules_only=args.rules_only, judge_model=args.judge_model, endpoint=args.endpoint,
                          concurrency=args.concurrency):
            sys.stdout.write(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")
    except AcousticBenchError as err:
        print(f"error: {err}", file=sys.stderr)
        return err.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
