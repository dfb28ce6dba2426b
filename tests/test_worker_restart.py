"""A worker killed and restarted 2 s later gets its scheduler back within seconds, not at RQ's
10-minute maintenance pass.

RQ's scheduler lock (`rq:scheduler-lock:<queue>`, 61 s TTL refreshed every second) outlives a
SIGKILLed worker; the replacement's StandbyScheduler (app/background/worker_scheduler.py) takes it
over once the dead holder has been silent for STALE_AFTER_SECONDS. Lock logic on real Redis first,
then the drill on real processes (PostgreSQL + Redis).
"""

from __future__ import annotations

import datetime as dt
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from app.data.db import database
from app.background.worker_scheduler import STALE_AFTER_SECONDS, StandbyScheduler
from plugins.webhooks.models import WebhookDelivery
from tests.conftest import POSTGRES_URL
from tests.ports import free_port
from tests.waiting import wait_until
from tests.test_webhooks_delivery import stop_worker
from tests.webhook_helpers import create_webhook, emit, verified_payload

ROOT = Path(__file__).resolve().parent.parent
LOCK = StandbyScheduler.get_locking_key("webhooks")


def redis(redis_url):
    from redis import Redis

    return Redis.from_url(redis_url)


def scheduler(redis_url, *queues) -> StandbyScheduler:
    return StandbyScheduler(list(queues or ["webhooks"]), connection=redis(redis_url))


def left_by_holder_silent_for(connection, holder: str, seconds: float) -> None:
    """The lock as a holder leaves it when its last heartbeat (which sets the TTL to 61 s) was
    `seconds` ago."""
    connection.set(LOCK, holder, px=int((61 - seconds) * 1000))


def test_a_lock_whose_holder_went_silent_is_taken_over(redis_url):
    connection = redis(redis_url)
    left_by_holder_silent_for(connection, "dead-scheduler", STALE_AFTER_SECONDS + 1)
    standby = scheduler(redis_url)
    assert standby.acquire_locks() == {"webhooks"}
    assert connection.get(LOCK).decode() == standby.name and connection.ttl(LOCK) > 60


def test_a_lock_refreshed_recently_is_left_to_its_holder(redis_url):
    connection = redis(redis_url)
    left_by_holder_silent_for(connection, "live-scheduler", STALE_AFTER_SECONDS - 5)
    standby = scheduler(redis_url)
    assert standby.acquire_locks() == set()
    assert connection.get(LOCK).decode() == "live-scheduler"


def test_of_two_standbys_only_one_takes_over_and_the_silent_holder_lets_go(redis_url):
    connection = redis(redis_url)
    old = scheduler(redis_url)
    assert old.acquire_locks() == {"webhooks"}
    connection.pexpire(LOCK, (61 - STALE_AFTER_SECONDS - 1) * 1000)  # the old holder froze
    first, second = scheduler(redis_url), scheduler(redis_url)
    assert first.acquire_locks() == {"webhooks"}
    assert second.acquire_locks() == set()
    old.heartbeat()  # the frozen holder wakes: its heartbeat runs before any enqueue pass
    assert old.acquired_locks == set() and connection.get(LOCK).decode() == first.name


def test_a_standby_retries_its_locks_every_few_seconds_not_every_ten_minutes(redis_url):
    standby = scheduler(redis_url)
    redis(redis_url).set(LOCK, "live-scheduler", ex=61)
    standby.acquire_locks()
    assert not standby.should_reacquire_locks
    standby.lock_acquisition_time -= dt.timedelta(seconds=standby.lock_retry_seconds)
    assert standby.should_reacquire_locks


# --- the drill: SIGKILL the worker, restart it 2 s later, the receiver comes back
# -------------------------------------

EVENTS = 20
RETRY_SECONDS = 3  # a short retry schedule (HIREKIT_WEBHOOK_RETRY_SCHEDULE) that outlasts the drill
RETRIES = {"WEBHOOK_RETRY_SCHEDULE": [RETRY_SECONDS] * 100, "WEBHOOK_RETRY_JITTER": 0.0}


def start_worker(db_url: str, redis_url: str, log_path: Path) -> subprocess.Popen:
    env = {
        **os.environ,
        "HIREKIT_DATABASE_URL": db_url,
        "HIREKIT_REDIS_URL": redis_url,
        "HIREKIT_INSTANCE_DIR": str(log_path.parent),
        "HIREKIT_SECRET_KEY": secrets.token_urlsafe(32),
        "HIREKIT_WEBHOOK_ALLOW_PRIVATE": "true",
        "HIREKIT_WEBHOOK_TIMEOUT": "2",
        "HIREKIT_WEBHOOK_LEASE_GRACE": "0.5",
        "HIREKIT_LOG_LEVEL": "INFO",
        "HIREKIT_WEBHOOK_RETRY_SCHEDULE": ",".join([str(RETRY_SECONDS)] * 100),
        "HIREKIT_WEBHOOK_RETRY_JITTER": "0",
    }
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            [sys.executable, "worker.py", "webhooks"],
            cwd=ROOT,
            env=env,
            start_new_session=True,
            stdout=log,
            stderr=subprocess.STDOUT,
        )


@pytest.mark.slow
@pytest.mark.skipif(
    not POSTGRES_URL, reason="the restart drill runs on PostgreSQL: set HIREKIT_TEST_DATABASE_URL"
)
@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_a_worker_killed_and_restarted_2s_later_delivers_everything_once_the_receiver_is_back(
    make_app, db_url, redis_url, tenant_a, tmp_path
):
    port = free_port()  # the receiver is down: nothing listens there yet
    app = make_app(REDIS_URL=redis_url, **RETRIES)
    client = app.test_client()
    webhook = create_webhook(client, tenant_a, f"http://127.0.0.1:{port}/hook")
    connection = redis(redis_url)
    log_path = tmp_path / "worker.log"
    first = start_worker(db_url, redis_url, log_path)
    replacement = receiver = None

    def attempted():
        with app.app_context(), database.connection_context():
            return (
                WebhookDelivery.select().where(WebhookDelivery.attempt_count >= 1).count() == EVENTS
            )

    def undelivered():
        with app.app_context(), database.connection_context():
            return WebhookDelivery.select().where(WebhookDelivery.status != "succeeded").count()

    try:
        wait_until(
            lambda: connection.exists(LOCK), 30, "the first worker's scheduler lock", log_path
        )
        event_ids = {str(emit(app, tenant_a).event_id) for _ in range(EVENTS)}
        wait_until(attempted, 30, "a first, failed attempt at every delivery", log_path)
        wait_until(
            lambda: connection.zcard("rq:scheduled:webhooks"), 10, "a scheduled retry", log_path
        )

        # the worker and its scheduler, as an OOM or cgroup kill takes both
        stop_worker(first, signal.SIGKILL)
        assert connection.exists(LOCK)  # the dead scheduler's lock stays behind
        time.sleep(2)  # systemd's RestartSec=2
        restarted_at = time.monotonic()
        replacement = start_worker(db_url, redis_url, log_path)

        # the replacement starts (and its start-up reaper pass fails) while the receiver is still
        # down
        time.sleep(8)
        receiver = HTTPServer(host="127.0.0.1", port=port)
        receiver.expect_request("/hook").respond_with_data("back")
        receiver.start()
        back_at = time.monotonic()

        wait_until(
            lambda: receiver.log,
            30 - (back_at - restarted_at),
            "scheduled work to resume after the restart",
            log_path,
        )
        resumed = time.monotonic() - restarted_at
        wait_until(lambda: undelivered() == 0, 60, "every delivery to succeed", log_path)
        all_delivered = time.monotonic() - back_at
        print(
            f"\nrestart drill: first delivery {resumed:.1f}s after the replacement started, all "
            f"{EVENTS} delivered "
            f"{all_delivered:.1f}s after the receiver came back"
        )

        received = {request.headers["webhook-id"] for request, _ in receiver.log}
        assert received == event_ids
        for request, _ in receiver.log:
            # raises unless the Standard Webhooks signature verifies
            verified_payload(request, webhook["secret"])
        assert replacement.poll() is None
    finally:
        for process in (first, replacement):
            if process is not None:
                stop_worker(process, signal.SIGKILL)
        if receiver is not None:
            receiver.clear()
            if receiver.is_running():
                receiver.stop()
