"""The HTTP side of a delivery: one keep-alive session per thread, connected to the address egress
checked, no redirects, one deadline for the whole send (plugins.webhooks.deadline) and at most
MAX_RESPONSE_BYTES of the answer read."""

from __future__ import annotations

import os
import ssl
import threading
import time
from dataclasses import dataclass

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import NewConnectionError

from plugins.webhooks import deadline
from plugins.webhooks.egress import Target

MAX_RESPONSE_BYTES = 2048  # of a receiver's answer, kept in the attempt log; the rest is never read
CONNECT_TIMEOUT = 5.0  # seconds at most for one address's TCP connect, within the send's deadline
USER_AGENT = "Hirekit-Webhooks/1.0"

_local = threading.local()


def guard_socket(holder, sock) -> None:
    """Have the running send's deadline shut `sock` down, once per deadline for what `holder` (a
    connection or a TLS context) holds."""
    send_deadline = deadline.current()
    if (
        send_deadline is not None
        and sock is not None
        and getattr(holder, "guarded_by", None) is not send_deadline
    ):
        send_deadline.guard(sock)
        holder.guarded_by = send_deadline


class GuardedHTTPConnection(HTTPConnection):
    """A connection whose socket the running send's deadline shuts down: a new one once connected, a
    kept-alive one when a send reuses it."""

    def connect(self):
        super().connect()
        guard_socket(self, self.sock)

    def request(self, *args, **kwargs):
        guard_socket(self, self.sock)
        return super().request(*args, **kwargs)


class GuardedHTTPSConnection(HTTPSConnection):
    """As GuardedHTTPConnection; a new socket is guarded before its TLS handshake by
    GuardedTLSContext."""

    def request(self, *args, **kwargs):
        guard_socket(self, self.sock)
        return super().request(*args, **kwargs)


class GuardedTLSContext(ssl.SSLContext):
    """A client TLS context (certificates and host names verified) that puts each socket under the
    running send's deadline before the handshake, so a receiver trickling its handshake is cut at
    the deadline too."""

    def wrap_socket(self, sock, *args, **kwargs):
        send_deadline = deadline.current()
        if send_deadline is not None:
            send_deadline.guard(sock)
        return super().wrap_socket(sock, *args, **kwargs)


def tls_context(verify) -> GuardedTLSContext:
    """Verifying against `verify` (requests' setting: a CA bundle file or directory, or True for
    requests' bundle)."""
    context = GuardedTLSContext(ssl.PROTOCOL_TLS_CLIENT)
    bundle = verify if isinstance(verify, str) else requests.certs.where()
    if os.path.isdir(bundle):
        context.load_verify_locations(capath=bundle)
    else:
        context.load_verify_locations(cafile=bundle)
    return context


class GuardedHTTPConnectionPool(HTTPConnectionPool):
    ConnectionCls = GuardedHTTPConnection


class GuardedHTTPSConnectionPool(HTTPSConnectionPool):
    ConnectionCls = GuardedHTTPSConnection


class PinnedAdapter(HTTPAdapter):
    """Connects to the address egress checked for the request (`request.target`), never to a fresh
    lookup of its name.

    Connection pools are keyed by that address; TLS still sends the host name (SNI) and verifies the
    certificate against it, and the Host header carries it. A request without a checked target is
    refused. Its connections are guarded by the send's deadline."""

    def __init__(self, *args, **kwargs):
        # by the `verify` they check certificates against
        self.tls_contexts: dict[str, GuardedTLSContext] = {}
        super().__init__(*args, **kwargs)

    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {
            "http": GuardedHTTPConnectionPool,
            "https": GuardedHTTPSConnectionPool,
        }

    def build_connection_pool_key_attributes(self, request, verify, cert=None):
        host_params, pool_kwargs = super().build_connection_pool_key_attributes(
            request, verify, cert
        )
        target = getattr(request, "target", None)
        if not isinstance(target, Target):
            raise ValueError("a webhook request is sent only to an address egress has checked")
        host_params.update(scheme=target.scheme, host=target.addresses[0], port=target.port)
        if target.scheme == "https":
            pool_kwargs["server_hostname"] = target.hostname
            if str(verify) not in self.tls_contexts:
                self.tls_contexts[str(verify)] = tls_context(verify)
            pool_kwargs["ssl_context"] = self.tls_contexts[str(verify)]
        return host_params, pool_kwargs


def session() -> requests.Session:
    if getattr(_local, "session", None) is None:
        _local.session = requests.Session()
        _local.session.headers["User-Agent"] = USER_AGENT
        for prefix in ("http://", "https://"):
            _local.session.mount(prefix, PinnedAdapter())
        # Nothing from the environment but the CA bundle: a proxy would resolve the name itself
        # (undoing the pin), and .netrc credentials never go to webhook targets. Read once (requests
        # would read it on every request, ~0.5 ms).
        _local.session.trust_env = False
        _local.session.verify = (
            os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or True
        )
    return _local.session


@dataclass(frozen=True)
class Outcome:
    """What one attempt got: a status code, or the error that prevented one."""

    status_code: int | None
    duration_ms: int
    error: str | None = None
    response_body: str | None = None
    retry_after: float | None = None

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def _retry_after_seconds(value: str | None) -> float | None:
    if value and value.strip().isdigit():
        return float(value.strip())
    return None


def send(
    method: str,
    target: Target,
    body: bytes,
    headers: dict,
    *,
    timeout: float,
    max_response_bytes: int = MAX_RESPONSE_BYTES,
) -> Outcome:
    """Send once to the target's checked addresses (the next one only when one refuses the
    connection); a 3xx is a failure (redirects are not followed), errors become Outcome.error. The
    whole send, connect to the last byte read of the (capped) response, ends within `timeout`
    seconds: past it its connection is shut down and it timed out. At most `max_response_bytes` of
    the answer are read and kept."""
    started = time.perf_counter()
    http = session()
    timed_out = f"timed out after {timeout:g} s"
    with deadline.bounded(timeout) as send_deadline:
        while True:
            remaining = send_deadline.remaining()
            if remaining <= 0:
                return Outcome(None, _elapsed_ms(started), error=timed_out)
            try:
                request = http.prepare_request(
                    requests.Request(
                        method,
                        target.url,
                        data=body,
                        headers={**headers, "Host": target.host_header},
                    )
                )
                request.target = target
                with http.send(
                    request,
                    timeout=(min(remaining, CONNECT_TIMEOUT), remaining),
                    allow_redirects=False,
                    stream=True,
                ) as response:
                    excerpt = response.raw.read(max_response_bytes + 1, decode_content=True)
                    # shut down mid-answer: what was read may be cut short
                    if send_deadline.expired:
                        return Outcome(None, _elapsed_ms(started), error=timed_out)
                    if len(excerpt) <= max_response_bytes:
                        # read to its end: the connection goes back to the keep-alive pool
                        response.raw.release_conn()
                    return Outcome(
                        status_code=response.status_code,
                        duration_ms=_elapsed_ms(started),
                        response_body=excerpt[:max_response_bytes].decode("utf-8", "replace")
                        or None,
                        retry_after=_retry_after_seconds(response.headers.get("Retry-After")),
                    )
            except requests.Timeout:
                return Outcome(None, _elapsed_ms(started), error=timed_out)
            except requests.ConnectionError as exc:
                if send_deadline.expired:
                    return Outcome(None, _elapsed_ms(started), error=timed_out)
                if _not_connected(exc) and target.fallback() is not None:
                    target = target.fallback()  # nothing was sent: the name's next checked address
                    continue
                return Outcome(
                    None, _elapsed_ms(started), error=f"connection failed: {_short(exc)}"
                )
            except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
                # the body read raises urllib3's own errors (a read timeout, a cut-off body) and
                # TLS's
                if send_deadline.expired or isinstance(exc, urllib3.exceptions.TimeoutError):
                    return Outcome(None, _elapsed_ms(started), error=timed_out)
                return Outcome(None, _elapsed_ms(started), error=f"request failed: {_short(exc)}")


def _not_connected(exc: requests.ConnectionError) -> bool:
    """The address refused the connection or was unreachable (not a timeout): the request never
    left."""
    return isinstance(
        getattr(exc.args[0] if exc.args else None, "reason", None), NewConnectionError
    )


def _elapsed_ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)


def _short(exc: Exception) -> str:
    text = str(exc)
    return text if len(text) <= 300 else text[:297] + "..."
