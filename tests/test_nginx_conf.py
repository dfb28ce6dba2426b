"""deploy/nginx.conf is a configuration nginx accepts, and its access log keeps no key: run by a real nginx (ports, TLS
files and upstream moved to loopback and a temporary directory), in front of a stub upstream."""

from __future__ import annotations

import http.client
import shutil
import signal
import socket
import ssl
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.ports import free_port

ROOT = Path(__file__).resolve().parent.parent
NGINX = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if Path(p).exists()), None)
OPENSSL = shutil.which("openssl")
KEY = "hk_" + "nginxKeyThatMustNotBeLogged0123456789"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(NGINX is None, reason="nginx is not installed (Debian: apt-get install nginx-light), so "
                                             "deploy/nginx.conf cannot be run here"),
    pytest.mark.skipif(OPENSSL is None, reason="openssl is not installed: no certificate for the TLS server block"),
]


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
    """(https port, http port, log directory) of nginx running deploy/nginx.conf, its addresses moved to loopback and
    its logs to the test's directory."""
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    subprocess.run([OPENSSL, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=api.example.com",
                    "-keyout", str(tmp_path / "key.pem"), "-out", str(tmp_path / "cert.pem")], check=True, capture_output=True)
    tls_port, plain_port = free_port(), free_port()
    site = (ROOT / "deploy" / "nginx.conf").read_text()
    for shipped, here in (("listen 443 ssl http2;", f"listen 127.0.0.1:{tls_port} ssl http2;"),
                          ("listen 80;", f"listen 127.0.0.1:{plain_port};"),
                          ("server 127.0.0.1:8000;", f"server 127.0.0.1:{upstream.server_port};"),
                          ("/etc/ssl/certs/api.example.com.pem", str(tmp_path / "cert.pem")),
                          ("/etc/ssl/private/api.example.com.key", str(tmp_path / "key.pem"))):
        assert shipped in site, f"deploy/nginx.conf no longer has {shipped!r}: update this test"
        site = site.replace(shipped, here)
    site = site.replace("/var/log/nginx/", f"{tmp_path}/")  # its own access log, if it names one
    (tmp_path / "site.conf").write_text(site)
    (tmp_path / "nginx.conf").write_text(  # how a distribution's nginx.conf includes a site: inside http {}
        f"daemon off;\nmaster_process off;\npid {tmp_path / 'nginx.pid'};\nerror_log {tmp_path / 'error.log'};\n"
        f"events {{}}\nhttp {{\n  access_log {tmp_path / 'default.access.log'} combined;\n"  # nginx's default format
        f"  include {tmp_path / 'site.conf'};\n}}\n")
    command = [NGINX, "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")]
    checked = subprocess.run([*command, "-t"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while True:
            assert process.poll() is None and time.monotonic() < deadline, (tmp_path / "error.log").read_text()
            try:
                socket.create_connection(("127.0.0.1", tls_port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield tls_port, plain_port, tmp_path
    finally:
        process.send_signal(signal.SIGQUIT)
        process.wait(timeout=10)
        upstream.shutdown()


def get(connection: http.client.HTTPConnection, target: str) -> int:
    connection.request("GET", target, headers={"Host": "api.example.com", "Referer": f"https://x.test/?api_key={KEY}"})
    response = connection.getresponse()
    response.read()
    return response.status


def access_logs(directory: Path) -> str:
    """What nginx wrote to every access log there: the site's own, or the default one if the site names none."""
    return "".join(path.read_text() for path in sorted(directory.glob("*access*.log")))


def test_the_access_log_keeps_the_path_but_no_key(nginx):
    tls_port, plain_port, logs = nginx
    secure = http.client.HTTPSConnection("127.0.0.1", tls_port, context=ssl._create_unverified_context(), timeout=10)
    targets = [f"/v1/person/retrieve/p1?api_key={KEY}&pretty=true", f"/v2/person/enrich?%61pi_key={KEY}",
               f"/v1/person/search?api_k%65y={KEY}", f"/openapi.json?api_key={KEY}"]
    assert [get(secure, target) for target in targets] == [200, 200, 200, 200]
    assert get(http.client.HTTPConnection("127.0.0.1", plain_port, timeout=10), f"/v1/jobs?api_key={KEY}") == 301
    deadline = time.monotonic() + 5
    while access_logs(logs).count("\n") < len(targets) + 1 and time.monotonic() < deadline:
        time.sleep(0.05)  # nginx writes its access line after the answer
    logged = access_logs(logs)
    assert logged.count("\n") == len(targets) + 1, logged
    assert "/v1/person/retrieve/p1" in logged and "/v1/jobs" in logged and "301" in logged
    assert KEY not in logged
    assert not (logs / "default.access.log").read_text(), "the site's requests went to nginx's default access log"
