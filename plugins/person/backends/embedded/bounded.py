"""A search kept to its deadline: it runs on a thread of its own that the request stops waiting for at the deadline
(the engine cannot stop one call), and checks the deadline between engine calls and inside the Python loops around them,
so a search abandoned by its request ends at its next check."""

from __future__ import annotations

from typing import Callable, TypeVar

import orjson
import tantivy
from tantivy import Query

from plugins.person.backends import SearchDeadline, SearchTimedOut
from plugins.person.backends.embedded.fanout import Part, ProcessPool, fanned_search, locate

CHECK_EVERY = 256  # steps of a Python loop (terms enumerated, hits read or explained) between deadline checks
# searches of one process running at once: their requests are answered 503 at the deadline, and an abandoned one still
# runs to its next check (one engine call), so at most this many run past their deadlines; the rest queue for a thread
DEADLINE_THREADS = 8
_DEADLINE_POOL = ProcessPool("person-deadline")
Result = TypeVar("Result")


def run_by(deadline: SearchDeadline, search: Callable[..., Result], *args, **kwargs) -> Result:
    """`search(*args, **kwargs)` on a thread of the deadline pool, its result or SearchTimedOut once the deadline has
    passed, whether the search is running one engine call, between two, or still waiting for a thread."""
    future = _DEADLINE_POOL.executor(DEADLINE_THREADS).submit(search, *args, **kwargs)
    try:
        return future.result(timeout=max(0.0, deadline.remaining()))
    except TimeoutError:
        future.cancel()  # not begun: never runs
        raise SearchTimedOut(deadline.seconds) from None


class BoundedSearcher:
    """A tantivy Searcher whose `search` checks the deadline before and after each engine call (and runs on every part,
    `threads` at once, when `parts` are given: fanout.py), and whose `check` the loops call every
    CHECK_EVERY steps; everything else is the engine's searcher (`engine`, for calls that need it)."""

    def __init__(self, engine: tantivy.Searcher, deadline: SearchDeadline | None, parts: tuple[Part, ...] = (),
                 threads: int = 1):
        self.engine = engine
        self.deadline = deadline
        self.parts = parts
        self.threads = threads

    def search(self, *args, **kwargs):
        self.check()
        result = fanned_search(self.parts, self.threads, *args, **kwargs) if self.parts else self.engine.search(*args, **kwargs)
        self.check()
        return result

    def score(self, query: Query, address) -> float:
        """The relevance score `query` gives the hit at `address`, by the statistics its search ranked it with (its
        part's, on a split index)."""
        searcher, local = locate(self.parts, address) or (self.engine, address)
        return float(orjson.loads(query.explain(searcher, local).to_json())["value"])

    def check(self, step: int = 0) -> None:
        """SearchTimedOut once the deadline has passed; `step` (a loop's counter) checks every CHECK_EVERY steps only."""
        if self.deadline is not None and step % CHECK_EVERY == 0:
            self.deadline.check()

    def __getattr__(self, name):
        return getattr(self.engine, name)
