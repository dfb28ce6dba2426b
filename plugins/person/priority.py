"""CPU priority for a load applied while the machine serves searches: it runs on the cycles searches
leave idle."""

from __future__ import annotations

import logging
import os

log = logging.getLogger("hirekit.person.load")

# where SCHED_IDLE is missing (or refused), a lower priority that still yields most of a core
BACKGROUND_NICENESS = 10


def run_in_background() -> str:
    """Lower this process's CPU priority for the rest of its life; the threads and processes it
    starts afterwards inherit it.

    SCHED_IDLE (Linux) runs the load only when no normal thread wants a core, and a search thread
    waking up preempts it at once; nice 10 alone still takes about a tenth of each core searches are
    using, and a search can wait for the loader's time slice to end. Returns the priority set, for
    the operator's log."""
    os.nice(BACKGROUND_NICENESS)
    idle = getattr(os, "SCHED_IDLE", None)
    if idle is None:
        return f"nice {BACKGROUND_NICENESS}"
    try:
        os.sched_setscheduler(0, idle, os.sched_param(0))
    except OSError as error:  # e.g. a seccomp profile refusing it: nice alone still applies
        log.warning(
            "could not switch the load to idle CPU priority (%s); it runs at nice %d",
            error,
            BACKGROUND_NICENESS,
        )
        return f"nice {BACKGROUND_NICENESS}"
    return "idle CPU priority (SCHED_IDLE)"
