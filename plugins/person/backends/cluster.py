"""The search backend of a cluster (Elasticsearch or OpenSearch): the validated DSL sent as is,
search_after paging in a point in time, alias-swapped replacing loads and deltas published by one
refresh. One backend, one adapter per client.

The configured index name is an alias over a dated index (`people` ->
`people-20261122t231500123456`: index names are lowercase). A replacing load fills a new dated index
aside and then moves the alias to it in one atomic `_aliases` call, so searches answer from the old
data until the new data is complete; the old index is deleted after the swap. An index created by an
older release under the plain name keeps working, and the first replacing load turns it into an
alias.

A delta (`person load --upsert`, `--delete-ids`) is bulk-indexed and bulk-deleted into the alias's
current index with its refresh switched off, then published by one refresh (searches see none of it
before, all of it after), after which the dataset version is recorded and the refresh interval
restored.

A search whose answer carries a scroll token runs in a point in time (PIT): its first page opens one
on the alias (kept SCROLL_KEEP_ALIVE between pages), the cursor carries the PIT's id, and every next
page searches in that PIT with `search_after` and the id field as the tiebreaker, so a walk reads
the version of the dataset it began on even across a delta. A replacing load deletes the old index
and with it the PITs open on it: their next page is a 400 telling the client to start again. The PIT
is closed when the walk ends. Cursors issued without a PIT id continue on the alias.

What differs between Elasticsearch and OpenSearch (the client library, how a PIT is opened and
closed, how errors look) lives in a ClusterClient adapter (plugins/person/backends/elasticsearch.py,
opensearch.py); everything above is written once, here.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import time
from abc import ABC, abstractmethod
from types import ModuleType
from typing import Callable, Iterable, Iterator

from app.errors import ApiError
from plugins.person import profile_fields
from plugins.person.backends import (
    SEARCH_AFTER_CURSOR,
    DatasetEmpty,
    DatasetUnavailable,
    DatasetWriter,
    ScrollExpired,
    ScrollLost,
    SearchBackend,
    SearchDeadline,
    SearchResult,
    SearchTimedOut,
)
from plugins.person.flatten import flatten

TIEBREAKER = "id"
INFO_CACHE_SECONDS = 30.0
BULK_CHUNK = 1000
# seconds the HTTP request may outlast a search's deadline, so the cluster answers timed_out itself
DEADLINE_GRACE = 1.0
BULK_RETRIES = 5  # times the documents a bulk request failed for now (429, 5xx) are sent again
BULK_BACKOFF = 0.5  # seconds before the first resend, doubling each time (about 15 s in all)
# seconds closing a finished walk's point in time may take (unclosed, it expires at its keep_alive)
CLOSE_TIMEOUT = 1.0

log = logging.getLogger("hirekit.person.cluster")


# What an adapter raises instead of its client library's exceptions.
class ClusterError(Exception):
    """A request to the cluster failed."""


class ClusterTimeout(ClusterError):
    """The cluster did not answer within the request's timeout."""


class ClusterNotFound(ClusterError):
    """404: the index (or the point in time) does not exist."""


class ClusterRefused(ClusterError):
    """The cluster answered an error status (400 bad query, 401/403 credentials, 429/5xx overloaded
    or failing)."""

    def __init__(self, status: int, reason: str):
        super().__init__(f"{status}: {reason}")
        self.status = status
        self.reason = reason


class ClusterUnreachable(ClusterError):
    """No connection could be made (refused, reset, TLS failure)."""


class ClusterClient(ABC):
    """One cluster's client library behind the calls the backend makes. `timeout` (seconds) bounds
    one request and switches off its retry on timeout (a search's deadline); None keeps the client's
    own timeout and retries. Every method raises ClusterError subclasses only."""

    product: str  # "Elasticsearch" or "OpenSearch": how errors name the cluster
    # the settings prefix of its credentials, for error messages (ELASTICSEARCH:
    # HIREKIT_ELASTICSEARCH_...)
    setting: str
    client: object  # the client library's client
    helpers: ModuleType  # the library's bulk helpers: elasticsearch.helpers, opensearchpy.helpers

    @abstractmethod
    def translate(self, error: Exception) -> ClusterError | None:
        """The ClusterError a client library exception means (None: not the client's, let it
        through)."""

    @contextlib.contextmanager
    def translated(self):
        """Raise ClusterError subclasses in place of the client library's exceptions."""
        try:
            yield
        except ClusterError:
            raise
        except Exception as error:
            translated = self.translate(error)
            if translated is None:
                raise
            raise translated from None

    @abstractmethod
    def search(self, body: dict, *, index: str | None, timeout: float | None) -> dict:
        """POST _search with `body` (which names a PIT when `index` is None); a shard failure fails
        the request."""

    @abstractmethod
    def open_pit(self, index: str, keep_alive: str, *, timeout: float | None) -> str: ...

    @abstractmethod
    def close_pit(self, pit_id: str, *, timeout: float) -> None: ...

    @abstractmethod
    def mget(self, index: str, ids: list[str]) -> list[dict]: ...

    @abstractmethod
    def count(self, index: str, query: dict) -> int: ...

    @abstractmethod
    def get_mapping(self, index: str) -> dict:
        """{concrete index name: {"mappings": ...}}"""

    @abstractmethod
    def index_exists(self, index: str) -> bool: ...

    @abstractmethod
    def create_index(
        self, name: str, *, mappings: dict, settings: dict, aliases: dict | None
    ) -> None: ...

    @abstractmethod
    def delete_index(self, name: str) -> None:
        """Delete `name`; absent is fine."""

    @abstractmethod
    def alias_exists(self, name: str) -> bool: ...

    @abstractmethod
    def aliased_indices(self, name: str) -> list[str]: ...

    @abstractmethod
    def update_aliases(self, actions: list[dict]) -> None: ...

    @abstractmethod
    def get_setting(self, index: str, name: str) -> dict:
        """{concrete index: {"settings": ...}} of the one setting `name`."""

    @abstractmethod
    def put_settings(self, index: str, settings: dict) -> None: ...

    @abstractmethod
    def refresh(self, index: str) -> None: ...

    @abstractmethod
    def put_meta(self, index: str, meta: dict) -> None: ...

    def bulk(self, actions: list[dict], *, threads: int) -> list:
        """Send bulk actions in chunks of BULK_CHUNK (on `threads` threads); the failed items."""
        with self.translated():
            if threads > 1:
                sent = self.helpers.parallel_bulk(
                    self.client,
                    actions,
                    thread_count=threads,
                    chunk_size=BULK_CHUNK,
                    raise_on_error=False,
                )
                return [info for ok, info in sent if not ok]
            _, failed = self.helpers.bulk(
                self.client, actions, chunk_size=BULK_CHUNK, raise_on_error=False
            )
            return failed

    def streaming_bulk(self, actions: Iterable[dict]) -> Iterator[dict]:
        """Each action's answer item, in order, without raising on an item's error."""
        with self.translated():
            for _, item in self.helpers.streaming_bulk(
                self.client, actions, chunk_size=BULK_CHUNK, raise_on_error=False
            ):
                yield item


def prepare_action(record: dict, raw: bytes, seq: int) -> dict:
    """One record -> a bulk index action (the record is checked against the schema first, like the
    embedded backend does)."""
    record_id = profile_fields.require_id(record)
    flatten(record)
    return {"_op_type": "index", "_id": record_id, "_source": record}


class ClusterBackend(SearchBackend):
    """One alias on a cluster; every call maps transport failures to 503 and a missing index to 503
    with setup advice."""

    name = "cluster"
    preparer = staticmethod(prepare_action)

    def __init__(self, client: ClusterClient, index: str, keep_alive: str):
        self.client = client
        self.index = index
        self.keep_alive = keep_alive
        self._info: tuple[float, dict] | None = None

    def _call(
        self,
        operation,
        *args,
        deadline: SearchDeadline | None = None,
        missing: ApiError | None = None,
        lost: Callable[[str], ApiError] | None = None,
        **kwargs,
    ):
        """`missing`: what a 404 means instead of a missing index (a search in a PIT names no
        index); `lost(cause)`: what a 5xx means instead of an unavailable cluster (a page of a PIT
        whose part on a node went with it: retrying the same page can never succeed)."""
        product = self.client.product
        try:
            return operation(*args, **kwargs)
        except ClusterTimeout:
            if deadline is not None:
                raise SearchTimedOut(deadline.seconds) from None
            raise DatasetUnavailable(
                f"{product} did not answer in time (ConnectionTimeout)."
            ) from None
        except ClusterNotFound:
            if missing is not None:
                raise missing from None
            raise DatasetEmpty(
                f"the {product} index {self.index!r} does not exist; run `flask --app wsgi person "
                "create-index` and load a dataset."
            ) from None
        except ClusterRefused as error:
            if error.status == 400:
                raise ApiError(400, f"{product} refused the query: {error.reason}") from None
            if error.status in (401, 403):
                raise DatasetUnavailable(
                    f"{product} refused our credentials (HIREKIT_{self.client.setting}_API_KEY or "
                    f"HIREKIT_{self.client.setting}_USERNAME)."
                ) from None
            if lost is not None and error.status >= 500:
                log.warning(
                    "%s failed a page of a point in time: %s %s",
                    product,
                    error.status,
                    error.reason,
                )
                raise lost(f"{product} answered {error.status}") from None
            raise DatasetUnavailable(f"{product} answered {error.status}.") from None
        except ClusterUnreachable as error:
            raise DatasetUnavailable(f"{product} is not reachable ({error}).") from None

    # reading
    def search(
        self,
        query: dict,
        *,
        size: int,
        offset: int = 0,
        sort=(),
        cursor: list | None = None,
        deadline: SearchDeadline | None = None,
        scroll: bool = False,
    ) -> SearchResult:
        """With `scroll` a first page opens a PIT that the cursor carries, and a walk's last page
        closes it. With a deadline the cluster gets what is left of it as the search's `timeout` (an
        answer marked timed_out is SearchTimedOut, never a partial page) and each HTTP request that
        plus DEADLINE_GRACE, not retried on timeout."""
        sort_clause = [
            {path: {"order": order}}
            if path == "_score"
            else {path: {"order": order, "missing": "_last"}}
            for path, order in sort
        ] or [{"_score": {"order": "desc"}}]
        sort_clause.append({TIEBREAKER: {"order": "asc"}})
        body = {"query": query, "size": size, "sort": sort_clause, "track_total_hits": True}
        seen, pit_id = 0, None
        if cursor:
            _, seen, after, *pit = cursor
            body["search_after"] = after
            pit_id = pit[0] if pit else None
        elif offset:
            body["from"] = offset
        if scroll and not cursor:
            answer, pit_id = self._first_page_in_pit(body, deadline)
        else:
            answer = self._page(body, pit_id, deadline)
        pit_id = answer.get("pit_id", pit_id)
        hits = answer["hits"]["hits"]
        total = answer["hits"]["total"]["value"]
        consumed = seen + offset + len(hits)
        next_cursor = None
        if hits and consumed < total:
            next_cursor = [
                SEARCH_AFTER_CURSOR,
                consumed,
                hits[-1]["sort"],
                *([pit_id] if pit_id else []),
            ]
        elif pit_id:
            self._close_pit(pit_id)
        return SearchResult(total=total, hits=[hit["_source"] for hit in hits], cursor=next_cursor)

    @staticmethod
    def _timeout(deadline: SearchDeadline | None) -> float | None:
        """One request's timeout within a search's deadline (None: the client's own, with its
        retries)."""
        if deadline is None:
            return None
        deadline.check()
        return deadline.remaining() + DEADLINE_GRACE

    def _open_pit(self, deadline: SearchDeadline | None) -> str:
        """A PIT on the alias's current index: the version of the dataset a new walk reads to its
        end."""
        return self._call(
            self.client.open_pit,
            self.index,
            self.keep_alive,
            deadline=deadline,
            timeout=self._timeout(deadline),
        )

    def _first_page_in_pit(self, body: dict, deadline: SearchDeadline | None) -> tuple[dict, str]:
        """(answer, PIT id) of a new walk's first page, in a PIT of its own. A PIT gone before its
        first search (a replacing load deleted its index in between) is opened once more, on the
        index the alias now names; a PIT whose search failed otherwise is closed, as no token will
        name it."""
        for _ in range(2):
            pit_id = self._open_pit(deadline)
            try:
                return self._page(body, pit_id, deadline), pit_id
            except ScrollLost as error:  # a new walk has no page to start again from
                self._close_pit(pit_id)
                raise DatasetUnavailable(f"{error.cause}.") from None
            except ScrollExpired:
                continue
            except Exception:
                self._close_pit(pit_id)
                raise
        raise DatasetUnavailable(
            f"{self.client.product} lost two new points in time in a row: the index is being "
            "replaced."
        )

    def _page(self, body: dict, pit_id: str | None, deadline: SearchDeadline | None) -> dict:
        """One search request: in the PIT when there is one (it names the index itself; a 404 means
        it is gone:
        ScrollExpired). A shard that fails (or lost its part of the PIT) fails the page rather than
        leave hits out."""
        timeout = self._timeout(deadline)
        if deadline is not None:
            body["timeout"] = f"{max(1, int(deadline.remaining() * 1000))}ms"
        if pit_id:
            body = {**body, "pit": {"id": pit_id, "keep_alive": self.keep_alive}}
        answer = self._call(
            self.client.search,
            body,
            index=None if pit_id else self.index,
            timeout=timeout,
            deadline=deadline,
            missing=ScrollExpired(self.keep_alive) if pit_id else None,
            lost=ScrollLost if pit_id else None,
        )
        if answer.get("timed_out"):  # partial hits: never answered as if they were the page
            if deadline is not None:
                raise SearchTimedOut(deadline.seconds)
            raise DatasetUnavailable(
                f"{self.client.product} timed the search out (the cluster's default search "
                "timeout)."
            )
        shards = answer.get("_shards") or {}
        if shards.get(
            "failed"
        ):  # a cluster that answers 200 with a shard missing: never a page with hits left out
            raise DatasetUnavailable(
                f"{self.client.product} could not search {shards['failed']} of "
                f"{shards.get('total')} shards."
            )
        return answer

    def _close_pit(self, pit_id: str) -> None:
        """Free a finished walk's PIT now rather than at its keep_alive: a failure only costs the
        cluster that wait, so it is logged, never answered, and it may hold the answer up
        CLOSE_TIMEOUT at most."""
        try:
            self._call(self.client.close_pit, pit_id, timeout=CLOSE_TIMEOUT)
        except ApiError as error:
            log.warning(
                "could not close a %s point in time: %s", self.client.product, error.message
            )

    def get_by_ids(self, ids: Iterable[str]) -> dict[str, dict]:
        ids = [i for i in dict.fromkeys(ids) if isinstance(i, str) and i]
        if not ids:
            return {}
        docs = self._call(self.client.mget, self.index, ids)
        return {doc["_id"]: doc["_source"] for doc in docs if doc.get("found")}

    def count(self, query: dict) -> int:
        return self._call(self.client.count, self.index, query)

    def mapping(self) -> dict:
        answer = self._call(self.client.get_mapping, self.index)
        return next(iter(answer.values()))

    def dataset_info(self) -> dict:
        now = time.monotonic()
        if self._info is None or now - self._info[0] > INFO_CACHE_SECONDS:
            meta = self.mapping().get("mappings", {}).get("_meta", {})
            self._info = (
                now,
                {
                    "dataset_version": meta.get("dataset_version"),
                    "count": self.count({"match_all": {}}),
                },
            )
        return self._info[1]

    def check(self) -> None:
        if not self._call(self.client.index_exists, self.index):
            raise DatasetEmpty(f"the {self.client.product} index {self.index!r} does not exist.")

    # writing
    def create_index(self, *, replace: bool = False) -> None:
        """Create the alias over a new empty dated index; `replace` swaps an existing alias to a new
        empty index."""
        if replace:
            fresh = self._create_dated_index()
            self.swap_alias_to(fresh)
        elif not self._call(self.client.index_exists, self.index):
            self._create_dated_index(alias=True)

    def _create_dated_index(self, *, alias: bool = False) -> str:
        name = f"{self.index}-{dt.datetime.now(dt.timezone.utc).strftime('%Y%m%dt%H%M%S%f')}"
        self._call(self._create_once, name, alias)
        return name

    def _create_once(self, name: str, alias: bool) -> None:
        """Create `name`; a 400 because it exists means the client's retry of a timed-out request
        found what the first attempt made (the dated name is this load's own), so it is done."""
        try:
            self.client.create_index(
                name,
                mappings=profile_fields.elasticsearch_mapping(),
                settings={"index": {"max_result_window": 10_000}},
                aliases={self.index: {}} if alias else None,
            )
        except ClusterRefused as error:
            if (
                error.status != 400
                or "already exists" not in error.reason
                or not self.client.index_exists(name)
            ):
                raise

    def swap_alias_to(self, fresh: str) -> None:
        """Point the alias at `fresh` in one atomic call, then delete what it pointed at before."""
        actions: list[dict] = [{"add": {"index": fresh, "alias": self.index}}]
        aliased = self._aliased_indices()
        previous = [name for name in aliased or () if name != fresh]
        actions += [{"remove": {"index": name, "alias": self.index}} for name in previous]
        if aliased is None and self._call(
            self.client.index_exists, self.index
        ):  # a plain index of an older release
            actions.append({"remove_index": {"index": self.index}})
        self._call(self.client.update_aliases, actions)
        for name in previous:
            self._call(self.client.delete_index, name)
        self._info = None

    def _aliased_indices(self) -> list[str] | None:
        """The indices behind the alias, or None when the configured name is not an alias."""
        if not self._call(self.client.alias_exists, self.index):
            return None
        return self._call(self.client.aliased_indices, self.index)

    def drop_index(self) -> None:
        aliased = self._aliased_indices()
        for name in aliased if aliased is not None else [self.index]:
            self._call(self.client.delete_index, name)

    def writer(
        self, *, replace: bool = False, threads: int = 0, delta: bool = False
    ) -> "ClusterWriter":
        if replace:
            return ClusterWriter(self, threads=threads, target=self._create_dated_index())
        self.create_index()
        return ClusterWriter(self, threads=threads, target=self.index, hold_refresh=delta)

    def refresh_interval(self) -> str | None:
        """The index's own refresh interval setting (None: the cluster default)."""
        answer = self._call(self.client.get_setting, self.index, "index.refresh_interval")
        return (
            next(iter(answer.values()), {})
            .get("settings", {})
            .get("index", {})
            .get("refresh_interval")
        )

    def set_refresh_interval(self, interval: str | None) -> None:
        self._call(self.client.put_settings, self.index, {"index": {"refresh_interval": interval}})


def _failure(item: dict) -> tuple[str | None, int]:
    """(document id, status) of one failed bulk item."""
    outcome = next(iter(item.values()), {}) if isinstance(item, dict) else {}
    status = outcome.get("status")
    return outcome.get("_id"), status if isinstance(status, int) else 0


class ClusterWriter(DatasetWriter):
    """Bulk upserts by id (the document _id is the person id) into `target`: the alias, or a
    replacing load's new dated index, which close() refreshes and swaps the alias to; records the
    dataset version on close. `hold_refresh` (a delta) switches the index's refresh off until
    close() publishes everything with one refresh."""

    max_seq = -1
    # what a bulk request wrote stays written: a delta is checked whole before anything is sent
    rolls_back = False

    def __init__(
        self, backend: ClusterBackend, *, threads: int, target: str, hold_refresh: bool = False
    ):
        self.backend = backend
        self.threads = max(1, threads)
        self.target = target
        self.held_interval: tuple[str | None] | None = None
        if hold_refresh:
            self.held_interval = (backend.refresh_interval(),)
            backend.set_refresh_interval("-1")

    def add(self, documents: list) -> None:
        """Index `documents`; the items a cluster refuses for the moment (429, 5xx: a node lost, a
        primary being promoted) are sent again, BULK_RETRIES times at most, so a load survives a
        node's loss whole. Indexing by id is idempotent: a resent document replaces itself."""
        actions = [{**action, "_index": self.target} for action in documents]
        for attempt in range(BULK_RETRIES + 1):
            if not actions:
                return
            failures = self.backend._call(self.backend.client.bulk, actions, threads=self.threads)
            retryable = {
                item_id
                for item_id, status in map(_failure, failures)
                if status == 429 or status >= 500
            }
            if not failures or len(retryable) < len(failures) or attempt == BULK_RETRIES:
                break
            time.sleep(BULK_BACKOFF * 2**attempt)
            actions = [action for action in actions if action["_id"] in retryable]
        if failures:
            raise RuntimeError(
                f"{self.backend.client.product} rejected {len(failures)} document(s), first: "
                f"{failures[0]}"
            )

    def delete(self, ids: list[str]) -> int:
        actions = (
            {"_op_type": "delete", "_index": self.target, "_id": record_id} for record_id in ids
        )
        held, failures = 0, []
        # noqa: B023
        for item in self.backend._call(lambda: list(self.backend.client.streaming_bulk(actions))):
            outcome = item["delete"]
            if outcome.get("result") == "deleted":
                held += 1
            elif outcome.get("status") != 404:  # not_found: the id was not in the dataset
                failures.append(item)
        if failures:
            raise RuntimeError(
                f"{self.backend.client.product} refused {len(failures)} deletion(s), first: "
                f"{failures[0]}"
            )
        return held

    def close(self, dataset_version: str | None) -> int:
        """Refresh (the publish), then record the version: it never names data searches cannot see
        yet."""
        backend, client = self.backend, self.backend.client
        backend._call(client.refresh, self.target)
        if dataset_version:
            backend._call(client.put_meta, self.target, {"dataset_version": dataset_version})
        if self.target != backend.index:
            backend.swap_alias_to(self.target)
        self._restore_refresh()
        backend._info = None
        return backend.count({"match_all": {}})

    def abort(self) -> None:
        if self.target != self.backend.index:  # readers never saw the half-built index
            self.backend._call(self.backend.client.delete_index, self.target)
        self._restore_refresh()

    def _restore_refresh(self) -> None:
        if self.held_interval is not None:
            self.backend.set_refresh_interval(self.held_interval[0])
            self.held_interval = None
