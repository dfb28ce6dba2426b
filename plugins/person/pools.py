"""The process pools a load or a sample uses, whose children die when the pool is terminated: a
child inherits its parent's SIGTERM handler, and one that only notes the signal (an RQ worker's warm
shutdown) left `Pool.terminate()` waiting on an idle child for ever."""

from __future__ import annotations

import multiprocessing
import signal
from typing import Callable


def _start_child(initializer: Callable | None, initargs: tuple) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if initializer is not None:
        initializer(*initargs)


def fork_pool(
    processes: int, initializer: Callable | None = None, initargs: tuple = ()
) -> multiprocessing.pool.Pool:
    """A fork-context Pool of `processes` children, each with SIGTERM's default action, then
    `initializer(*initargs)`."""
    return multiprocessing.get_context("fork").Pool(
        processes, initializer=_start_child, initargs=(initializer, initargs)
    )
