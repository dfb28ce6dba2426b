"""Who starts the periodic passes (reapers): the worker process only, never the app factory.

Every gunicorn worker and every CLI command builds the app; none of them may talk to Redis just by
starting (a CLI command would otherwise wait seconds on a Redis that is down). `python worker.py`
starts the periodic jobs its enabled plugins declare for the queues it serves.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from app.plugins import load_plugin

ROOT = Path(__file__).resolve().parent.parent
SLACK = 10  # times a time bound that a loaded machine may need


class SilentRedis:
    """A TCP listener on 127.0.0.1 that accepts connections, counts them and never answers: a Redis
    that hangs."""

    def __init__(self):
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(16)
        self.socket.settimeout(0.2)
        self.port = self.socket.getsockname()[1]
        self.accepted: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            try:
                connection, _ = self.socket.accept()
            except OSError:
                continue
            self.accepted.append(connection)  # held open, unanswered, until close()

    def connections(self) -> int:
        """Every connection made so far, the ones still waiting in the listen queue included (stops
        accepting)."""
        self._stop.set()
        self._thread.join(5)
        self.socket.setblocking(False)
        while True:
            try:
                self.accepted.append(self.socket.accept()[0])
            except (BlockingIOError, OSError):
                return len(self.accepted)

    def close(self):
        self._stop.set()
        self._thread.join(5)
        for connection in self.accepted:
            connection.close()
        self.socket.close()


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def cli_env(tmp_path, redis_url: str) -> dict:
    return {
        **os.environ,
        "HIREKIT_REDIS_URL": redis_url,
        "HIREKIT_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.sqlite3'}",
        "HIREKIT_INSTANCE_DIR": str(tmp_path),
        "HIREKIT_SECRET_KEY": secrets.token_urlsafe(32),
        "HIREKIT_LOG_LEVEL": "WARNING",
    }


def timed_flask(args, env) -> tuple[float, subprocess.CompletedProcess]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "wsgi", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return time.monotonic() - started, done


def test_cli_command_with_redis_down_answers_at_once_and_never_connects(tmp_path):
    """`flask tenants list` with Redis on a closed port, or on a listener that never answers, opens
    no connection and answers as a command with no Redis configured does (within SLACK times its
    time, for a loaded machine: a command that waited on the silent Redis would wait for the
    subprocess timeout)."""
    embedded = cli_env(tmp_path, "")
    _, migrated = timed_flask(["db", "upgrade"], embedded)
    assert migrated.returncode == 0, migrated.stderr
    baseline, listed = timed_flask(["tenants", "list"], embedded)
    assert listed.returncode == 0, listed.stderr

    took, listed = timed_flask(
        ["tenants", "list"], cli_env(tmp_path, f"redis://127.0.0.1:{closed_port()}/0")
    )
    assert listed.returncode == 0, listed.stderr
    assert took < SLACK * baseline, (
        f"tenants list took {took:.2f}s with Redis down, {baseline:.2f}s without Redis"
    )

    silent = SilentRedis()
    try:
        for args in (["tenants", "list"], ["db", "upgrade"]):
            took, done = timed_flask(args, cli_env(tmp_path, f"redis://127.0.0.1:{silent.port}/0"))
            assert done.returncode == 0, done.stderr
            assert took < SLACK * baseline, (
                f"{' '.join(args)} took {took:.2f}s on a silent Redis, {baseline:.2f}s without"
            )
        assert silent.connections() == 0
    finally:
        silent.close()


def test_building_the_app_enqueues_nothing(make_app, redis_url):
    from redis import Redis
    from rq import Queue
    from rq.registry import ScheduledJobRegistry

    make_app(REDIS_URL=redis_url, WEBHOOK_REAPER_INTERVAL=1.0, CALL_REAPER_INTERVAL=1.0)
    connection = Redis.from_url(redis_url)
    for name in ("calls", "webhooks", "default"):
        assert Queue(name, connection=connection).count == 0
        assert ScheduledJobRegistry(name, connection=connection).count == 0


def test_plugins_declare_their_queues_and_periodic_jobs():
    declared = {
        name: (
            load_plugin(name).tasks.queues,
            {(job.func, job.queue) for job in load_plugin(name).tasks.periodic},
        )
        for name in ("calls", "webhooks")
    }
    assert declared == {
        "calls": (("calls",), {("plugins.calls.tasks.reap_stalled_calls", "calls")}),
        "webhooks": (
            ("webhooks",),
            {("plugins.webhooks.tasks.reap_stalled_deliveries", "webhooks")},
        ),
    }


def run_worker_burst(db_url: str, redis_url: str, tmp_path, *queues: str) -> None:
    env = {
        **os.environ,
        "HIREKIT_DATABASE_URL": db_url,
        "HIREKIT_REDIS_URL": redis_url,
        "HIREKIT_INSTANCE_DIR": str(tmp_path),
        "HIREKIT_SECRET_KEY": secrets.token_urlsafe(32),
        "HIREKIT_LOG_LEVEL": "WARNING",
        "HIREKIT_WEBHOOK_REAPER_INTERVAL": "30",
        "HIREKIT_CALL_REAPER_INTERVAL": "30",
    }
    done = subprocess.run(
        [sys.executable, "worker.py", "--burst", *queues],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_the_worker_starts_the_reapers_of_the_queues_it_serves(db_url, redis_url, tmp_path):
    """A worker on `webhooks` runs a webhook reaper pass at start, which schedules the next; the
    calls reaper is left to a worker on `calls`."""
    from redis import Redis
    from rq import Queue
    from rq.registry import ScheduledJobRegistry

    from plugins.calls.tasks import REAPER_JOB_ID as CALLS_REAPER
    from plugins.webhooks.tasks import REAPER_JOB_ID as WEBHOOKS_REAPER

    connection = Redis.from_url(redis_url)
    run_worker_burst(db_url, redis_url, tmp_path, "webhooks")
    assert ScheduledJobRegistry("webhooks", connection=connection).get_job_ids() == [
        WEBHOOKS_REAPER
    ]
    assert ScheduledJobRegistry("calls", connection=connection).get_job_ids() == []
    assert Queue("calls", connection=connection).count == 0

    run_worker_burst(db_url, redis_url, tmp_path, "calls")
    assert ScheduledJobRegistry("calls", connection=connection).get_job_ids() == [CALLS_REAPER]
