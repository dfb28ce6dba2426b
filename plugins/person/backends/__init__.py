"""Search backends for the person dataset: the interface routes and the enrich matcher speak, and
the error both answer when no dataset is there."""

from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Iterable

import orjson

from app.errors import ApiError

MAX_RESULT_WINDOW = 10_000
# Elasticsearch's cursor: [it, hits seen, the last hit's sort values] and, on a walk in a point in
# time, that PIT's id
SEARCH_AFTER_CURSOR = "after"
SETUP_HINT = (
    "Load a dataset with `flask --app wsgi person load FILE.jsonl` (add --sandbox for the sandbox; "
    "embedded index at HIREKIT_SEARCH_INDEX), "
    "or set HIREKIT_SEARCH_BACKEND=elasticsearch with HIREKIT_ELASTICSEARCH_URL "
    "(opensearch with HIREKIT_OPENSEARCH_URL)."
)


class DatasetUnavailable(ApiError):
    """503 with Retry-After: the dataset is not configured, not loaded yet, or its server is down
    (as docs/integrating.md, Conventions, says of every dependency)."""

    def __init__(self, reason: str):
        super().__init__(
            503,
            f"The person dataset is not available: {reason} {SETUP_HINT}",
            headers={"Retry-After": "30"},
        )


class DatasetEmpty(DatasetUnavailable):
    """The dataset's store answers but holds no dataset yet (nothing loaded, no index): /readyz
    reports it as empty."""


class SearchTimedOut(ApiError):
    """503 with Retry-After: a search ran past its time budget (PERSON_SEARCH_TIMEOUT) and was
    abandoned."""

    def __init__(self, seconds: float):
        super().__init__(
            503,
            f"The search ran past its time budget of {seconds:g} s (PERSON_SEARCH_TIMEOUT) and was "
            "abandoned: narrow the query or its sort (a deep page sorted by several keys costs "
            "most), or "
            "retry later.",
            headers={"Retry-After": str(max(1, math.ceil(seconds)))},
        )


class ScrollExpired(ApiError):
    """400: the backend no longer holds the version of the dataset a scroll began on (its pages were
    further apart than `keep_alive`, or a reload replaced that version), so the client starts again
    rather than get a walk mixing two."""

    def __init__(self, keep_alive: str):
        super().__init__(
            400,
            "This scroll can no longer continue on the version of the person dataset it began on: "
            "its "
            f"pages were more than {keep_alive} apart, or the dataset was reloaded since. Start "
            "the scroll "
            "again without scroll_token.",
            fields={"scroll_token": ["The scroll expired or the dataset was reloaded."]},
        )


class ScrollLost(ScrollExpired):
    """400, like an expired scroll: the search cluster lost part of the point in time a scroll reads
    (a node holding it left the cluster), so its next pages can never be whole and the client starts
    again."""

    def __init__(self, cause: str):
        self.cause = cause  # what the cluster answered, for a log or for a new walk's 503
        ApiError.__init__(
            self,
            400,
            "This scroll can no longer continue: the search cluster lost part of the version "
            "of the person dataset it began on (a node holding it left the cluster). Start "
            "the scroll again without scroll_token.",
            fields={"scroll_token": ["The search cluster lost this scroll's point in time."]},
        )


class SearchDeadline:
    """When a search must be done by: `seconds` after it started. Backends check it between the
    steps they control."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.ends = time.monotonic() + seconds

    def remaining(self) -> float:
        return self.ends - time.monotonic()

    def check(self) -> None:
        """SearchTimedOut once the deadline has passed."""
        if time.monotonic() >= self.ends:
            raise SearchTimedOut(self.seconds)


class SearchResult:
    """One page of hits in rank order; `cursor` continues after the last hit and is None on the last
    page.

    A backend that keeps each record's original JSON may give `raw` (one JSON object per hit)
    instead of `hits`: the HTTP routes splice those bytes into their answer, and `hits` parses them
    only when someone asks.

    `generation` names the published dataset that answered (None: the backend cannot tell): a scroll
    token carries it, and a continuation answered by another generation is refused rather than
    mixing two datasets in one walk. Elasticsearch answers None: its cursor carries the point in
    time that keeps a walk on one version."""

    def __init__(
        self,
        total: int,
        hits: list[dict] | None = None,
        cursor: list | None = None,
        raw: list[bytes] | None = None,
        generation: str | None = None,
    ):
        self.total = total
        self.cursor = cursor
        self.generation = generation
        self._hits = hits if hits is not None or raw is not None else []
        self._raw = raw

    @property
    def hits(self) -> list[dict]:
        if self._hits is None:
            self._hits = [orjson.loads(blob) for blob in self._raw]
        return self._hits

    def raw_hits(self) -> list[bytes]:
        """Each hit as JSON bytes: the stored original when the backend kept it."""
        return self._raw if self._raw is not None else [orjson.dumps(hit) for hit in self._hits]


@dataclass
class LoadReport:
    """What a load did: records indexed, malformed lines skipped (line number, reason)."""

    loaded: int = 0
    skipped: list[tuple[int, str]] = field(default_factory=list)
    seconds: float = 0.0
    deleted: int = 0  # ids of a --delete-ids list that were removed
    published: bool = True  # False: a delta with malformed lines, of which nothing was published
    count: int | None = None  # profiles in the dataset once published


class DatasetWriter(ABC):
    """Upserts prepared documents by id and removes ids; `close` publishes all of it at once with
    the dataset version."""

    # abort() undoes every add; False: the loader checks a delta whole before adding anything
    rolls_back = True

    @abstractmethod
    def add(self, documents: list) -> None: ...

    @abstractmethod
    def delete(self, ids: list[str]) -> int:
        """Remove these ids (after every add of this load: an id both added and listed ends up removed); returns how
        many of them the dataset held."""  # noqa: E501

    @abstractmethod
    def close(self, dataset_version: str | None) -> int: ...

    def abort(self) -> None:
        """The load failed before close: drop whatever the writer built aside (readers never saw
        it)."""


class SearchBackend(ABC):
    """What every dataset engine answers: validated DSL queries only (plugins/person/dsl.py)."""

    name: str

    @abstractmethod
    def search(
        self,
        query: dict,
        *,
        size: int,
        offset: int = 0,
        sort: list[tuple[str, str]] = (),
        cursor: list | None = None,
        deadline: SearchDeadline | None = None,
        scroll: bool = False,
    ) -> SearchResult:
        """Hits ranked by `sort` (empty: relevance), starting at `offset`, or after `cursor` from a
        previous page; SearchTimedOut once `deadline` has passed (None: no time budget, as the
        enrich matcher's own searches). `scroll`: the caller hands the next cursor out as a scroll
        token, so a backend that must hold the dataset's version for a walk (Elasticsearch's point
        in time) does so from this first page."""

    @abstractmethod
    def get_by_ids(self, ids: Iterable[str]) -> dict[str, dict]:
        """The records with these ids (missing ids are absent from the answer)."""

    @abstractmethod
    def count(self, query: dict) -> int: ...

    @abstractmethod
    def mapping(self) -> dict:
        """The raw index mapping (GET /v2/person/schema)."""

    @abstractmethod
    def dataset_info(self) -> dict:
        """{"dataset_version", "count"} of the loaded dataset; DatasetUnavailable when there is
        none."""

    @abstractmethod
    def check(self) -> None:
        """Raise DatasetUnavailable unless searches can be answered now (the readiness probe)."""

    @abstractmethod
    def create_index(self, *, replace: bool = False) -> None: ...

    @abstractmethod
    def writer(
        self, *, replace: bool = False, threads: int = 0, delta: bool = False
    ) -> DatasetWriter:
        """`delta`: the load is a delta, published all at once by close()."""

    # A module-level function (picklable, for loader processes): (record, raw_line, seq) -> what
    # `writer().add` takes; it raises ValueError for a malformed record.
    preparer = None
