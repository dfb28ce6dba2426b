"""A chain of periodic passes (app/background/periodic.py: the reapers, the purges) outlives a
worker killed in the middle of a pass: the pass scheduled its successor before it started working.
Found by the scale-out drill (tests/drills/), where a worker host killed during a webhook reaper
pass left no reaper running anywhere until a worker restarted."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.background import periodic

ROOT = Path(__file__).resolve().parent.parent
CHAIN_ID = "test-chain-pass"
STARTED_KEY = "test-chain-pass:started"


@periodic.chained(job_id=CHAIN_ID, queue="default", interval_setting="EVENT_PURGE_INTERVAL")
def slow_pass() -> None:
    """A pass that says it started, then works far longer than the test waits."""
    from flask import current_app

    current_app.extensions["hirekit_queue"].connection.set(STARTED_KEY, "1")
    time.sleep(60)


@pytest.mark.slow
def test_a_worker_killed_during_a_pass_leaves_the_next_pass_scheduled(db_url, redis_url, tmp_path):
    from redis import Redis
    from rq import Queue
    from rq.registry import ScheduledJobRegistry

    if not db_url.startswith("postgres"):
        pytest.skip("the worker process and the test share the database: PostgreSQL")
    connection = Redis.from_url(redis_url)
    Queue("default", connection=connection).enqueue(
        "tests.test_periodic_chain.slow_pass", job_id=CHAIN_ID, result_ttl=0
    )
    env = {
        **os.environ,
        "HIREKIT_DATABASE_URL": db_url,
        "HIREKIT_REDIS_URL": redis_url,
        "HIREKIT_INSTANCE_DIR": str(tmp_path),
        "HIREKIT_SECRET_KEY": secrets.token_urlsafe(32),
        "HIREKIT_LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(ROOT),
    }
    worker = subprocess.Popen(
        [sys.executable, "worker.py", "default", "--no-scheduler"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(tmp_path / "worker.log", "wb"),
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not connection.get(STARTED_KEY):
            assert worker.poll() is None and time.monotonic() < deadline, (
                "the worker never started the pass"
            )
            time.sleep(0.1)
    finally:
        os.killpg(worker.pid, signal.SIGKILL)  # the worker dies mid-pass, as a host does
        worker.wait(timeout=10)

    scheduled = ScheduledJobRegistry("default", connection=connection).get_job_ids()
    # the next pass is due whatever became of this one
    assert CHAIN_ID + periodic.RELAY_SUFFIX in scheduled


def test_passes_take_turns_between_the_chains_two_ids(make_app, redis_url):
    """A pass never schedules its own id (RQ deletes that job when the running pass ends), and a
    pass started outside the chain (a worker's start) schedules the chain's first id, replacing any
    schedule it had: one chain."""
    from redis import Redis
    from rq import SimpleWorker
    from rq.registry import ScheduledJobRegistry

    from app.background.queue import get_queue

    app = make_app(REDIS_URL=redis_url, EVENT_PURGE_INTERVAL=3600.0)
    connection = Redis.from_url(redis_url)
    registry = ScheduledJobRegistry("default", connection=connection)
    with app.app_context():
        for job_id, successor in (
            (None, CHAIN_ID),
            (CHAIN_ID, CHAIN_ID + periodic.RELAY_SUFFIX),
            (CHAIN_ID + periodic.RELAY_SUFFIX, CHAIN_ID),
        ):
            for scheduled in registry.get_job_ids():
                registry.remove(scheduled, delete_job=True)
            queue = get_queue().queue("default")
            queue.enqueue("tests.test_periodic_chain.quick_pass", job_id=job_id, result_ttl=0)
            SimpleWorker([queue], connection=connection).work(burst=True, with_scheduler=False)
            assert registry.get_job_ids() == [successor]


@periodic.chained(job_id=CHAIN_ID, queue="default", interval_setting="EVENT_PURGE_INTERVAL")
def quick_pass() -> None:
    """A pass with nothing to do."""
