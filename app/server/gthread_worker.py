"""A gunicorn gthread worker that slow clients cannot starve: see deploy/gunicorn.conf.py for the
figures behind it.

gunicorn's own gthread worker hands every new connection to a pool thread, which waits up to 5 s for
the first byte and then reads the request head with no deadline at all: as many silent or dribbling
clients as a worker has threads stall that worker. Here a new connection's request head (request
line and headers) is read by the worker's poller, without a thread, and must be complete within
HIREKIT_WEB_HEADER_TIMEOUT seconds or the connection is closed; only a complete head is handed to a
thread. A kept-alive connection's next head is read by its thread, under the same deadline (the
socket is shut down when it passes). Request bodies are read by the application's thread as it
consumes them: a slow body holds one thread, which is why nginx (deploy/nginx.conf) buffers bodies
in front.

What gunicorn refuses itself (a malformed request, a request line or headers past the limits:
app.server.server_refusals) is answered in the API's one JSON error body, not gunicorn's HTML page,
and logged without the request's keys.
"""

from __future__ import annotations

import datetime
import errno
import os
import selectors
import socket
import ssl
import threading
import time
from functools import partial

from gunicorn import http, util
from gunicorn.http import errors as http_errors
from gunicorn.http.message import Message
from gunicorn.http.wsgi import Response, default_environ
from gunicorn.http2 import negotiation
from gunicorn.workers.gthread import TConn, ThreadWorker

from app.server import server_refusals
from app.server.observability import new_request_id

# What this worker relies on in gunicorn's gthread worker, which gunicorn does not document for
# subclassing (tests/test_private_overrides.py checks it against the code), each with what a user
# would notice without it (tests/test_slowloris.py, tests/test_gunicorn_refusals.py; 2 workers x 4
# threads, a normal client asking GET /v1/jobs).
PRIVATE_OVERRIDES = {
    "gunicorn": {
        "HeadDeadlineThreadWorker.accept overrides gunicorn.workers.gthread.ThreadWorker": "new "
        "connections wait in the poller, not on a thread: with stock gthread 8 silent connections "
        "delayed a "
        "normal client 5 s and 100 delayed it 60 s; here 200 silent connections left its median at "
        "4 ms",
        "HeadDeadlineThreadWorker.on_pending_socket_readable overrides "
        "gunicorn.workers.gthread.ThreadWorker": "request "
        "heads gathered by the poller: 8 clients dribbling a header line a second blocked stock "
        "gthread "
        "until they stopped (a 60 s client timeout expired); here 100 left the normal client's "
        "worst at 120 ms",
        "HeadDeadlineThreadWorker.handle overrides gunicorn.workers.gthread.ThreadWorker": "a "
        "kept-alive connection's next head must be complete within HIREKIT_WEB_HEADER_TIMEOUT (10 "
        "s), or its "
        "thread is freed; stock gthread reads it with no deadline",
        "HeadDeadlineThreadWorker.handle_request "
        "overrides gunicorn.workers.gthread.ThreadWorker": "ends "
        "the head deadline once the head is read (the 10 s bound the head, not the application)",
        "HeadDeadlineThreadWorker.init_process "
        "overrides gunicorn.workers.gthread.ThreadWorker": "starts "
        "the thread that cuts heads late past 10 s (checked every 0.25 s)",
    }
}
HEAD_TIMEOUT_SECONDS = float(os.environ.get("HIREKIT_WEB_HEADER_TIMEOUT", "10"))
DEADLINE_CHECK_SECONDS = 0.25
HEAD_END = b"\r\n\r\n"
# past this, the thread's parser answers the oversized head (431/400) as gunicorn does
HEAD_READ_LIMIT = 64 * 1024
# gunicorn's parse errors -> the refusal answering them; the first matching class wins. A response
# header the application sent is the application's fault (500); an error not listed (a
# ParseException gunicorn adds later is caught by the last row) is a 500 too, logged with its
# traceback.
REFUSALS = (
    ((http_errors.InvalidResponseHeader, http_errors.InvalidResponseHeaderName), None),
    (http_errors.LimitRequestLine, server_refusals.REQUEST_LINE_TOO_LONG),
    (http_errors.LimitRequestHeaders, server_refusals.HEADERS_TOO_LARGE),
    (http_errors.ExpectationFailed, server_refusals.EXPECTATION_FAILED),
    (http_errors.UnsupportedTransferCoding, server_refusals.UNSUPPORTED_TRANSFER_CODING),
    ((http_errors.ForbiddenProxyRequest, ssl.SSLError), server_refusals.FORBIDDEN_PEER),
    (http_errors.ConfigurationProblem, server_refusals.SERVER_ERROR),
    (
        (
            http_errors.InvalidRequestLine,
            http_errors.InvalidRequestMethod,
            http_errors.InvalidHTTPVersion,
        ),
        server_refusals.MALFORMED_REQUEST_LINE,
    ),
    (
        (
            http_errors.InvalidHeader,
            http_errors.InvalidHeaderName,
            http_errors.ObsoleteFolding,
            http_errors.InvalidSchemeHeaders,
        ),
        server_refusals.MALFORMED_HEADERS,
    ),
    (
        (
            http_errors.InvalidChunkSize,
            http_errors.ChunkMissingTerminator,
            http_errors.InvalidChunkExtension,
        ),
        server_refusals.MALFORMED_CHUNKED_BODY,
    ),
    (http_errors.ParseException, server_refusals.MALFORMED_REQUEST),
)


def refusal_for(error: BaseException) -> server_refusals.Refusal | None:
    """The refusal answering a client's malformed request, None when the error is the server's own
    (a 500)."""
    return next((refusal for kinds, refusal in REFUSALS if isinstance(error, kinds)), None)


class HeadDeadlineThreadWorker(ThreadWorker):
    """gthread, with new connections parked in the poller and a deadline on every request head."""

    def init_process(self):
        self.head_deadlines: dict[TConn, float] = {}
        self.deadline_lock = threading.Lock()
        threading.Thread(target=self.cut_late_heads, name="head-deadlines", daemon=True).start()
        super().init_process()  # runs the worker loop

    def accept(self, listener):
        """A new connection waits in the poller, costing no thread, until it sends data (or its
        keepalive ends)."""
        try:
            client_sock, client_addr = listener.accept()
        except OSError as error:
            if error.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        # non-blocking until a thread takes it
        conn = TConn(self.cfg, client_sock, client_addr, listener.getsockname())
        conn.timeout = time.monotonic() + HEAD_TIMEOUT_SECONDS  # murder_pending closes it past this
        conn.head = b""
        self.pending_conns.append(conn)
        self.poller.register(
            client_sock, selectors.EVENT_READ, partial(self.on_pending_socket_readable, conn)
        )

    def on_pending_socket_readable(self, conn, client):
        """Gather the request head here, in the poller; a thread gets the connection once the head
        is complete."""
        if (
            self.cfg.is_ssl
            or negotiation.prior_knowledge_allowed(self.cfg, conn.client)
            or not hasattr(conn, "head")
        ):
            # TLS and HTTP/2 preface sniffing: gunicorn's way
            return super().on_pending_socket_readable(conn, client)
        try:
            chunk = conn.sock.recv(HEAD_READ_LIMIT)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:  # the client went away before finishing its head
            self.poller.unregister(client)
            self.pending_conns.remove(conn)
            self.nr_conns -= 1
            conn.close()
            return
        conn.head += chunk
        if HEAD_END in conn.head or len(conn.head) >= HEAD_READ_LIMIT:
            conn.parser = http.get_parser(self.cfg, conn.sock, conn.client)
            conn.parser.unreader.unread(conn.head)
            conn.head = b""
            super().on_pending_socket_readable(conn, client)

    def handle(self, conn):
        """Read and serve one request; the head (request line and headers) must be complete before
        the deadline."""
        with self.deadline_lock:
            self.head_deadlines[conn] = time.monotonic() + HEAD_TIMEOUT_SECONDS
        try:
            return super().handle(conn)
        finally:
            self.forget(conn)

    def handle_request(self, req, conn):
        # the head arrived in time; the application's own time is `timeout`'s business
        self.forget(conn)
        return super().handle_request(req, conn)

    def handle_error(self, req, client, addr, exc):
        """gunicorn's handle_error, answering in the one JSON error body with an X-Request-Id; the
        log line names the request id and carries no key
        (app.server.observability.RedactingGunicornLogger redacts every gunicorn message)."""
        addr = addr or ("", -1)  # a unix socket's peer
        refusal, request_id = refusal_for(exc), new_request_id()
        if refusal is not None:
            self.log.warning(
                "Invalid request from ip=%s: %s",
                addr[0],
                exc,
                extra={"request_id": request_id, "status": refusal.status},
            )
        else:
            refusal = server_refusals.SERVER_ERROR
            self.log.exception(
                "Error handling request %s %s",
                getattr(req, "method", "-"),
                getattr(req, "uri", "(no URI read)"),
                extra={"request_id": request_id},
            )
        limits = {
            "limit_request_line": self.cfg.limit_request_line,
            "limit_request_fields": self.cfg.limit_request_fields,
            "limit_request_field_size": self.cfg.limit_request_field_size,
        }
        body = refusal.body(limits, request_id)
        # a bad header names its request
        if req is None and isinstance(getattr(exc, "req", None), Message):
            req = exc.req
        # gunicorn access-logs a refusal it parsed far enough to have a request for
        if req is not None:
            environ = default_environ(req, client, self.cfg)
            environ["REMOTE_ADDR"], environ["REMOTE_PORT"] = addr[0], str(addr[1])
            response = Response(req, client, self.cfg)
            response.status = f"{refusal.status} {refusal.reason}"
            response.response_length = len(body)
            self.log.access(response, req, environ, datetime.timedelta(0))
        try:
            util.write_nonblock(client, refusal.response(body, request_id))
        except Exception:  # the client may be gone; gunicorn ignores this too
            self.log.debug("Failed to send error message.")

    def forget(self, conn) -> None:
        with self.deadline_lock:
            self.head_deadlines.pop(conn, None)

    def cut_late_heads(self) -> None:
        """Shut down the sockets of heads past their deadline: the blocked read returns and frees
        its thread."""
        while True:
            time.sleep(DEADLINE_CHECK_SECONDS)
            now = time.monotonic()
            with self.deadline_lock:
                late = [conn for conn, deadline in self.head_deadlines.items() if deadline <= now]
                for conn in late:
                    del self.head_deadlines[conn]
            for conn in late:
                self.log.info(
                    "closing %s: request head not complete within %.0f s",
                    conn.client,
                    HEAD_TIMEOUT_SECONDS,
                )
                try:
                    conn.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
