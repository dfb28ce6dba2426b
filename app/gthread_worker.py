"""A gunicorn gthread worker that slow clients cannot starve: see deploy/gunicorn.conf.py for the figures behind it.

gunicorn's own gthread worker hands every new connection to a pool thread, which waits up to 5 s for the first byte
and then reads the request head with no deadline at all: as many silent or dribbling clients as a worker has threads
stall that worker. Here a new connection's request head (request line and headers) is read by the worker's poller,
without a thread, and must be complete within HIREKIT_WEB_HEADER_TIMEOUT seconds or the connection is closed; only a
complete head is handed to a thread. A kept-alive connection's next head is read by its thread, under the same
deadline (the socket is shut down when it passes). Request bodies are read by the application's thread as it
consumes them: a slow body holds one thread, which is why nginx (deploy/nginx.conf) buffers bodies in front.
"""

from __future__ import annotations

import errno
import os
import selectors
import socket
import threading
import time
from functools import partial

from gunicorn import http
from gunicorn.http2 import negotiation
from gunicorn.workers.gthread import TConn, ThreadWorker

HEAD_TIMEOUT_SECONDS = float(os.environ.get("HIREKIT_WEB_HEADER_TIMEOUT", "10"))
DEADLINE_CHECK_SECONDS = 0.25
HEAD_END = b"\r\n\r\n"
HEAD_READ_LIMIT = 64 * 1024  # past this, the thread's parser answers the oversized head (431/400) as gunicorn does
# Least-connections accept: every worker's poller wakes for a new connection, and the one that calls accept() first
# keeps it for the connection's life. A burst of keep-alive clients (wrk, or nginx's upstream pool) could all land on
# one worker and leave the other idle (seen: half the throughput in a quarter of runs). A worker waits this long per
# connection it already holds before accepting, so the least loaded worker wins the race.
ACCEPT_DEFER_SECONDS_PER_CONNECTION = 0.0001
ACCEPT_DEFER_MAX_CONNECTIONS = 20


class HeadDeadlineThreadWorker(ThreadWorker):
    """gthread, with new connections parked in the poller and a deadline on every request head."""

    def init_process(self):
        self._head_deadlines: dict[TConn, float] = {}
        self._deadline_lock = threading.Lock()
        threading.Thread(target=self._cut_late_heads, name="head-deadlines", daemon=True).start()
        super().init_process()  # runs the worker loop

    def accept(self, listener):
        """A new connection waits in the poller, costing no thread, until it sends data (or its keepalive ends)."""
        if self.nr_conns and self.cfg.workers > 1:
            time.sleep(min(self.nr_conns, ACCEPT_DEFER_MAX_CONNECTIONS) * ACCEPT_DEFER_SECONDS_PER_CONNECTION)
        try:
            client_sock, client_addr = listener.accept()
        except OSError as error:
            if error.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        conn = TConn(self.cfg, client_sock, client_addr, listener.getsockname())  # non-blocking until a thread takes it
        conn.timeout = time.monotonic() + HEAD_TIMEOUT_SECONDS  # murder_pending closes it past this
        conn.head = b""
        self.pending_conns.append(conn)
        self.poller.register(client_sock, selectors.EVENT_READ, partial(self.on_pending_socket_readable, conn))

    def on_pending_socket_readable(self, conn, client):
        """Gather the request head here, in the poller; a thread gets the connection once the head is complete."""
        if self.cfg.is_ssl or negotiation.prior_knowledge_allowed(self.cfg, conn.client) or not hasattr(conn, "head"):
            return super().on_pending_socket_readable(conn, client)  # TLS and HTTP/2 preface sniffing: gunicorn's way
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
        """Read and serve one request; the head (request line and headers) must be complete before the deadline."""
        with self._deadline_lock:
            self._head_deadlines[conn] = time.monotonic() + HEAD_TIMEOUT_SECONDS
        try:
            return super().handle(conn)
        finally:
            self._forget(conn)

    def handle_request(self, req, conn):
        self._forget(conn)  # the head arrived in time; the application's own time is `timeout`'s business
        return super().handle_request(req, conn)

    def _forget(self, conn) -> None:
        with self._deadline_lock:
            self._head_deadlines.pop(conn, None)

    def _cut_late_heads(self) -> None:
        """Shut down the sockets of heads past their deadline: the blocked read returns and frees its thread."""
        while True:
            time.sleep(DEADLINE_CHECK_SECONDS)
            now = time.monotonic()
            with self._deadline_lock:
                late = [conn for conn, deadline in self._head_deadlines.items() if deadline <= now]
                for conn in late:
                    del self._head_deadlines[conn]
            for conn in late:
                self.log.info("closing %s: request head not complete within %.0f s", conn.client, HEAD_TIMEOUT_SECONDS)
                try:
                    conn.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
