"""Which threads serve requests for as long as their process lives: the web server marks them (app.server.gthread_worker),
and per-thread resources that outlive a request (a kept database connection, app.data.db) are only kept on those."""

from __future__ import annotations

import threading

_marks = threading.local()


def mark_long_lived_request_thread() -> None:
    """Call on the thread itself (a thread pool's initializer): it will serve requests until its process exits."""
    _marks.long_lived = True


def is_long_lived_request_thread() -> bool:
    """Whether the current thread was marked. Test clients, thread-per-request servers and job threads are not: a
    thread that ends holding a kept resource would leak it."""
    return getattr(_marks, "long_lived", False)
