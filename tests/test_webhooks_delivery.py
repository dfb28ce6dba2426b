"""Webhook delivery on Redis and real RQ workers: retries on a schedule, receiver outages, a worker
killed mid-send."""

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Response

from app.data.db import database
from plugins.webhooks.models import WebhookDelivery
from tests.webhook_helpers import create_webhook, emit, verified_payload, work_until
from tests.ports import free_port

ROOT = Path(__file__).resolve().parent.parent
FAST_RETRIES = {"WEBHOOK_RETRY_SCHEDULE": [0.2, 0.2, 0.2, 0.2], "WEBHOOK_RETRY_JITTER": 0.0}


def delivery_log(client, tenant, webhook) -> dict:
    response = client.get(
        f"/v1/tenant-webhook/{webhook['id']}/deliveries?page=1&size=10", headers=tenant.headers
    )
    assert response.status_code == 200
    return response.json


def delivery_outcomes(client) -> dict:
    """hirekit_webhook_deliveries_total by outcome, as Prometheus scrapes it."""
    text = client.get("/metrics", headers={"Authorization": "Bearer scrape"}).get_data(as_text=True)
    found = dict(
        re.findall(
            r'^hirekit_webhook_deliveries_total\{outcome="(\w+)"\} ([\d.]+)$', text, re.MULTILINE
        )
    )
    return {
        outcome: float(found.get(outcome, 0))
        for outcome in ("delivered", "retrying", "failed", "disabled")
    }


def delivered(client, tenant, webhook):
    return lambda: (
        [d["status"] for d in delivery_log(client, tenant, webhook)["data"]] == ["succeeded"]
    )


def test_two_500s_then_200_is_delivered_on_the_third_attempt_and_logged(
    make_app, redis_url, tenant_a, httpserver
):
    for status in (500, 500, 200):
        httpserver.expect_ordered_request("/hook").respond_with_data(
            f"status {status}", status=status
        )
    app = make_app(
        REDIS_URL=redis_url, METRICS_ENABLED=True, METRICS_TOKEN="scrape", **FAST_RETRIES
    )
    client = app.test_client()
    before = delivery_outcomes(client)
    webhook = create_webhook(client, tenant_a, httpserver.url_for("/hook"))
    event = emit(app, tenant_a)
    work_until(app, delivered(client, tenant_a, webhook), timeout=15)
    after = delivery_outcomes(client)
    assert (
        after["retrying"] - before["retrying"] == 2
        and after["delivered"] - before["delivered"] == 1
    )
    (delivery,) = delivery_log(client, tenant_a, webhook)["data"]
    assert [a["status_code"] for a in delivery["attempts"]] == [500, 500, 200]
    assert [bool(a["next_retry_at"]) for a in delivery["attempts"]] == [True, True, False]
    assert delivery["attempt_count"] == 3 and delivery["delivered_at"]
    ids = {request.headers["webhook-id"] for request, _ in httpserver.log}
    assert ids == {str(event.event_id)}  # the same id on every attempt: the receiver's dedupe key
    for request, _ in httpserver.log:
        verified_payload(request, webhook["secret"])


def test_a_spent_schedule_gives_up_and_says_so(make_app, redis_url, tenant_a, httpserver):
    httpserver.expect_request("/hook").respond_with_data("nope", status=502)
    app = make_app(REDIS_URL=redis_url, WEBHOOK_RETRY_SCHEDULE=[0.1], WEBHOOK_RETRY_JITTER=0.0)
    client = app.test_client()
    webhook = create_webhook(client, tenant_a, httpserver.url_for("/hook"))
    emit(app, tenant_a)
    work_until(
        app,
        lambda: delivery_log(client, tenant_a, webhook)["data"][0]["status"] == "failed",
        timeout=15,
    )
    (delivery,) = delivery_log(client, tenant_a, webhook)["data"]
    assert [a["status_code"] for a in delivery["attempts"]] == [502, 502] and delivery[
        "next_attempt_at"
    ] is None


def test_a_burst_of_events_is_sent_by_one_drain_job_in_order(
    make_app, redis_url, tenant_a, httpserver
):
    httpserver.expect_request("/hook").respond_with_data("ok")
    app = make_app(REDIS_URL=redis_url)
    client = app.test_client()
    webhook = create_webhook(client, tenant_a, httpserver.url_for("/hook"))
    emitted = [str(emit(app, tenant_a).event_id) for _ in range(30)]
    queued = [
        job.func_name.rsplit(".", 1)[-1]
        for job in app.extensions["hirekit_queue"].queue("webhooks").jobs
    ]
    # one job drains the webhook, not one job per delivery
    assert queued.count("drain_webhook") == 1
    work_until(app, lambda: len(httpserver.log) == 30)
    assert [request.headers["webhook-id"] for request, _ in httpserver.log] == emitted
    assert {d["status"] for d in delivery_log(client, tenant_a, webhook)["data"]} == {"succeeded"}


def test_receiver_down_nothing_is_lost_and_it_arrives_when_the_receiver_is_back(
    make_app, redis_url, tenant_a
):
    port = free_port()
    app = make_app(REDIS_URL=redis_url, WEBHOOK_RETRY_SCHEDULE=[0.2] * 20, WEBHOOK_RETRY_JITTER=0.0)
    client = app.test_client()
    webhook = create_webhook(client, tenant_a, f"http://127.0.0.1:{port}/hook")
    first, second = emit(app, tenant_a), emit(app, tenant_a)
    work_until(
        app,
        lambda: all(
            d["attempt_count"] >= 2 for d in delivery_log(client, tenant_a, webhook)["data"]
        ),
    )
    errors = [
        a["error"] for d in delivery_log(client, tenant_a, webhook)["data"] for a in d["attempts"]
    ]
    assert errors and all(e.startswith("connection failed") for e in errors)

    receiver = HTTPServer(host="127.0.0.1", port=port)
    receiver.expect_request("/hook").respond_with_data("back")
    receiver.start()
    try:
        work_until(
            app,
            lambda: (
                {d["status"] for d in delivery_log(client, tenant_a, webhook)["data"]}
                == {"succeeded"}
            ),
            timeout=15,
        )
        got = {request.headers["webhook-id"] for request, _ in receiver.log}
        assert got == {str(first.event_id), str(second.event_id)}
    finally:
        receiver.clear()
        receiver.stop()


def start_worker(db_url: str, redis_url: str) -> subprocess.Popen:
    env = {
        **os.environ,
        "HIREKIT_DATABASE_URL": db_url,
        "HIREKIT_REDIS_URL": redis_url,
        "HIREKIT_WEBHOOK_TIMEOUT": "1",
        "HIREKIT_WEBHOOK_LEASE_GRACE": "0.5",
        "HIREKIT_WEBHOOK_ALLOW_PRIVATE": "true",
        "HIREKIT_LOG_LEVEL": "WARNING",
    }
    return subprocess.Popen(
        [sys.executable, "worker.py", "webhooks"],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def stop_worker(process: subprocess.Popen, sig=signal.SIGTERM) -> None:
    """Signal the worker's whole process group: RQ runs its scheduler in a child process, which a
    signal to the worker alone would leave running (an orphan that keeps moving jobs in the test
    Redis)."""
    try:
        os.killpg(process.pid, sig)
        process.wait(10)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)


def test_a_worker_killed_mid_delivery_is_finished_by_the_next_worker(
    make_app, db_url, redis_url, tenant_a, httpserver
):
    first_request_arrived, release = threading.Event(), threading.Event()
    requests_seen = []

    def handler(request):
        requests_seen.append(request.headers["webhook-id"])
        if len(requests_seen) == 1:
            first_request_arrived.set()
            release.wait(10)  # the worker sending this is killed meanwhile
        return Response("ok")

    httpserver.expect_request("/hook").respond_with_handler(handler)
    app = make_app(REDIS_URL=redis_url)
    client = app.test_client()
    webhook = create_webhook(client, tenant_a, httpserver.url_for("/hook"))
    worker = start_worker(db_url, redis_url)
    replacement = None
    try:
        event = emit(app, tenant_a)
        assert first_request_arrived.wait(20), "the first worker never sent the delivery"
        # the worker and its scheduler, as a container or cgroup kill takes both
        stop_worker(worker, signal.SIGKILL)
        release.set()
        with app.app_context(), database.connection_context():
            delivery = WebhookDelivery.get(WebhookDelivery.event_id == event.event_id)
            assert delivery.status == "pending" and delivery.claimed_until is not None
            time.sleep(
                max(0.0, (delivery.claimed_until - delivery.updated_at).total_seconds()) + 0.5
            )  # lease runs out
        replacement = start_worker(db_url, redis_url)
        deadline = time.monotonic() + 20
        while delivery_log(client, tenant_a, webhook)["data"][0]["status"] != "succeeded":
            assert time.monotonic() < deadline, "the new worker did not finish the delivery"
            time.sleep(0.1)
        # at least once: the interrupted send, then the finished one
        assert requests_seen == [str(event.event_id)] * 2
    finally:
        release.set()
        for process in (worker, replacement):
            if process is not None:
                stop_worker(process)


pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
