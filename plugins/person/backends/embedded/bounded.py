"""A searcher that keeps a search to its deadline: the engine cannot stop one call, so the deadline is checked between
calls and inside the Python loops around them."""

from __future__ import annotations

import orjson
import tantivy
from tantivy import Query

from plugins.person.backends import SearchDeadline
from plugins.person.backends.embedded.fanout import Part, fanned_search, locate

CHECK_EVERY = 256  # steps of a Python loop (terms enumerated, hits read or explained) between deadline checks


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
