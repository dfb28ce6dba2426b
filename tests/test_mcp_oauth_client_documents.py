"""Client ID Metadata Documents: a client whose id is an https URL is described by the JSON document
there, fetched by the server through the webhooks' egress checks, within its size and time bounds.
The documents here are served over TLS on 127.0.0.1 by a certificate authority the test makes
(trusted through REQUESTS_CA_BUNDLE), as a host's would be on the internet."""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.factories import create_job
from tests.oauth_flow import (
    REDIRECT_URI,
    MemoryStorage,
    Person,
    authorization_url,
    create_user,
    pkce_pair,
    provider,
    run_oauth_session,
)
from tests.test_mcp_oauth import live_server  # noqa: F401 - the fixture

SLOW_SECONDS = 3


def certificate_authority(directory):
    """A CA file and a certificate + key for 127.0.0.1 signed by it: (ca path, cert path, key
    path)."""

    def name(text):
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])

    now = dt.datetime.now(dt.timezone.utc)
    ca_key, leaf_key = (
        ec.generate_private_key(ec.SECP256R1()),
        ec.generate_private_key(ec.SECP256R1()),
    )
    ca = (
        x509.CertificateBuilder()
        .subject_name(name("Test CA"))
        .issuer_name(name("Test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    leaf = (
        x509.CertificateBuilder()
        .subject_name(name("127.0.0.1"))
        .issuer_name(ca.subject)
        .public_key(leaf_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    paths = directory / "ca.pem", directory / "cert.pem", directory / "key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        leaf_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


@pytest.fixture
def documents(tmp_path, monkeypatch):
    """An https server on 127.0.0.1 publishing client metadata documents: (its base URL, the
    requests it got)."""
    ca, cert, key = certificate_authority(tmp_path)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(ca))
    served: list[str] = []
    bodies: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            served.append(self.path)
            if self.path == "/slow.json":
                time.sleep(SLOW_SECONDS)
            body = bodies.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    # the handshake runs in each request's thread (on its first read), so one stalled client never
    # blocks accept()
    server.socket = context.wrap_socket(
        server.socket, server_side=True, do_handshake_on_connect=False
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"https://127.0.0.1:{server.server_port}"

    def document(path: str, **fields) -> bytes:
        return json.dumps(
            {
                "client_id": f"{base}{path}",
                "client_name": "Document host",
                "redirect_uris": [REDIRECT_URI],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
                **fields,
            }
        ).encode()

    bodies.update(
        {
            "/client.json": document("/client.json"),
            "/slow.json": document("/slow.json"),
            "/big.json": document("/big.json", client_uri="https://example.com/" + "x" * 6000),
            "/not-json.json": b"<html>not json</html>",
            "/mismatch.json": document("/client.json"),
            "/secret.json": document(
                "/secret.json", token_endpoint_auth_method="client_secret_post"
            ),
        }
    )
    yield base, served
    server.shutdown()
    thread.join(timeout=5)


def test_the_sdk_signs_in_with_a_client_metadata_document_url(
    live_url, client, tenant_a, documents
):
    base, served = documents
    create_user(client, tenant_a, "kim@example.com")
    job = create_job(client, tenant_a, title="Midwife")
    person = Person("kim@example.com")
    storage = MemoryStorage()
    document_url = f"{base}/client.json"

    async def steps(mcp):
        return await mcp.call_tool("get_job", {"job_id": job["id"]})

    read = run_oauth_session(
        f"{live_url}/mcp",
        provider(f"{live_url}/mcp", person, storage, client_metadata_url=document_url),
        steps,
    )
    assert not read.is_error and read.structured_content["title"] == "Midwife"
    # no registration: the URL is the client id
    assert storage.client_info.client_id == document_url
    consent = person.pages[-1]
    assert "Document host" in consent and "published at 127.0.0.1" in consent
    fetched = served.count("/client.json")
    assert fetched >= 1
    again = requests.get(
        authorization_url(live_url, document_url, pkce_pair()[1], resource=f"{live_url}/mcp"),
        cookies=person.browser.cookies,
        timeout=10,
    )
    # cached, not fetched again
    assert again.status_code == 200 and served.count("/client.json") == fetched


@pytest.mark.parametrize(
    "path, reason",
    [
        ("/big.json", "larger than 5120 bytes"),
        ("/not-json.json", "is not JSON"),
        ("/mismatch.json", "client_id must equal its URL"),
        ("/secret.json", "cannot use token_endpoint_auth_method client_secret_post"),
        ("/missing.json", "answered HTTP 404"),
        ("/slow.json", "timed out"),
    ],
)
def test_a_bad_client_metadata_document_is_refused_without_a_redirect(
    make_app,
    live_server,  # noqa: F811
    documents,
    path,
    reason,
):
    base, _ = documents
    url = live_server(make_app(OAUTH_CLIENT_DOCUMENT_TIMEOUT=1.0 if path == "/slow.json" else 10.0))
    answer = requests.get(
        authorization_url(url, f"{base}{path}", pkce_pair()[1], resource=f"{url}/mcp"),
        allow_redirects=False,
        timeout=SLOW_SECONDS * 10,
    )
    assert answer.status_code == 400 and "Location" not in answer.headers
    assert "invalid_client" in answer.text and reason in answer.text, answer.text[-400:]


def test_a_client_metadata_document_on_a_private_address_is_refused(
    make_app,
    live_server,  # noqa: F811
    documents,
):
    base, served = documents
    url = live_server(make_app(WEBHOOK_ALLOW_PRIVATE=False))
    answer = requests.get(
        authorization_url(url, f"{base}/client.json", pkce_pair()[1], resource=f"{url}/mcp"),
        allow_redirects=False,
        timeout=10,
    )
    assert answer.status_code == 400 and "private, loopback" in answer.text
    assert served == []  # refused before any connection
    token = requests.post(
        f"{url}/oauth/token",
        data={
            "grant_type": "authorization_code",
            "code": "x",
            "client_id": f"{base}/client.json",
            "code_verifier": "y" * 43,
        },
        timeout=10,
    )
    assert token.status_code in (400, 401) and token.json()["error"] == "invalid_client"
    plain_http = requests.get(
        authorization_url(
            url, "http://127.0.0.1:9/client.json", pkce_pair()[1], resource=f"{url}/mcp"
        ),
        allow_redirects=False,
        timeout=10,
    )
    assert plain_http.status_code == 400 and "invalid_client" in plain_http.text
