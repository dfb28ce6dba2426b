"""The worker's three entry points run one command: `flask --app wsgi worker`, `python worker.py`,
and the `hirekit-worker` console script installed by `pip install .`, which works from a directory
outside the checkout."""

import datetime as dt
import json
import os
import site
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FLASK = Path(sys.executable).parent / "flask"


def worker_environment(db_url: str, redis_url: str, tmp_path) -> dict:
    return {
        **os.environ,
        "HIREKIT_DATABASE_URL": db_url,
        "HIREKIT_REDIS_URL": redis_url,
        "HIREKIT_INSTANCE_DIR": str(tmp_path),
        "HIREKIT_LOG_LEVEL": "WARNING",
    }


@pytest.mark.slow
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_flask_worker_command_serves_the_queues_of_the_app(db_url, redis_url, tmp_path):
    env = worker_environment(db_url, redis_url, tmp_path)
    done = subprocess.run(
        [str(FLASK), "--app", "wsgi", "worker", "--burst", "webhooks"],
        cwd=ROOT,
        capture_output=True,
        env={**env, "HIREKIT_LOG_LEVEL": "INFO", "TZ": "America/New_York"},
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    # the app's JSON lines, RQ's included
    entries = [json.loads(line) for line in done.stderr.splitlines()]
    started = [
        entry
        for entry in entries
        if entry["logger"] == "rq.worker" and "Listening on webhooks" in entry["message"]
    ]
    assert len(started) == 1  # once: the app's logger does not repeat through the root one
    logged_at = dt.datetime.strptime(started[0]["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=dt.timezone.utc
    )
    # UTC, not New York's time
    assert abs((dt.datetime.now(dt.timezone.utc) - logged_at).total_seconds()) < 60
    refused = subprocess.run(
        [str(FLASK), "--app", "wsgi", "worker", "--burst", "nope"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "Error: unknown queue(s): nope; configured: calls, webhooks, default"
    ]


@pytest.fixture(scope="module")
def installed_worker(tmp_path_factory) -> Path:
    """`pip install .` into a fresh virtualenv whose dependencies come from this one (no downloads):
    the console script."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    packages = next(venv.glob("lib/python*/site-packages"))
    (packages / "hirekit-dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    python = venv / "bin" / "python"
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    where = subprocess.run(
        [str(python), "-c", "import app; print(app.__file__)"],
        cwd=venv,
        capture_output=True,
        text=True,
    )
    assert where.stdout.startswith(str(packages)), where  # the installed copy, not the checkout
    return venv / "bin" / "hirekit-worker"


@pytest.mark.slow
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_installed_console_script_works_outside_the_checkout(
    installed_worker, db_url, redis_url, tmp_path
):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = worker_environment(db_url, redis_url, tmp_path)
    done = subprocess.run(
        [str(installed_worker), "--burst", "calls"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    without_redis = subprocess.run(
        [str(installed_worker), "--burst"],
        cwd=elsewhere,
        env={**env, "HIREKIT_REDIS_URL": ""},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert without_redis.returncode == 2 and without_redis.stderr.startswith(
        "Error: HIREKIT_REDIS_URL is not set"
    )
