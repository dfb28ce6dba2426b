"""A searcher that keeps a search to its deadline. The engine cannot stop one call once begun, so
each engine call of a search whose calls may run long (query.may_run_long: automata, or many clauses
and words) runs on a thread of the process's deadline pool, and the request stops waiting for it at
the deadline (the call ends on its own thread, its result unread). Between calls, and inside the
Python loops around them, the deadline is checked for every search.

Only the engine call moves, and only for such searches: handing a call to another thread costs each
search two more takings of the interpreter lock, which the worker's other requests wait behind, so
short calls stay on the request's thread."""

from __future__ import annotations

import orjson
import tantivy
from tantivy import Query

from concurrent.futures import TimeoutError as FutureTimeout
from typing import Callable, TypeVar

from plugins.person.backends import SearchDeadline, SearchTimedOut
from plugins.person.backends.embedded.fanout import Part, ProcessPool, fanned_search, locate

# steps of a Python loop (terms enumerated, hits read or explained) between deadline checks
CHECK_EVERY = 256
# engine calls of one process running at once on the deadline pool: an abandoned call runs to its
# end there, so at most this many run past their deadlines; more wait for a thread, within their own
# deadlines
DEADLINE_THREADS = 8
_DEADLINE_POOL = ProcessPool("person-deadline")
Result = TypeVar("Result")


def run_by(deadline: SearchDeadline, call: Callable[..., Result], *args, **kwargs) -> Result:
    """`call(*args, **kwargs)` on a thread of the deadline pool: its result, or SearchTimedOut once
    the deadline has passed, whether the call is running or still waiting for a thread (then it
    never runs)."""
    future = _DEADLINE_POOL.executor(DEADLINE_THREADS).submit(call, *args, **kwargs)
    try:
        return future.result(timeout=max(0.0, deadline.remaining()))
    except FutureTimeout:
        future.cancel()
        raise SearchTimedOut(deadline.seconds) from None


class BoundedSearcher:
    """A tantivy Searcher whose `search` checks the deadline before and after each engine call (and
    runs on every part, `threads` at once, when `parts` are given: fanout.py), and whose `check` the
    loops call every CHECK_EVERY steps; everything else is the engine's searcher (`engine`, for
    calls that need it)."""

    def __init__(
        self,
        engine: tantivy.Searcher,
        deadline: SearchDeadline | None,
        parts: tuple[Part, ...] = (),
        threads: int = 1,
        *,
        long_calls: bool = False,
    ):
        self.engine = engine
        self.deadline = deadline
        self.long_calls = long_calls  # engine calls go to the deadline pool
        self.parts = parts
        self.threads = threads

    def search(self, *args, **kwargs):
        self.check()
        if self.deadline is not None and self.long_calls:
            result = run_by(self.deadline, self.engine_search, *args, **kwargs)
        else:
            result = self.engine_search(*args, **kwargs)
        self.check()
        return result

    def engine_search(self, *args, **kwargs):
        """One search by the engine: on every part at once when the index is split, else on the
        whole searcher."""
        if self.parts:
            return fanned_search(self.parts, self.threads, *args, **kwargs)
        return self.engine.search(*args, **kwargs)

    def score(self, query: Query, address) -> float:
        """The relevance score `query` gives the hit at `address`, by the statistics its search
        ranked it with (its part's, on a split index)."""
        searcher, local = locate(self.parts, address) or (self.engine, address)
        return float(orjson.loads(query.explain(searcher, local).to_json())["value"])

    def check(self, step: int = 0) -> None:
        """SearchTimedOut once the deadline has passed; `step` (a loop's counter) checks every
        CHECK_EVERY steps only."""
        if self.deadline is not None and step % CHECK_EVERY == 0:
            self.deadline.check()

    def __getattr__(self, name):
        return getattr(self.engine, name)
