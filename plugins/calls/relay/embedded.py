"""The relay beside gunicorn for `make run`'s embedded default: gunicorn's arbiter starts the relay
process once it is ready and stops it when it exits, so the one command serves both
(HIREKIT_RELAY_EMBEDDED=1). In production the relay is its own service
(deploy/systemd/hirekit-relay.service) and this stays off."""

from __future__ import annotations

import os
import subprocess
import sys

STOP_SECONDS = 10


def enabled(environ=os.environ) -> bool:
    return environ.get("HIREKIT_RELAY_EMBEDDED", "").lower() in ("1", "true", "yes", "on")


def start(log) -> subprocess.Popen | None:
    """The relay process, started with this process's environment (so its settings); None when
    off."""
    if not enabled():
        return None
    process = subprocess.Popen(
        [sys.executable, "-m", "plugins.calls.relay.server"], env=dict(os.environ)
    )
    log.info("relay started beside gunicorn (pid %s)", process.pid)
    return process


def stop(process: subprocess.Popen | None, log) -> None:
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        log.warning("relay (pid %s) did not stop within %s s: killed", process.pid, STOP_SECONDS)
        process.kill()
        process.wait()
