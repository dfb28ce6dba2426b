"""deploy/nginx.conf is a configuration nginx accepts, and its access log keeps no key: run by a
real nginx (ports, TLS files and upstream moved to loopback and a temporary directory), in front of
a stub upstream."""

from __future__ import annotations

import http.client
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.nginx_site import MISSING, nginx_site

KEY = "hk_" + "nginxKeyThatMustNotBeLogged0123456789"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(bool(MISSING), reason=MISSING)]


class Upstream(BaseHTTPRequestHandler):
    """Stands in for gunicorn: 200 and a small JSON body for any GET."""

    def do_GET(self):
        body = b'{"ok": true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def nginx(tmp_path):
    """(https port, http port, log directory) of nginx running deploy/nginx.conf in front of a stub
    upstream."""
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    try:
        with nginx_site(tmp_path, upstream.server_port) as site:
            yield site.tls_port, site.plain_port, site.directory
    finally:
        upstream.shutdown()


def get(connection: http.client.HTTPConnection, target: str) -> int:
    connection.request(
        "GET",
        target,
        headers={"Host": "api.example.com", "Referer": f"https://x.test/?api_key={KEY}"},
    )
    response = connection.getresponse()
    response.read()
    return response.status


def access_logs(directory: Path) -> str:
    """What nginx wrote to every access log there: the site's own, or the default one if the site
    names none."""
    return "".join(path.read_text() for path in sorted(directory.glob("*access*.log")))


def test_the_access_log_keeps_the_path_but_no_key(nginx):
    tls_port, plain_port, logs = nginx
    secure = http.client.HTTPSConnection(
        "127.0.0.1", tls_port, context=ssl._create_unverified_context(), timeout=10
    )
    targets = [
        f"/v1/person/retrieve/p1?api_key={KEY}&pretty=true",
        f"/v2/person/enrich?%61pi_key={KEY}",
        f"/v1/person/search?api_k%65y={KEY}",
        f"/openapi.json?api_key={KEY}",
    ]
    assert [get(secure, target) for target in targets] == [200, 200, 200, 200]
    assert (
        get(
            http.client.HTTPConnection("127.0.0.1", plain_port, timeout=10),
            f"/v1/jobs?api_key={KEY}",
        )
        == 301
    )
    deadline = time.monotonic() + 5
    while access_logs(logs).count("\n") < len(targets) + 1 and time.monotonic() < deadline:
        time.sleep(0.05)  # nginx writes its access line after the answer
    logged = access_logs(logs)
    assert logged.count("\n") == len(targets) + 1, logged
    assert "/v1/person/retrieve/p1" in logged and "/v1/jobs" in logged and "301" in logged
    assert KEY not in logged
    assert not (logs / "default.access.log").read_text(), (
        "the site's requests went to nginx's default access log"
    )
