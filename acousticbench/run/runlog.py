"""run.log: a run folder's plain-text log of what a `tee`d terminal cannot show: when the run started (or resumed)
and with which settings, each failed attempt and what followed it, each question that failed for good, and how the
run ended. One timestamped line per event, flushed as written, appended to on --resume."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from acousticbench.core.jsontext import json_text

RUN_LOG = "run.log"


class RunLog:
    def __init__(self, run_dir: Path):
        self.path = run_dir / RUN_LOG
        try:
            self._fh = self.path.open("a", encoding="utf-8", errors="backslashreplace")  # a reply's invalid text
        except OSError:
            self._fh = None  # a log that cannot be written must not stop a run whose records can

    def line(self, text: str) -> None:
        if self._fh is None:
            return
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        try:
            for part in text.splitlines() or [""]:
                self._fh.write(f"{stamp} {part}\n")
            self._fh.flush()
        except OSError:  # a full disk: the records' writer reports it
            pass

    def start(self, label: str, config: dict[str, Any], kept: int) -> None:
        """The first lines of a run (or of one more session of a resumed run): what it is, how it was started."""
        self.line(f"{'resumed' if kept else 'started'}: {label}" + (f", {kept} records kept" if kept else ""))
        self.line(f"command: {config.get('command', '')}")
        self.line(f"settings: {json.dumps(config.get('settings', {}), sort_keys=True, allow_nan=False)}")
        backend = config.get("backend", {})
        self.line(f"backend: {json_text(backend, sort_keys=True, default=str)}")
        at_most = config.get("n_items_at_most")
        self.line(f"items: {config.get('n_items', '?')}" if at_most is None else
                  f"items: made as the run goes, at most {at_most}")

    def close(self) -> None:
        if self._fh is not None:
            fh, self._fh = self._fh, None
            try:
                fh.close()
            except OSError:  # its last lines on a full disk: the records' writer reports it, naming its file
                pass
