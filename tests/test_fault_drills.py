"""Fault drills on real processes: PostgreSQL going away and coming back, abusive uploads, a burst
at gunicorn."""

import concurrent.futures
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
import requests

from app import create_app
from tests.conftest import POSTGRES_URL
from tests.factories import job_body
from tests.tcp_proxy import TcpProxy
from tests.ports import free_port

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(not POSTGRES_URL, reason="needs HIREKIT_TEST_DATABASE_URL")
def test_postgres_outage_is_503_and_recovers_without_restart(base_config, tenant_a, db_url):
    if not db_url.startswith("postgres"):
        pytest.skip("this drill cuts PostgreSQL")
    parts = urlsplit(db_url)
    proxy = TcpProxy(parts.hostname, parts.port or 5432)
    proxy.start()
    proxied = urlunsplit(parts._replace(netloc=f"{parts.username}@127.0.0.1:{proxy.port}"))
    app = create_app({**base_config, "DATABASE_URL": proxied})
    client = app.test_client()
    assert (
        client.post(
            "/v1/jobs", json=job_body(source_id="before"), headers=tenant_a.headers
        ).status_code
        == 201
    )

    proxy.stop()
    for _ in range(3):
        down = client.get("/v1/jobs?page=1&size=10", headers=tenant_a.headers)
        assert down.status_code == 503, down.json
        assert down.json["error"]["type"] == "service_unavailable" and down.headers["Retry-After"]
    refused = client.post("/v1/jobs", json=job_body(source_id="during"), headers=tenant_a.headers)
    assert refused.status_code == 503

    proxy.start()
    deadline = time.monotonic() + 10
    while (
        back := client.get("/v1/jobs?page=1&size=10", headers=tenant_a.headers)
    ).status_code != 200:
        assert back.status_code == 503 and time.monotonic() < deadline
    assert [j["source_id"] for j in back.json["data"]] == ["before"]
    assert (
        client.post(
            "/v1/jobs", json=job_body(source_id="after"), headers=tenant_a.headers
        ).status_code
        == 201
    )
    proxy.stop()


@pytest.fixture
def gunicorn_server(db_url, tmp_path):
    """The app under gunicorn (2 workers, the deploy config), on the test database."""
    servers = []

    def start(**env_overrides):
        port = free_port()
        env = {
            **os.environ,
            "HIREKIT_DATABASE_URL": db_url,
            "HIREKIT_INSTANCE_DIR": str(tmp_path),
            "HIREKIT_ACCESS_LOG": "",
            "HIREKIT_LOG_LEVEL": "WARNING",
            "HIREKIT_AUTH_CACHE_SECONDS": "0",
            # the drills burst 50 threads of one tenant: not the fair share's test
            "HIREKIT_TENANT_MAX_IN_FLIGHT": "64",
            # calls at any hour, as the in-process tests' app places them: an outcome must not
            # depend on the hour of the candidate's day the suite runs at
            "HIREKIT_CALLING_HOURS": "00:00-24:00",
            **env_overrides,
        }
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "-c",
                "deploy/gunicorn.conf.py",
                "--workers",
                "2",
                "--bind",
                f"127.0.0.1:{port}",
                "wsgi:app",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        servers.append(process)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                requests.get(f"{base}/healthz", timeout=2)
                return base, port
            except requests.RequestException:
                time.sleep(0.3)
        raise RuntimeError(process.stderr.read().decode())

    yield start
    for process in servers:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


@pytest.mark.skipif(not POSTGRES_URL, reason="needs HIREKIT_TEST_DATABASE_URL")
def test_gunicorn_threads_keeping_connections_recover_from_a_postgres_outage(
    gunicorn_server, tenant_a, db_url
):
    """gunicorn's request threads take pooled connections (app.data.db): when PostgreSQL goes away,
    each dead connection answers one 503 at most and is replaced, never reused."""
    if not db_url.startswith("postgres"):
        pytest.skip("this drill cuts PostgreSQL")
    parts = urlsplit(db_url)
    proxy = TcpProxy(parts.hostname, parts.port or 5432)
    proxy.start()
    base, _ = gunicorn_server(
        HIREKIT_DATABASE_URL=urlunsplit(
            parts._replace(netloc=f"{parts.username}@127.0.0.1:{proxy.port}")
        )
    )
    sessions = threading.local()

    def read(_):
        session = (
            getattr(sessions, "session", None)
            or setattr(sessions, "session", requests.Session())
            or sessions.session
        )
        return session.get(
            f"{base}/v1/jobs?page=1&size=5", headers=tenant_a.headers, timeout=30
        ).status_code

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as clients:
        # every request thread now keeps a connection
        assert set(clients.map(read, range(80))) == {200}
        proxy.stop()
        assert set(clients.map(read, range(16))) == {503}
        proxy.start()
        deadline = time.monotonic() + 10
        while read(0) != 200:
            assert time.monotonic() < deadline
        after = list(clients.map(read, range(200)))
        # 2 workers x 4 threads: one 503 each at most
        assert set(after) <= {200, 503} and after.count(503) <= 8
        assert set(clients.map(read, range(40))) == {200}
    proxy.stop()


@pytest.mark.slow
def test_one_gib_upload_is_refused_before_it_is_read(gunicorn_server, tenant_a):
    _, port = gunicorn_server()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            (
                f"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {tenant_a.key}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {1 << 30}\r\n\r\n"
            ).encode()
            + b"{" * 1024
        )
        started = time.monotonic()
        answer = b""
        while b"payload_too_large" not in answer and time.monotonic() - started < 5:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    text = answer.decode(errors="replace")
    assert text.startswith("HTTP/1.1 413"), text
    assert '"payload_too_large"' in text and time.monotonic() - started < 5


@pytest.mark.slow
@pytest.mark.drill  # a minute per database of load: `make drills`
def test_burst_of_5000_requests_loses_no_writes_and_limits_only_beyond_the_limit(
    gunicorn_server, make_tenant, app, redis_url
):
    """Limits are shared by the workers through Redis, as in production (in-memory storage counts
    per worker)."""
    from app.data.db import database
    from plugins.jobs.models import Job

    limit = 2000
    base, _ = gunicorn_server(HIREKIT_RATE_LIMIT=f"{limit}/hour", HIREKIT_REDIS_URL=redis_url)
    writer, reader = make_tenant("burst-writer"), make_tenant("burst-reader")
    sessions = threading.local()

    def call(n):
        session = (
            getattr(sessions, "session", None)
            or setattr(sessions, "session", requests.Session())
            or sessions.session
        )
        if n % 5 == 0:
            response = session.post(
                f"{base}/v1/jobs",
                json=job_body(source_id=f"burst-{n}"),
                headers=writer.headers,
                timeout=30,
            )
        else:
            response = session.get(
                f"{base}/v1/jobs?page=1&size=5", headers=reader.headers, timeout=30
            )
        return n, response.status_code

    with concurrent.futures.ThreadPoolExecutor(max_workers=50) as pool:
        results = list(pool.map(call, range(5000)))
    statuses = [status for _, status in results]
    assert not [s for s in statuses if s >= 500], "5xx during the burst"
    writes = [status for n, status in results if n % 5 == 0]
    reads = [status for n, status in results if n % 5]
    assert writes.count(201) == 1000  # 1,000 writes, under the writer's limit: all stored
    # 4,000 reads: exactly the limit passes
    assert reads.count(200) == limit and reads.count(429) == len(reads) - limit
    with app.app_context(), database.connection_context():
        assert Job.select().where(Job.tenant == "burst-writer").count() == 1000
