"""Logs under gunicorn: JSON lines in UTC whatever the host's zone (TZ=America/New_York here), one
line per request (the app's hirekit.request), and gunicorn's own messages in the same JSON
format."""

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from tests.ports import free_port

ROOT = Path(__file__).resolve().parent.parent
GUNICORN = Path(sys.executable).parent / "gunicorn"


def wait_until_serving(base: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        try:
            urllib.request.urlopen(f"{base}/healthz", timeout=1)
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError("gunicorn did not start")


@pytest.mark.slow
def test_gunicorn_logs_one_utc_json_line_per_request(tmp_path):
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("HIREKIT_", "FLASK_"))},
        "TZ": "America/New_York",
        "HIREKIT_SECRET_KEY": os.environ["HIREKIT_SECRET_KEY"],
        "HIREKIT_INSTANCE_DIR": str(tmp_path),
        "HIREKIT_DATABASE_URL": f"sqlite:///{tmp_path / 'hirekit.sqlite3'}",
        "HIREKIT_WEB_WORKERS": "1",
        "HIREKIT_LOG_LEVEL": "INFO",
        "HIREKIT_PLUGINS": "jobs",
    }
    output = tmp_path / "server.log"
    with output.open("w") as sink:
        server = subprocess.Popen(
            [
                str(GUNICORN),
                "-c",
                "deploy/gunicorn.conf.py",
                "--bind",
                f"127.0.0.1:{port}",
                "wsgi:app",
            ],
            cwd=ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_until_serving(f"http://127.0.0.1:{port}", server)
            marker = "one-line-per-request"
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/healthz", headers={"X-Request-Id": marker}
            )
            assert urllib.request.urlopen(request, timeout=5).status == 200
            asked_at = dt.datetime.now(dt.timezone.utc)
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
    lines = [line for line in output.read_text().splitlines() if line.strip()]
    entries = [json.loads(line) for line in lines]  # every line, gunicorn's own included, is JSON
    assert any(
        entry["logger"] == "gunicorn.error" and "Booting worker" in entry["message"]
        for entry in entries
    )
    about_it = [line for line in lines if marker in line]
    # hirekit.request only: gunicorn's access line would repeat it
    assert len(about_it) == 1, about_it
    entry = json.loads(about_it[0])
    assert entry["logger"] == "hirekit.request" and entry["path"] == "/healthz"
    logged_at = dt.datetime.strptime(entry["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=dt.timezone.utc
    )
    assert abs((logged_at - asked_at).total_seconds()) < 60  # New York is 4-5 hours off UTC


@pytest.mark.slow
@pytest.mark.parametrize("user_agent", ["probe\\", 'say "hi" \\" then\tgo', "café\\x"])
def test_the_access_line_is_json_whatever_the_user_agent(tmp_path, user_agent):
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("HIREKIT_", "FLASK_"))},
        "HIREKIT_SECRET_KEY": os.environ["HIREKIT_SECRET_KEY"],
        "HIREKIT_ACCESS_LOG": "-",
        "HIREKIT_INSTANCE_DIR": str(tmp_path),
        "HIREKIT_DATABASE_URL": f"sqlite:///{tmp_path / 'hirekit.sqlite3'}",
        "HIREKIT_WEB_WORKERS": "1",
        "HIREKIT_LOG_LEVEL": "WARNING",
        "HIREKIT_PLUGINS": "jobs",
    }
    output = tmp_path / "server.log"
    with output.open("w") as sink:
        server = subprocess.Popen(
            [
                str(GUNICORN),
                "-c",
                "deploy/gunicorn.conf.py",
                "--bind",
                f"127.0.0.1:{port}",
                "wsgi:app",
            ],
            cwd=ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_until_serving(f"http://127.0.0.1:{port}", server)
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/healthz?from=ua-test", headers={"User-Agent": user_agent}
            )
            assert urllib.request.urlopen(request, timeout=5).status == 200
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
    lines = [line for line in output.read_text().splitlines() if "ua-test" in line]
    assert len(lines) == 1, output.read_text()
    assert json.loads(lines[0])["user_agent"] == user_agent
