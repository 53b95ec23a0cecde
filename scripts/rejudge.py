#!/usr/bin/env python3
"""Re-judge the answers with a null `chosen` through the LLM judge, without asking the model again."""
from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from acousticbench.errors import run_command
from acousticbench.judge import Judge
from acousticbench.rescore import RunFile, change_line, rejudge, save
from acousticbench.spec import DEFAULT_JUDGE_MODEL


async def _rejudge_all(files: list[Path], model: str, endpoint: str | None) -> None:
    for path in files:
        run = RunFile.load(path)
        judge = Judge.create("llm", model, base_url=endpoint)
        try:
            records = await rejudge(run.records, judge)
        finally:
            await judge.aclose()
        save(run, records)  # judge calls are cached: an interrupted run repeats none it finished
        print(change_line(str(run.path), run.records, records))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("files", type=Path, nargs="+", help="responses.jsonl files or run folders")
    parser.add_argument("--judge-model", default=DEFAULT_JUDGE_MODEL)
    parser.add_argument("--judge-endpoint", help="OpenAI-compatible URL (default $ACOUSTICBENCH_JUDGE_ENDPOINT, else OpenAI)")
    args = parser.parse_args(argv)
    return run_command(lambda: asyncio.run(_rejudge_all(args.files, args.judge_model, args.judge_endpoint)) or 0,
                       interrupted="files not yet rewritten are unchanged; judge calls made so far are cached.")


if __name__ == "__main__":
    sys.exit(main())
