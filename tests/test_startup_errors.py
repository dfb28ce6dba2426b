"""An operator's first hour: what stops the server, a worker or a command is one `Error:` line,
never a traceback: a taken port, no server secret (checked once by gunicorn's arbiter, before any
worker forks), a misspelt database URL scheme, a database that does not exist or refuses
connections; a second `demo setup` (`make run`) issues no new key; the worker waits for Redis with a
retry line (or, with --burst, exits with one line)."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.ports import free_port

ROOT = Path(__file__).resolve().parent.parent
PG_URL = os.environ.get("HIREKIT_TEST_DATABASE_URL", "")


def clean_env(tmp_path: Path, **settings: str) -> dict:
    env = {name: value for name, value in os.environ.items() if not name.startswith("HIREKIT_")}
    env.update(
        {
            "HIREKIT_INSTANCE_DIR": str(tmp_path / "instance"),
            "HIREKIT_LOG_LEVEL": "WARNING",
            **settings,
        }
    )
    return env


def error_lines(output: str) -> list[str]:
    """The lines that are not gunicorn's or the app's JSON log lines, nor blank."""
    return [line for line in output.splitlines() if line.strip() and not line.startswith("{")]


def only_one_error_line(done: subprocess.CompletedProcess, *expected: str) -> str:
    output = done.stdout + done.stderr
    lines = error_lines(done.stderr)
    assert "Traceback" not in output and len(lines) == 1 and lines[0].startswith("Error: "), output
    assert all(text in lines[0] for text in expected), lines[0]
    return lines[0]


def flask(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "flask", "--app", "wsgi", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def gunicorn(env: dict, port: int, workers: int = 3) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            "deploy/gunicorn.conf.py",
            "--workers",
            str(workers),
            "--bind",
            f"127.0.0.1:{port}",
            "wsgi:app",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.slow
def test_a_taken_port_stops_gunicorn_with_one_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = gunicorn(clean_env(tmp_path, HIREKIT_SECRET_KEY=secrets.token_urlsafe(48)), port)
    assert done.returncode == 1
    only_one_error_line(done, f"127.0.0.1:{port} is already in use", f"HIREKIT_PORT={port + 1}")
    assert "Connection in use" not in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    "setting, expected",
    [
        ({}, "HIREKIT_SECRET_KEY is not set"),
        ({"HIREKIT_SECRET_KEY": "short"}, "each key needs at least 32"),
        (
            {
                "HIREKIT_SECRET_KEY": secrets.token_urlsafe(48),
                "HIREKIT_DATABASE_URL": "postgress://db/hirekit",
            },
            "HIREKIT_DATABASE_URL has the scheme 'postgress'",
        ),
        (
            {"HIREKIT_SECRET_KEY": secrets.token_urlsafe(48), "HIREKIT_PLUGINS": "applications"},
            "applications",
        ),
        (
            {
                "HIREKIT_SECRET_KEY": secrets.token_urlsafe(48),
                "HIREKIT_MCP_HELD_CONFIRMATIONS": "4",
                "HIREKIT_WEB_THREADS": "4",
            },
            "HIREKIT_MCP_HELD_CONFIRMATIONS (4) must be below HIREKIT_WEB_THREADS (4)",
        ),
    ],
)
def test_a_configuration_no_worker_could_run_stops_the_arbiter_once_before_any_worker_forks(
    tmp_path, setting, expected
):
    done = gunicorn(clean_env(tmp_path, **setting), free_port(), workers=3)
    assert done.returncode == 1
    only_one_error_line(done, expected)
    assert "Booting worker" not in done.stderr


@pytest.mark.parametrize(
    "url, expected",
    [
        (f"postgresql://hirekit:s3cret@127.0.0.1:{closed_port()}/hirekit", "Connection refused"),
        ("postgress://127.0.0.1/hirekit", "HIREKIT_DATABASE_URL has the scheme 'postgress'"),
        # not the URL: its closed port differs between pytest-xdist workers' collections
    ],
    ids=["refused", "misspelt-scheme"],
)
def test_db_upgrade_on_a_database_that_refuses_or_a_misspelt_scheme_is_one_line(
    tmp_path, url, expected
):
    done = flask(["db", "upgrade"], clean_env(tmp_path, HIREKIT_DATABASE_URL=url))
    assert done.returncode == 1
    line = only_one_error_line(done, expected)
    assert "s3cret" not in line


@pytest.mark.skipif(not PG_URL, reason="PostgreSQL tests need HIREKIT_TEST_DATABASE_URL")
def test_db_upgrade_and_demo_setup_on_a_database_that_does_not_exist_are_one_line(tmp_path):
    missing = f"hirekit_missing_{uuid.uuid4().hex[:8]}"
    url = PG_URL.rsplit("/", 1)[0] + f"/{missing}"
    # `make run` with a stray DATABASE_URL runs demo setup
    for command in (["db", "upgrade"], ["demo", "setup"]):
        done = flask(command, clean_env(tmp_path, HIREKIT_DATABASE_URL=url))
        assert done.returncode == 1
        only_one_error_line(done, f'database "{missing}" does not exist', "createdb")


def test_a_second_demo_setup_issues_no_new_key_and_says_where_keys_come_from(tmp_path):
    env = clean_env(
        tmp_path,
        HIREKIT_DATABASE_URL=f"sqlite:///{tmp_path / 'demo.sqlite3'}",
        HIREKIT_PLUGINS="jobs",
    )
    first = flask(["demo", "setup"], env)
    assert first.returncode == 0 and first.stdout.count("api key (shown once): ") == 1, (
        first.stdout + first.stderr
    )
    second = flask(["demo", "setup"], env)
    assert second.returncode == 0 and "api key (shown once)" not in second.stdout, second.stdout
    assert "tenant 'demo' already has 1 active key(s)" in second.stdout
    assert "`flask --app wsgi keys create demo`" in second.stdout
    listed = flask(["keys", "list", "demo"], env)
    assert len(listed.stdout.strip().splitlines()) == 2  # the header and the first run's key


@pytest.mark.slow
def test_a_burst_worker_with_redis_down_exits_with_one_line(tmp_path):
    env = clean_env(
        tmp_path,
        HIREKIT_SECRET_KEY=secrets.token_urlsafe(48),
        HIREKIT_DATABASE_URL=f"sqlite:///{tmp_path / 'w.sqlite3'}",
        HIREKIT_REDIS_URL=f"redis://:s3cret@127.0.0.1:{closed_port()}/0",
    )
    done = subprocess.run(
        [sys.executable, "worker.py", "--burst"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    line = only_one_error_line(done, "is not reachable", "HIREKIT_REDIS_URL")
    assert "s3cret" not in line and ":***@" in line


@pytest.mark.slow
def test_a_worker_started_before_redis_waits_for_it_then_starts(tmp_path):
    port = free_port()
    env = clean_env(
        tmp_path,
        HIREKIT_SECRET_KEY=secrets.token_urlsafe(48),
        HIREKIT_DATABASE_URL=f"sqlite:///{tmp_path / 'w.sqlite3'}",
        HIREKIT_REDIS_URL=f"redis://127.0.0.1:{port}/0",
        HIREKIT_LOG_LEVEL="INFO",
    )
    # a migrated database: once Redis answers, the worker's periodic passes run against it at once
    migrated = flask(["db", "upgrade"], env)
    assert migrated.returncode == 0, migrated.stderr
    log = tmp_path / "worker.log"
    with open(log, "w") as out:
        worker = subprocess.Popen(
            [sys.executable, "worker.py"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    redis = None
    try:
        wait_for(lambda: "waiting for it, next try in" in log.read_text(), worker, log)
        assert worker.poll() is None and "Traceback" not in log.read_text()
        redis = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(lambda: "answers: starting" in log.read_text(), worker, log)
        assert worker.poll() is None and "Traceback" not in log.read_text()
    finally:
        worker.terminate()
        worker.wait(timeout=60)
        if redis is not None:
            redis.terminate()
            redis.wait(timeout=30)


def wait_for(condition, process, log: Path, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert process.poll() is None, log.read_text()
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)
