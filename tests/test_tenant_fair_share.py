"""One tenant cannot take every request thread of a worker while another tenant is served: past
TENANT_MAX_IN_FLIGHT requests in progress its next request is a 429 with Retry-After, while the
other tenant is still served at once. A tenant alone may use every thread."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from app.security.fair_share import InFlightGate, tenant_cap
from tests.webhook_helpers import create_webhook

CAP = 2


class HeldReceiver:
    """A loopback webhook receiver that answers only once `release` is set: each send to it holds
    its request thread."""

    def __init__(self):
        self.arrived = threading.Semaphore(0)
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.arrived.release()
                receiver.release.wait(20)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"

    def close(self):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def app(make_app):
    return make_app(TENANT_MAX_IN_FLIGHT=CAP, TENANT_IN_FLIGHT_WAIT=0.05, WEBHOOK_TIMEOUT=20.0)


@pytest.fixture
def held_receiver():
    receiver = HeldReceiver()
    yield receiver
    receiver.close()


def test_a_tenant_past_its_requests_in_progress_gets_429_while_another_is_served(
    app, client, live_url, tenant_a, tenant_b, held_receiver
):
    webhook = create_webhook(client, tenant_a, held_receiver.url)
    test_url = f"{live_url}/v1/tenant-webhook/{webhook['id']}/test"
    with ThreadPoolExecutor(CAP) as pool:
        held = [
            pool.submit(requests.post, test_url, headers=tenant_a.headers, timeout=30)
            for _ in range(CAP)
        ]
        for _ in range(CAP):
            assert held_receiver.arrived.acquire(timeout=15), (
                "the test sends never reached the receiver"
            )

        # tenant B is being served: the cap binds
        assert (
            requests.get(f"{live_url}/v1/tenant", headers=tenant_b.headers, timeout=10).status_code
            == 200
        )
        refused = requests.get(
            f"{live_url}/v1/jobs?page=1&size=1", headers=tenant_a.headers, timeout=10
        )
        assert refused.status_code == 429
        assert refused.headers["Retry-After"] == "1"
        body = refused.json()
        assert body["status"] == 429 and body["error"]["type"] == "rate_limit_error"
        assert f"{CAP} requests in progress" in body["error"]["message"]

        started = time.monotonic()
        other = requests.get(
            f"{live_url}/v1/jobs?page=1&size=1", headers=tenant_b.headers, timeout=10
        )
        assert other.status_code == 200
        assert time.monotonic() - started < 2.0

        held_receiver.release.set()
        assert [future.result().status_code for future in held] == [200] * CAP

    again = requests.get(f"{live_url}/v1/jobs?page=1&size=1", headers=tenant_a.headers, timeout=10)
    assert again.status_code == 200, "the places were not given back when the requests ended"
    assert app.extensions["hirekit_fair_share"].in_progress(tenant_a.id) == 0


def test_a_tenant_alone_past_its_cap_is_served_by_the_idle_threads(
    app, client, live_url, tenant_a, held_receiver
):
    webhook = create_webhook(client, tenant_a, held_receiver.url)
    test_url = f"{live_url}/v1/tenant-webhook/{webhook['id']}/test"
    with ThreadPoolExecutor(CAP) as pool:
        held = [
            pool.submit(requests.post, test_url, headers=tenant_a.headers, timeout=30)
            for _ in range(CAP)
        ]
        for _ in range(CAP):
            assert held_receiver.arrived.acquire(timeout=15), (
                "the test sends never reached the receiver"
            )
        assert app.extensions["hirekit_fair_share"].in_progress(tenant_a.id) == CAP
        beyond = requests.get(
            f"{live_url}/v1/jobs?page=1&size=1", headers=tenant_a.headers, timeout=10
        )
        assert beyond.status_code == 200, "a tenant alone was refused for concurrency"
        held_receiver.release.set()
        assert [future.result().status_code for future in held] == [200] * CAP


def test_the_cap_binds_only_while_another_tenant_is_present():
    gate = InFlightGate(cap=1, wait_seconds=0.0, threads=8, present_seconds=0.2)
    assert all(gate.enter("acme") for _ in range(5)), "a tenant alone was held to the cap"
    assert gate.enter("globex")
    assert not gate.enter("acme"), "the cap did not bind with another tenant in progress"
    gate.leave("globex")
    assert not gate.enter("acme"), "another tenant between two requests no longer counted"
    time.sleep(0.3)
    assert gate.enter("acme"), "a tenant gone for longer than present_seconds still held the cap"


def test_a_request_over_the_cap_takes_a_place_freed_within_the_wait():
    gate = InFlightGate(cap=1, wait_seconds=2.0, threads=4)
    assert gate.enter("globex")  # another tenant is being served
    assert gate.enter("acme")
    threading.Timer(0.1, gate.leave, args=("acme",)).start()
    started = time.monotonic()
    assert gate.enter("acme"), "a place freed during the wait was not taken"
    assert time.monotonic() - started < 1.5
    assert gate.enter("initech"), "another tenant waited for acme's place"


def test_a_request_over_the_cap_never_waits_on_the_last_free_thread():
    gate = InFlightGate(cap=2, wait_seconds=5.0, threads=4)
    # one thread of four left
    assert gate.enter("acme") and gate.enter("acme") and gate.enter("globex")
    started = time.monotonic()
    assert not gate.enter("acme"), "waiting would have taken the last thread free for other tenants"
    assert time.monotonic() - started < 0.5, "it waited instead of refusing at once"
    assert gate.enter("initech"), "the free thread went to waiting instead of to another tenant"


def test_the_default_cap_is_half_the_worker_threads():
    assert tenant_cap({"TENANT_MAX_IN_FLIGHT": 0, "WEB_THREADS": 4}) == 2
    assert tenant_cap({"TENANT_MAX_IN_FLIGHT": 0, "WEB_THREADS": 1}) == 1
    assert tenant_cap({"TENANT_MAX_IN_FLIGHT": 6, "WEB_THREADS": 4}) == 6
    assert tenant_cap({"TENANT_MAX_IN_FLIGHT": -1, "WEB_THREADS": 4}) == 0
