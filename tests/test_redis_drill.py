"""Redis going away under the web tier, on real processes: reads go on, instant calls are refused
whole (503, nothing stored), events are stored and their webhook deliveries sent once Redis is back,
by a worker that never restarted.

The app reaches Redis through a TCP proxy the test cuts; the RQ worker (`python worker.py`, a real
process) talks to Redis directly, as a worker on another host whose own link is fine would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from app import create_app
from tests.call_factories import create_application, create_candidate, create_job_with_questions
from tests.tcp_proxy import TcpProxy
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


@pytest.fixture
def redis_proxy(redis_url):
    parts = urlsplit(redis_url)
    proxy = TcpProxy(parts.hostname, parts.port or 6379)
    proxy.start()
    yield proxy, urlunsplit(parts._replace(netloc=f"127.0.0.1:{proxy.port}"))
    proxy.stop()


@pytest.fixture
def worker_process(db_url, redis_url, tmp_path):
    """`python worker.py` on the real Redis, with a reaper pass every second."""
    env = {
        **os.environ,
        "HIREKIT_DATABASE_URL": db_url,
        "HIREKIT_REDIS_URL": redis_url,
        "HIREKIT_INSTANCE_DIR": str(tmp_path),
        "HIREKIT_WEBHOOK_ALLOW_PRIVATE": "1",
        "HIREKIT_WEBHOOK_REAPER_INTERVAL": "1",
        "HIREKIT_WEBHOOK_LEASE_GRACE": "0",
        "HIREKIT_LOG_LEVEL": "WARNING",
    }
    process = subprocess.Popen(
        [sys.executable, "worker.py"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    yield process
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)


def test_without_redis_reads_work_calls_are_refused_whole_and_events_are_delivered_later(
    base_config, redis_proxy, tenant_a, httpserver, worker_process
):
    proxy, proxied_url = redis_proxy
    httpserver.expect_request("/hook").respond_with_data("ok")
    app = create_app(
        {
            **base_config,
            "REDIS_URL": proxied_url,
            "RATE_LIMIT_FAIL_OPEN": True,
            "WEBHOOK_REAPER_INTERVAL": 1.0,
            "WEBHOOK_LEASE_GRACE": 0.0,
        }
    )
    client = app.test_client()
    headers = tenant_a.headers
    job = create_job_with_questions(client, tenant_a)
    application = create_application(client, tenant_a, job, create_candidate(client, tenant_a))
    webhook = client.post(
        "/v1/tenant-webhook",
        headers=headers,
        json={
            "tenant_id": tenant_a.id,
            "triggered_event": "application_activty",
            "type": "post_call_screening",
            "fields": ["id", "source_application_status"],
            "url": httpserver.url_for("/hook"),
            "http_method": "POST",
            "content_type": "application/json",
        },
    ).json
    deliveries_path = f"/v1/tenant-webhook/{webhook['id']}/deliveries?page=1&size=50"

    proxy.stop()  # Redis is gone for the web tier

    for path in (
        f"/v1/jobs/{job['id']}",
        "/v1/jobs?page=1&size=5",
        f"/v1/applications/{application['id']}",
        "/v1/calls?page=1&size=5",
        "/v1/tenant-webhook",
        deliveries_path,
        f"/v1/jobs/{job['id']}/questions",
    ):
        assert client.get(path, headers=headers).status_code == 200, path
    assert client.get("/readyz").status_code == 503

    refused = client.post(f"/v1/applications/{application['id']}/instant-call", headers=headers)
    assert refused.status_code == 503 and refused.headers["Retry-After"]
    assert refused.json["error"]["type"] == "service_unavailable"
    # no call left queued forever
    assert client.get("/v1/calls?page=1&size=5", headers=headers).json["total"] == 0

    moved = client.patch(
        f"/v1/applications/{application['id']}",
        headers=headers,
        json={"source_application_status": "interviewing", "application_stage": "ACTIVE"},
    )
    assert moved.status_code == 200
    stored = client.get(deliveries_path, headers=headers).json["data"]
    assert [
        d["payload"]["source_application_status"] for d in stored if d["status"] == "pending"
    ] == ["interviewing"]

    proxy.start()  # Redis is back; nobody restarts anything

    def received_interviewing():
        bodies = [json.loads(request.get_data()) for request, _ in httpserver.log]
        return [b for b in bodies if b.get("source_application_status") == "interviewing"]

    delivered = wait_until(received_interviewing, 30, "the stored event to be delivered")
    assert delivered == [{"id": application["id"], "source_application_status": "interviewing"}]
    wait_until(
        lambda: all(
            d["status"] != "pending"
            for d in client.get(deliveries_path, headers=headers).json["data"]
        ),
        10,
        "the delivery log to record the send",
    )

    again = client.post(f"/v1/applications/{application['id']}/instant-call", headers=headers)
    # the refused attempt left nothing behind that blocks a new call
    assert again.status_code == 202
    assert worker_process.poll() is None
