"""Waiting in a test for something another process or thread does, up to a deadline, with a message
naming what."""

from __future__ import annotations

import time
from pathlib import Path


def wait_until(predicate, timeout: float, what: str, log_path: Path | None = None):
    """predicate()'s first truthy answer, asked every 0.2 s; AssertionError naming `what` (and the
    tail of `log_path`, if given) once `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    while not (result := predicate()):
        if time.monotonic() > deadline:
            tail = log_path.read_text()[-3000:] if log_path and log_path.exists() else ""
            raise AssertionError(
                f"timed out after {timeout}s waiting for {what}"
                + (f"\n--- log ---\n{tail}" if tail else "")
            )
        time.sleep(0.2)
    return result
