"""One GET /health probe, and the free-port probe, shared by everything that starts or waits for a model server."""
from __future__ import annotations

import socket
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


def port_taken(port: int) -> bool:
    """Whether something listens on 127.0.0.1:port. SO_REUSEADDR: the TIME-WAIT sockets a stopped server leaves for
    about a minute do not count (a server binding there succeeds), while a listening socket still refuses the bind."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False
