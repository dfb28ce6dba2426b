"""`make run` on a fresh instance directory: migrates, prints a key, and serves the API through gunicorn."""

import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import requests

from tests.factories import job_body

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
def test_make_run_serves_the_api_with_the_printed_key(tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIREKIT_")}
    env.update({"HIREKIT_PORT": str(port), "HIREKIT_INSTANCE_DIR": str(tmp_path / "instance"), "HIREKIT_WEB_WORKERS": "2"})
    log = tmp_path / "run.log"
    with open(log, "w") as out:
        process = subprocess.Popen(["make", "run"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            assert process.poll() is None, log.read_text()
            try:
                if requests.get(f"{base}/healthz", timeout=3).status_code == 200:
                    break
            except requests.RequestException:  # not listening yet, or workers still booting
                time.sleep(0.5)
        else:
            pytest.fail("make run did not serve /healthz in time:\n" + log.read_text())
        key = re.search(r"api key \(shown once\): (\S+)", log.read_text()).group(1)
        headers = {"Authorization": f"Bearer {key}"}
        created = requests.post(f"{base}/v1/jobs", json=job_body(), headers=headers, timeout=5)
        assert created.status_code == 201, created.text
        assert requests.get(f"{base}/v1/jobs/{created.json()['id']}", headers=headers, timeout=5).json()["title"] == created.json()["title"]
        assert requests.get(f"{base}/openapi.json", timeout=5).json()["info"]["title"] == "Hirekit"
        assert (tmp_path / "instance" / "hirekit.sqlite3").exists()
        search = requests.post(f"{base}/v1/person/search", json={"query": {"match_all": {}}, "size": 3},
                               headers={"X-API-Key": key}, timeout=10)
        assert search.status_code == 200 and search.json()["total"] == 10_000, search.text
        sandbox = requests.post(f"{base}/v1/sandbox/person/search", json={"query": {"match_all": {}}, "size": 1},
                                headers={"X-API-Key": key}, timeout=10)
        assert sandbox.status_code == 200 and sandbox.json()["total"] == 1_000, sandbox.text
        board = requests.get(f"{base}/jobs", headers=headers, timeout=5)
        assert board.status_code == 200 and created.json()["title"] in [job["title"] for job in board.json()]
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
