"""A searcher that keeps a search to its deadline: the engine cannot stop one call, so the deadline is checked between
calls and inside the Python loops around them."""

from __future__ import annotations

import tantivy

from plugins.person.backends import SearchDeadline

CHECK_EVERY = 256  # steps of a Python loop (terms enumerated, hits read or explained) between deadline checks


class BoundedSearcher:
    """A tantivy Searcher whose `search` checks the deadline before and after each engine call, and whose `check` the
    loops call every CHECK_EVERY steps; everything else is the engine's searcher (`engine`, for calls that need it)."""

    def __init__(self, engine: tantivy.Searcher, deadline: SearchDeadline | None):
        self.engine = engine
        self.deadline = deadline

    def search(self, *args, **kwargs):
        self.check()
        result = self.engine.search(*args, **kwargs)
        self.check()
        return result

    def check(self, step: int = 0) -> None:
        """SearchTimedOut once the deadline has passed; `step` (a loop's counter) checks every CHECK_EVERY steps only."""
        if self.deadline is not None and step % CHECK_EVERY == 0:
            self.deadline.check()

    def __getattr__(self, name):
        return getattr(self.engine, name)
