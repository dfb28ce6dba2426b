"""One deadline for a whole webhook send: a socket timeout bounds each read, so a receiver trickling
a byte at a time could hold a send (and, for a test event, a request thread) for as long as it
liked. Here a watchdog thread shuts the send's connection down when its deadline passes, wherever
the send is blocked: TLS handshake, request, status line, headers or body.

Usage: `with bounded(seconds) as deadline:` around the send; the transport's connections call
`current().guard(sock)` for each socket the send uses (a new one, or a kept-alive one reused), and
the send asks `deadline.expired` afterwards.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import os
import socket
import threading
import time
from collections.abc import Iterator

_local = threading.local()


class SendDeadline:
    """The moment one send must be over by, and the sockets to shut down then."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        self.expired = False
        self.finished = False
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []

    def remaining(self) -> float:
        return max(0.0, self.at - time.monotonic())

    def guard(self, sock: socket.socket) -> None:
        """Shut `sock`'s connection down at the deadline. Through a duplicate of its descriptor: the
        duplicate stays usable when the socket object is wrapped in TLS (which detaches it), and
        closing it never closes the original."""
        duplicate = socket.fromfd(sock.fileno(), sock.family, sock.type)
        with self._lock:
            if self.finished:
                duplicate.close()
                return
            self._sockets.append(duplicate)
            if self.expired:
                _shut_down(duplicate)

    def expire(self) -> None:
        """The watchdog's call at the deadline: every guarded connection is shut down, so a blocked
        read returns."""
        with self._lock:
            if self.finished:
                return
            self.expired = True
            for sock in self._sockets:
                _shut_down(sock)

    def finish(self) -> None:
        """The send is over: nothing is shut down after this, and the duplicates are closed."""
        with self._lock:
            self.finished = True
            for sock in self._sockets:
                sock.close()
            self._sockets.clear()


def _shut_down(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already closed by the peer or by the send itself
        pass


class Watchdog:
    """One thread per process that expires each watched deadline when it passes (a heap, woken for
    an earlier one)."""

    def __init__(self):
        self._wake = threading.Condition()
        self._due: list[tuple[float, int, SendDeadline]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def watch(self, deadline: SendDeadline) -> None:
        with self._wake:
            heapq.heappush(self._due, (deadline.at, next(self._order), deadline))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="webhook-send-deadlines", daemon=True
                )
                self._thread.start()
            if self._due[0][2] is deadline:  # sooner than what the thread waits for
                self._wake.notify()

    def _run(self) -> None:
        with self._wake:
            while True:
                while self._due and self._due[0][2].finished:
                    heapq.heappop(self._due)
                if not self._due:
                    self._wake.wait()
                    continue
                wait = self._due[0][0] - time.monotonic()
                if wait > 0:
                    self._wake.wait(wait)
                    continue
                heapq.heappop(self._due)[2].expire()


_watchdog = Watchdog()


def _new_watchdog_after_fork() -> None:
    """A forked child (an RQ work horse, a gunicorn worker) has no watchdog thread: it starts its
    own when it sends."""
    global _watchdog
    _watchdog = Watchdog()


os.register_at_fork(after_in_child=_new_watchdog_after_fork)


@contextlib.contextmanager
def bounded(seconds: float) -> Iterator[SendDeadline]:
    """The send inside takes at most `seconds`: its guarded sockets are shut down when they run
    out."""
    deadline = SendDeadline(seconds)
    _watchdog.watch(deadline)
    _local.deadline = deadline
    try:
        yield deadline
    finally:
        _local.deadline = None
        deadline.finish()


def current() -> SendDeadline | None:
    """The deadline of the send running in this thread, if any."""
    return getattr(_local, "deadline", None)
