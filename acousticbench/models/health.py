"""One GET /health probe, shared by everything that waits for a model server to come up."""
from __future__ import annotations

import urllib.error
import urllib.request


def health_status(root: str) -> int | None:
    """HTTP status of GET {root}/health, or None while nothing answers."""
    try:
        with urllib.request.urlopen(f"{root}/health", timeout=2) as response:
            return response.status
    except urllib.error.HTTPError as err:
        return err.code
    except (urllib.error.URLError, OSError):
        return None
