"""One deadline (WEBHOOK_TIMEOUT) covers a whole webhook send: a receiver that trickles its answer a
byte at a time, which a per-read socket timeout never stops, holds neither a delivery nor a test
event's request thread past it."""

from __future__ import annotations

import socket
import ssl
import threading
import time

import pytest

from plugins.webhooks import transport
from plugins.webhooks.egress import Target
from tests.test_webhook_egress import in_new_thread, self_signed
from tests.webhook_helpers import create_webhook, emit

DEADLINE = 2.0
# scheduling on a slow, busy machine (3.3 s seen); a per-read timeout lets the trickle run 20 s or
# more
SLACK = 3.0
TRICKLE_INTERVAL = 0.5
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 40\r\n\r\n"


class TrickleReceiver:
    """A loopback HTTP receiver that reads the request, then answers one byte every TRICKLE_INTERVAL
    seconds: from the status line on (`head_at_once=False`) or after a prompt status line and
    headers (`head_at_once=True`)."""

    def __init__(self, *, head_at_once: bool, context: ssl.SSLContext | None = None):
        self.head_at_once = head_at_once
        self.context = context
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.requests = 0
        self.stopped = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        # a prompt handshake; then the same trickled answer, one TLS record a byte
        if self.context is not None:
            connection.settimeout(5)
            connection = self.context.wrap_socket(connection, server_side=True)
        with connection:
            received = b""
            while b"\r\n\r\n" not in received:
                chunk = connection.recv(65536)
                if not chunk:
                    return
                received += chunk
            self.requests += 1
            answer = HEAD + b"x" * 40
            if self.head_at_once:
                connection.sendall(HEAD)
                answer = answer[len(HEAD) :]
            for byte in answer:
                if self.stopped.wait(TRICKLE_INTERVAL):
                    return
                try:
                    connection.sendall(bytes([byte]))
                except OSError:  # the sender hung up: its deadline passed
                    return

    def close(self) -> None:
        self.stopped.set()
        self.server.close()


@pytest.fixture(params=[False, True], ids=["trickled-head", "trickled-body"])
def trickle(request):
    receiver = TrickleReceiver(head_at_once=request.param)
    yield receiver
    receiver.close()


def test_a_test_event_to_a_trickling_receiver_ends_at_the_deadline(make_app, tenant_a, trickle):
    client = make_app(WEBHOOK_TIMEOUT=DEADLINE).test_client()
    webhook = create_webhook(client, tenant_a, trickle.url)

    started = time.monotonic()
    response = client.post(f"/v1/tenant-webhook/{webhook['id']}/test", headers=tenant_a.headers)
    elapsed = time.monotonic() - started

    assert response.status_code == 200
    assert DEADLINE - 0.1 <= elapsed < DEADLINE + SLACK, elapsed
    attempt = response.json
    assert attempt["succeeded"] is False and attempt["status_code"] is None
    assert attempt["error"] == "timed out after 2 s"
    assert attempt["duration_ms"] < (DEADLINE + SLACK) * 1000
    assert trickle.requests == 1


def test_a_delivery_to_a_trickling_receiver_is_a_timed_out_attempt_retried_later(
    make_app, tenant_a, trickle
):
    app = make_app(WEBHOOK_TIMEOUT=DEADLINE)
    client = app.test_client()
    webhook = create_webhook(client, tenant_a, trickle.url)

    started = time.monotonic()
    emit(app, tenant_a)  # without Redis the delivery is sent in this thread once the event commits
    elapsed = time.monotonic() - started

    assert elapsed < DEADLINE + SLACK, elapsed
    (delivery,) = client.get(
        f"/v1/tenant-webhook/{webhook['id']}/deliveries?page=1&size=10", headers=tenant_a.headers
    ).json["data"]
    assert delivery["status"] == "pending" and delivery["next_retry_at"] is not None
    (attempt,) = delivery["attempts"]
    assert attempt["status_code"] is None and attempt["error"] == "timed out after 2 s"


def test_a_prompt_receiver_still_answers_within_the_deadline_on_a_kept_connection(
    make_app, tenant_a, httpserver
):
    httpserver.expect_request("/hook").respond_with_data("thanks", status=200)
    client = make_app(WEBHOOK_TIMEOUT=DEADLINE).test_client()
    webhook = create_webhook(client, tenant_a, httpserver.url_for("/hook"))
    for _ in range(3):  # the second and third reuse the kept-alive connection, guarded afresh
        attempt = client.post(
            f"/v1/tenant-webhook/{webhook['id']}/test", headers=tenant_a.headers
        ).json
        assert (
            attempt["status_code"] == 200
            and attempt["response_body"] == "thanks"
            and attempt["error"] is None
        )
    # the first sends' deadlines pass: the kept connection is not shut down by them
    time.sleep(DEADLINE + 0.3)
    attempt = client.post(f"/v1/tenant-webhook/{webhook['id']}/test", headers=tenant_a.headers).json
    assert attempt["status_code"] == 200 and attempt["response_body"] == "thanks"


class TrickledHandshake:
    """A loopback TLS server whose handshake answer (server hello, certificate...) goes out one byte
    at a time."""

    def __init__(self, context: ssl.SSLContext):
        self.context = context
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.stopped = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        try:
            connection, _ = self.server.accept()
        except OSError:
            return
        with connection:
            incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
            tls = self.context.wrap_bio(incoming, outgoing, server_side=True)
            incoming.write(connection.recv(65536))  # the client hello
            try:
                tls.do_handshake()
            except ssl.SSLWantReadError:
                pass
            for byte in outgoing.read():
                if self.stopped.wait(TRICKLE_INTERVAL):
                    return
                try:
                    connection.sendall(bytes([byte]))
                except OSError:
                    return

    def close(self) -> None:
        self.stopped.set()
        self.server.close()


def send_https(port: int) -> tuple[transport.Outcome, float]:
    target = Target(
        url=f"https://hooks.test:{port}/hook",
        scheme="https",
        hostname="hooks.test",
        port=port,
        addresses=("127.0.0.1",),
    )
    started = time.monotonic()
    outcome = in_new_thread(
        lambda: transport.send(
            "POST", target, b"{}", {"Content-Type": "application/json"}, timeout=DEADLINE
        )
    )
    return outcome, time.monotonic() - started


@pytest.mark.parametrize("head_at_once", [False, True], ids=["trickled-head", "trickled-body"])
def test_an_https_answer_trickled_after_the_handshake_ends_at_the_deadline(
    tmp_path, monkeypatch, head_at_once
):
    cert_file, context = self_signed(tmp_path, "hooks.test")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert_file))
    receiver = TrickleReceiver(head_at_once=head_at_once, context=context)
    try:
        outcome, elapsed = send_https(receiver.port)
    finally:
        receiver.close()
    assert outcome.status_code is None and outcome.error == "timed out after 2 s"
    assert elapsed < DEADLINE + SLACK and receiver.requests == 1


def test_a_trickled_tls_handshake_ends_at_the_deadline(tmp_path, monkeypatch):
    cert_file, context = self_signed(tmp_path, "hooks.test")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert_file))
    server = TrickledHandshake(context)
    try:
        outcome, elapsed = send_https(server.port)
    finally:
        server.close()
    assert outcome.status_code is None and outcome.error == "timed out after 2 s"
    assert elapsed < DEADLINE + SLACK
