"""deploy/nginx.conf run by a real nginx for tests: its ports, TLS files, upstreams and logs moved
to loopback and a temporary directory."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.ports import free_port

ROOT = Path(__file__).resolve().parent.parent
NGINX = shutil.which("nginx") or next(
    (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if Path(p).exists()), None
)
OPENSSL = shutil.which("openssl")
MISSING = (
    "nginx is not installed (Debian: apt-get install nginx-light), so deploy/nginx.conf cannot be "
    "run here"
    if NGINX is None
    else "openssl is not installed: no certificate for the TLS server block"
    if OPENSSL is None
    else ""
)


@dataclass
class Site:
    tls_port: int
    plain_port: int
    directory: Path  # its logs are here


@contextmanager
def nginx_site(directory: Path, app_port: int, relay_ports: tuple[int, ...] | list[int] = ()):
    """A Site: nginx serving deploy/nginx.conf with gunicorn's upstream at `app_port` and the
    relay's upstream at `relay_ports` (more than one relay process, as docs/operating.md says to run
    them for more calls)."""
    subprocess.run(
        [
            OPENSSL,
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=api.example.com",
            "-keyout",
            str(directory / "key.pem"),
            "-out",
            str(directory / "cert.pem"),
        ],
        check=True,
        capture_output=True,
    )
    tls_port, plain_port = free_port(), free_port()
    site = (ROOT / "deploy" / "nginx.conf").read_text()
    moves = [
        ("listen 443 ssl http2;", f"listen 127.0.0.1:{tls_port} ssl http2;"),
        ("listen 80;", f"listen 127.0.0.1:{plain_port};"),
        ("server 127.0.0.1:8000;", f"server 127.0.0.1:{app_port};"),
        ("/etc/ssl/certs/api.example.com.pem", str(directory / "cert.pem")),
        ("/etc/ssl/private/api.example.com.key", str(directory / "key.pem")),
    ]
    if relay_ports:
        servers = "\n    ".join(f"server 127.0.0.1:{port};" for port in relay_ports)
        moves.append(("server 127.0.0.1:8001;", servers))
    for shipped, here in moves:
        assert shipped in site, (
            f"deploy/nginx.conf no longer has {shipped!r}: update tests/nginx_site.py"
        )
        site = site.replace(shipped, here)
    site = site.replace("/var/log/nginx/", f"{directory}/")  # its own access log, if it names one
    (directory / "site.conf").write_text(site)
    # how a distribution's nginx.conf includes a site: inside http {}
    (directory / "nginx.conf").write_text(
        f"daemon off;\nmaster_process off;\npid {directory / 'nginx.pid'};\nerror_log "
        f"{directory / 'error.log'};\n"
        # nginx's default format
        f"events {{}}\nhttp {{\n  access_log {directory / 'default.access.log'} combined;\n"
        f"  include {directory / 'site.conf'};\n}}\n"
    )
    command = [NGINX, "-p", str(directory), "-c", str(directory / "nginx.conf")]
    checked = subprocess.run([*command, "-t"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while True:
            assert process.poll() is None and time.monotonic() < deadline, (
                directory / "error.log"
            ).read_text()
            try:
                socket.create_connection(("127.0.0.1", tls_port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield Site(tls_port, plain_port, directory)
    finally:
        process.send_signal(signal.SIGQUIT)
        process.wait(timeout=10)
