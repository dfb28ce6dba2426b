"""The app under a real gunicorn started as deploy/gunicorn.conf.py configures it, and raw HTTP
exchanges with it (for requests no client library would send: malformed, oversized)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import requests

from tests.ports import free_port

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def gunicorn(
    env: dict[str, str],
    *,
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
    args: tuple[str, ...] = (),
):
    """(process, base URL, port) of `gunicorn -c deploy/gunicorn.conf.py wsgi:app` with one worker
    and `env` over the test process's environment, serving once /healthz answers; stopped (SIGTERM
    to its process group) on exit."""
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            "deploy/gunicorn.conf.py",
            "--workers",
            "1",
            "--bind",
            f"127.0.0.1:{port}",
            *args,
            "wsgi:app",
        ],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, "gunicorn exited at start"
            try:
                requests.get(f"{base}/healthz", timeout=2)
                break
            except requests.RequestException:
                assert time.monotonic() < deadline, "gunicorn did not start"
                time.sleep(0.2)
        yield process, base, port
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


class RawAnswer:
    """An HTTP/1.1 answer read off the socket: status, headers (lower-case names) and body."""

    def __init__(self, raw: bytes):
        head, _, self.body = raw.partition(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        self.status_line = status_line
        self.status = int(status_line.split(" ", 2)[1])
        self.headers = {
            name.strip().lower(): value.strip()
            for name, _, value in (line.partition(":") for line in header_lines)
        }

    def json(self):
        return json.loads(self.body)


def exchange(port: int, request: bytes, timeout: float = 10) -> RawAnswer:
    """Send `request` as it is and read the answer until the server closes the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    return RawAnswer(received)
