"""Webhook egress: a URL's host is resolved once per send, every address is checked, and the request
connects to the checked address, so a name rebound to a private address between check and connect
(DNS rebinding) never reaches it.

The tests own the name service (socket.getaddrinfo answers the names they give) and the network (a
connection to anything but 127.0.0.1 fails as unreachable, and is recorded), so no packet leaves the
machine.
"""

from __future__ import annotations

import datetime as dt
import errno
import ipaddress
import socket
import ssl
import threading

import pytest
import requests

from plugins.webhooks import egress, transport
from plugins.webhooks.egress import UnsafeTarget
from tests.webhook_helpers import create_webhook, emit, webhook_body

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

PUBLIC = "93.184.215.14"  # a global address; the test network makes it unreachable
PUBLIC_V6 = "2606:2800:21f:cb07:6820:80da:af6b:8b2c"


class Resolver:
    """socket.getaddrinfo for the names a test answers; each lookup takes the next answer and the
    last one repeats."""

    def __init__(self, real):
        self.real = real
        self.answers: dict[str, list[tuple[str, ...]]] = {}
        self.lookups: list[str] = []

    def answer(self, name: str, *answers) -> None:
        self.answers[name] = [
            answer if isinstance(answer, tuple) else (answer,) for answer in answers
        ]

    def __call__(self, host, port, family=0, type=0, proto=0, flags=0):
        name = host.decode() if isinstance(host, bytes) else host
        if name not in self.answers:
            return self.real(host, port, family, type, proto, flags)
        self.lookups.append(name)
        queue = self.answers[name]
        addresses = queue.pop(0) if len(queue) > 1 else queue[0]
        port = int(port or 0)
        return [
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", (a, port, 0, 0))
            if ":" in a
            else (socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
            for a in addresses
        ]


@pytest.fixture
def resolver(monkeypatch) -> Resolver:
    fake = Resolver(socket.getaddrinfo)
    monkeypatch.setattr(socket, "getaddrinfo", fake)
    return fake


@pytest.fixture
def network(monkeypatch) -> list:
    """Every (address, port) a socket connects to; only loopback is reachable."""
    attempts: list = []
    real_connect = socket.socket.connect

    def connect(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            attempts.append(address[:2])
            if not ipaddress.ip_address(address[0]).is_loopback:
                raise OSError(
                    errno.ENETUNREACH, "Network is unreachable (test network: loopback only)"
                )
        return real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    return attempts


class Listener:
    """A TCP listener on 127.0.0.1 that records every connection and what it was sent, and answers
    200."""

    def __init__(self, context: ssl.SSLContext | None = None):
        self.context = context
        self.connections: list[bytes] = []
        self.server_names: list[str | None] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        if context is not None:
            context.sni_callback = lambda _sock, name, _ctx: self.server_names.append(name)
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                try:
                    if self.context is not None:
                        conn = self.context.wrap_socket(conn, server_side=True)
                    data = b""
                    while b"\r\n\r\n" not in data:
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                    self.connections.append(data)
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 20\r\nConnection: "
                        b"close\r\n\r\nINTERNAL-SECRET-DATA"
                    )
                except (OSError, ssl.SSLError):
                    self.connections.append(b"")  # reached, even if the handshake then failed

    def host_headers(self) -> list[str]:
        return [
            line.split(b":", 1)[1].strip().decode()
            for data in self.connections
            for line in data.split(b"\r\n")
            if line.lower().startswith(b"host:")
        ]

    def close(self):
        self.sock.close()


@pytest.fixture
def listener():
    server = Listener()
    yield server
    server.close()


def delivery_attempts(client, tenant, webhook) -> list[dict]:
    response = client.get(
        f"/v1/tenant-webhook/{webhook['id']}/deliveries?page=1&size=10", headers=tenant.headers
    )
    assert response.status_code == 200
    return [attempt for delivery in response.json["data"] for attempt in delivery["attempts"]]


# --- DNS rebinding
# -------------------------------------------------------------------------------------------------


def test_a_name_rebound_to_loopback_between_check_and_connect_never_reaches_it(
    make_app, tenant_a, resolver, network, listener
):
    app = make_app(WEBHOOK_ALLOW_PRIVATE=False)
    client = app.test_client()
    resolver.answer("rebind.test", PUBLIC)
    webhook = create_webhook(client, tenant_a, f"http://rebind.test:{listener.port}/hook")
    resolver.lookups.clear()
    # public to the next lookup, loopback to every later one
    resolver.answer("rebind.test", PUBLIC, "127.0.0.1")

    emit(app, tenant_a)

    assert listener.connections == []
    assert network == [(PUBLIC, listener.port)]  # the send connected to the address it checked
    assert resolver.lookups == ["rebind.test"]  # one lookup per delivery
    (attempt,) = delivery_attempts(client, tenant_a, webhook)
    assert attempt["status_code"] is None and attempt["error"].startswith("connection failed")
    assert not attempt["response_body"]


def test_a_name_pointing_at_loopback_by_send_time_is_refused_before_connecting(
    make_app, tenant_a, resolver, network, listener
):
    app = make_app(WEBHOOK_ALLOW_PRIVATE=False)
    client = app.test_client()
    resolver.answer("rebind.test", PUBLIC)
    webhook = create_webhook(client, tenant_a, f"http://rebind.test:{listener.port}/hook")
    # one private address among public ones is enough
    resolver.answer("rebind.test", (PUBLIC, "169.254.169.254"))

    emit(app, tenant_a)

    assert listener.connections == [] and network == []
    (attempt,) = delivery_attempts(client, tenant_a, webhook)
    assert (
        attempt["error"]
        == "refused: host 'rebind.test' points at a private, loopback, link-local or reserved "
        "address"
    )
    assert "169.254" not in attempt["error"]  # the tenant never learns what the name resolves to


def test_allow_private_still_delivers_to_local_receivers_at_the_address_first_resolved(
    app, client, tenant_a, resolver, network, listener
):
    assert app.config["WEBHOOK_ALLOW_PRIVATE"] is True
    # a second lookup would lead off the machine
    resolver.answer("receiver.test", "127.0.0.1", PUBLIC)
    webhook = create_webhook(client, tenant_a, f"http://receiver.test:{listener.port}/hook")
    create_webhook(
        client,
        tenant_a,
        f"http://localhost:{listener.port}/hook",
        triggered_event="call_activity",
        fields=["id", "status"],
    )

    emit(app, tenant_a)
    emit(app, tenant_a, "call_activity", {"id": "x", "status": "queued"})

    assert len(listener.connections) == 2
    assert listener.host_headers() == [
        f"receiver.test:{listener.port}",
        f"localhost:{listener.port}",
    ]
    assert {address for address, _ in network} <= {"127.0.0.1", "::1"}
    assert delivery_attempts(client, tenant_a, webhook)[0]["status_code"] == 200


def test_when_an_address_refuses_the_connection_the_next_checked_one_is_tried_never_a_new_lookup(
    app, client, tenant_a, resolver, network, listener
):
    resolver.answer("dual.test", ("127.0.0.2", "127.0.0.1"), PUBLIC)  # nothing listens on 127.0.0.2
    webhook = create_webhook(client, tenant_a, f"http://dual.test:{listener.port}/hook")

    emit(app, tenant_a)

    assert network == [("127.0.0.2", listener.port), ("127.0.0.1", listener.port)]
    assert len(listener.connections) == 1 and resolver.lookups == ["dual.test"]
    assert delivery_attempts(client, tenant_a, webhook)[0]["status_code"] == 200


def test_a_redirect_is_a_failed_attempt_and_is_not_followed(
    app, client, tenant_a, httpserver, listener
):
    httpserver.expect_request("/hook").respond_with_data(
        "", status=302, headers={"Location": f"http://127.0.0.1:{listener.port}/elsewhere"}
    )
    webhook = create_webhook(client, tenant_a, httpserver.url_for("/hook"))

    emit(app, tenant_a)

    (attempt,) = delivery_attempts(client, tenant_a, webhook)
    assert attempt["status_code"] == 302
    assert (
        client.get(
            f"/v1/tenant-webhook/{webhook['id']}/deliveries?page=1&size=10",
            headers=tenant_a.headers,
        ).json["data"][0]["status"]
        != "succeeded"
    )
    assert listener.connections == []


# --- what is refused
# -----------------------------------------------------------------------------------------------

REFUSED_ADDRESSES = [
    "127.0.0.1",
    "127.255.255.254",
    "10.0.0.1",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",
    "169.254.0.1",
    "100.64.0.1",
    "100.127.255.254",
    "0.0.0.0",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    "192.0.0.1",
    "192.0.2.1",
    "198.18.0.1",
    "::1",
    "::",
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
    "fec0::1",
    "ff02::1",
    "2001:db8::1",
    "fd00:ec2::254",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "::127.0.0.1",
    "64:ff9b::7f00:1",
    "2002:7f00:1::1",
]


@pytest.mark.parametrize("address", REFUSED_ADDRESSES)
def test_every_private_loopback_link_local_multicast_reserved_or_unspecified_address_is_refused(
    resolver, address
):
    resolver.answer("internal.test", address)
    with pytest.raises(UnsafeTarget, match="private, loopback") as refused:
        egress.pin_target("https://internal.test/hook", allow_private=False)
    assert address not in str(refused.value)  # the refusal does not echo what the name resolved to
    # every address is checked, not just the first
    resolver.answer("internal.test", (PUBLIC, PUBLIC_V6, address))
    with pytest.raises(UnsafeTarget) as refused:
        egress.check_target("https://internal.test/hook", allow_private=False)
    assert (
        str(refused.value)
        == "host 'internal.test' points at a private, loopback, link-local or reserved address"
    )
    literal = f"[{address}]" if ":" in address else address
    with pytest.raises(UnsafeTarget):
        egress.check_target(f"http://{literal}/hook", allow_private=False)


def test_public_addresses_are_allowed(resolver):
    resolver.answer("public.test", (PUBLIC, PUBLIC_V6))
    target = egress.pin_target("https://public.test:8443/hook?x=1", allow_private=False)
    assert (target.addresses, target.hostname, target.port, target.host_header) == (
        (PUBLIC, PUBLIC_V6),
        "public.test",
        8443,
        "public.test:8443",
    )
    egress.check_target(f"http://{PUBLIC}/hook", allow_private=False)
    egress.check_target(f"http://[{PUBLIC_V6}]/hook", allow_private=False)


REFUSED_SPELLINGS = [
    "http://2130706433/hook",  # 127.0.0.1 as one decimal number
    "http://0177.0.0.1/hook",  # octal
    "http://0x7f.0.0.1/hook",  # hex
    "http://0x7f000001/hook",
    "http://127.1/hook",  # short form
    "http://0/hook",
    "http://1.2.3.04/hook",  # a leading zero reads as octal to inet_aton
    "http://localhost./hook",  # trailing dot
    "http://receiver.test./hook",
    "http://user:pass@receiver.test/hook",  # credentials
    "http://user@receiver.test/hook",
    "ftp://receiver.test/hook",
    "http:///hook",
]


@pytest.mark.parametrize("url", REFUSED_SPELLINGS)
def test_unusual_address_spellings_credentials_and_trailing_dots_are_refused_even_when_private_is_allowed(  # noqa: E501 - the test's name
    url,
):
    with pytest.raises(UnsafeTarget):
        egress.check_target(url, allow_private=True)
    with pytest.raises(UnsafeTarget):
        egress.check_target(url, allow_private=False)


@pytest.mark.parametrize(
    "url",
    [
        "http://10.1.2.3/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://2130706433/hook",
        "http://0177.0.0.1/hook",
        "http://localhost./hook",
        "http://u:p@hooks.test/hook",
        "http://internal.test/hook",
    ],
)
def test_configuring_a_refused_url_is_a_422_naming_the_url(make_app, tenant_a, resolver, url):
    resolver.answer("internal.test", "192.168.0.10")
    client = make_app(WEBHOOK_ALLOW_PRIVATE=False).test_client()
    response = client.post(
        "/v1/tenant-webhook", json=webhook_body(tenant_a, url), headers=tenant_a.headers
    )
    assert response.status_code == 422
    error = response.json["error"]
    assert response.json["status"] == 422 and error["type"] == "validation_error"
    assert list(error["fields"]) == ["url"] and error["fields"]["url"][0].endswith(".")
    assert "192.168" not in response.get_data(as_text=True)


def test_a_refused_name_is_answered_without_its_address_and_logged_with_it(
    make_app, tenant_a, resolver, caplog
):
    resolver.answer("intranet.test", ("10.1.2.3", "fd12:3456::7"))
    client = make_app(WEBHOOK_ALLOW_PRIVATE=False).test_client()
    with caplog.at_level("WARNING", logger="hirekit.webhooks"):
        response = client.post(
            "/v1/tenant-webhook",
            json=webhook_body(tenant_a, "https://intranet.test/hook"),
            headers=tenant_a.headers,
        )
    assert response.status_code == 422
    assert response.json["error"]["fields"]["url"] == [
        "Host 'intranet.test' points at a private, loopback, link-local or reserved address."
    ]
    assert not any(text in response.get_data(as_text=True) for text in ("10.1.2.3", "fd12", "10.1"))
    logged = [r.getMessage() for r in caplog.records if r.name == "hirekit.webhooks"]
    assert logged == ["webhook host 'intranet.test' refused: it resolves to 10.1.2.3, fd12:3456::7"]


def test_subscribing_again_checks_the_url_again(make_app, tenant_a, resolver):
    client = make_app(WEBHOOK_ALLOW_PRIVATE=False).test_client()
    resolver.answer("moving.test", PUBLIC)
    webhook = create_webhook(client, tenant_a, "https://moving.test/hook")
    assert (
        client.post(
            f"/v1/tenant-webhook/unsubscribe/{webhook['id']}", headers=tenant_a.headers
        ).status_code
        == 200
    )
    resolver.answer("moving.test", "10.0.0.7")
    response = client.post(
        f"/v1/tenant-webhook/subscribe/{webhook['id']}", headers=tenant_a.headers
    )
    assert response.status_code == 422 and "private" in response.json["error"]["fields"]["url"][0]
    assert "10.0.0.7" not in response.get_data(as_text=True)
    (listed,) = client.get("/v1/tenant-webhook", headers=tenant_a.headers).json["data"]
    assert listed["is_deleted"] is True


# --- the pinned connection
# ---------------------------------------------------------------------------------------


def in_new_thread(function):
    """Run `function` where transport has no session yet (one per thread), so it reads the
    environment afresh."""
    result = []
    thread = threading.Thread(target=lambda: result.append(function()))
    thread.start()
    thread.join(30)
    return result[0]


def self_signed(tmp_path, name: str):
    """A certificate for `name` (its own CA) and a server context serving it."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / f"{name}.pem", tmp_path / f"{name}.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    return cert_file, context


def test_a_pinned_https_connection_sends_and_verifies_the_host_name(
    tmp_path, monkeypatch, resolver, network
):
    cert_file, context = self_signed(tmp_path, "hooks.test")
    server = Listener(context)
    # trust the test's certificate, and only it
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert_file))
    resolver.answer("hooks.test", "127.0.0.1", PUBLIC)
    try:
        target = egress.pin_target(f"https://hooks.test:{server.port}/hook", allow_private=True)
        outcome = in_new_thread(
            lambda: transport.send(
                "POST", target, b"{}", {"Content-Type": "application/json"}, timeout=5
            )
        )
    finally:
        server.close()
    assert outcome.status_code == 200, outcome
    assert network == [("127.0.0.1", server.port)]
    assert server.server_names == ["hooks.test"]  # SNI names the host, not the address
    assert server.host_headers() == [f"hooks.test:{server.port}"]


def test_a_pinned_https_connection_refuses_a_certificate_for_another_name(
    tmp_path, monkeypatch, resolver, network
):
    cert_file, context = self_signed(tmp_path, "other.test")
    server = Listener(context)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert_file))
    resolver.answer("hooks.test", "127.0.0.1")
    try:
        target = egress.pin_target(f"https://hooks.test:{server.port}/hook", allow_private=True)
        outcome = in_new_thread(lambda: transport.send("POST", target, b"{}", {}, timeout=5))
    finally:
        server.close()
    assert (
        outcome.status_code is None
        and "hooks.test" in outcome.error
        and "certificate" in outcome.error.lower()
    )
    assert server.host_headers() == []  # nothing sent over a connection that failed verification


def test_the_webhook_session_sends_nothing_without_a_checked_target(listener):
    def plain_post():
        try:
            transport.session().post(f"http://127.0.0.1:{listener.port}/hook", timeout=5)
        except requests.RequestException as exc:
            return exc
        return None

    assert isinstance(in_new_thread(plain_post), requests.RequestException)
    assert listener.connections == []
