"""Keeps a gunicorn worker's memory from staying at the size of its largest answers.

glibc's malloc raises its mmap threshold every time a large block is freed (up to 32 MiB on 64-bit),
so after one large answer (a person search page, an MCP batch, a resume) later blocks of that size
are carved from the heap, and the pages they free stay with the process; and each request thread
gets an arena of its own to fragment. A fixed threshold gives every block over it back to the system
when it is freed, and two arenas bound the fragmentation a worker's threads can spread. Measured by
bench/noisy_neighbour.py (worker RSS after a tenant's heaviest requests against its idle size).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

log = logging.getLogger(__name__)

M_MMAP_THRESHOLD = -3  # mallopt parameters, from glibc's malloc.h
M_ARENA_MAX = -8
MMAP_THRESHOLD_BYTES = 128 * 1024  # glibc's own starting value, now fixed
ARENA_MAX = 2


def bound_heap_growth() -> bool:
    """Fix the mmap threshold and cap the arenas of this process (call before its request threads
    start); False where the C library has no mallopt (musl) and nothing changed."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        log.info("no glibc mallopt: the worker's heap keeps the C library's defaults")
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and bool(
        mallopt(M_ARENA_MAX, ARENA_MAX)
    )
