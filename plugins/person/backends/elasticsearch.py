"""The Elasticsearch search backend: the validated DSL sent as is through the official client, search_after paging, bulk loading.

HIREKIT_ELASTICSEARCH_INDEX names an alias over a dated index (`people` -> `people-20261122t231500123456`: index names are lowercase). A replacing
load fills a new dated index aside and then moves the alias to it in one atomic `_aliases` call, so searches answer
from the old data until the new data is complete; the old index is deleted after the swap. An index created by an
older release under the plain name keeps working, and the first replacing load turns it into an alias.

A delta (`person load --upsert`, `--delete-ids`) is bulk-indexed and bulk-deleted into the alias's current index with
its refresh switched off, then published by one refresh (searches see none of it before, all of it after), after which
the dataset version is recorded and the refresh interval restored.

A search whose answer carries a scroll token runs in a point in time (PIT): its first page opens one on the alias
(kept ELASTICSEARCH_SCROLL_KEEP_ALIVE between pages), the cursor carries the PIT's id, and every next page searches in
that PIT with `search_after`, so a walk reads the version of the dataset it began on even across a delta. A replacing
load deletes the old index and with it the PITs open on it: their next page is a 400 telling the client to start
again. The PIT is closed when the walk ends. Cursors issued without a PIT id continue on the alias.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from typing import Iterable

from elasticsearch import ApiError as EsApiError
from elasticsearch import ConnectionTimeout, Elasticsearch, NotFoundError, TransportError, helpers

from app.errors import ApiError
from plugins.person import profile_fields
from plugins.person.backends import (SEARCH_AFTER_CURSOR, DatasetEmpty, DatasetUnavailable, DatasetWriter, ScrollExpired,
                                      SearchBackend, SearchDeadline, SearchResult, SearchTimedOut)
from plugins.person.flatten import flatten

TIEBREAKER = "id"
INFO_CACHE_SECONDS = 30.0
BULK_CHUNK = 1000
DEADLINE_GRACE = 1.0  # seconds the HTTP request may outlast a search's deadline, so the cluster can answer timed_out itself
CLOSE_TIMEOUT = 1.0  # seconds closing a finished walk's point in time may take (unclosed, it expires at its keep_alive)

log = logging.getLogger("hirekit.person.elasticsearch")


def prepare_action(record: dict, raw: bytes, seq: int) -> dict:
    """One record -> a bulk index action (the record is checked against the schema first, like the embedded backend does)."""
    record_id = profile_fields.require_id(record)
    flatten(record)
    return {"_op_type": "index", "_id": record_id, "_source": record}


class ElasticsearchBackend(SearchBackend):
    """One index on a cluster; every call maps transport failures to 503 and a missing index to 503 with setup advice."""

    name = "elasticsearch"
    preparer = staticmethod(prepare_action)

    def __init__(self, client: Elasticsearch, index: str, keep_alive: str):
        self.client = client
        self.index = index
        self.keep_alive = keep_alive
        self._info: tuple[float, dict] | None = None

    @classmethod
    def from_config(cls, config, url: str, index: str) -> "ElasticsearchBackend":
        options: dict = {"request_timeout": float(config["ELASTICSEARCH_TIMEOUT"]), "max_retries": 2, "retry_on_timeout": True}
        if config.get("ELASTICSEARCH_API_KEY"):
            options["api_key"] = config["ELASTICSEARCH_API_KEY"]
        elif config.get("ELASTICSEARCH_USERNAME"):
            options["basic_auth"] = (config["ELASTICSEARCH_USERNAME"], config.get("ELASTICSEARCH_PASSWORD", ""))
        if config.get("ELASTICSEARCH_CA_CERTS"):
            options["ca_certs"] = config["ELASTICSEARCH_CA_CERTS"]
        return cls(Elasticsearch(url, **options), index, config["ELASTICSEARCH_SCROLL_KEEP_ALIVE"])

    def _call(self, operation, *, deadline: SearchDeadline | None = None, missing: ApiError | None = None, **kwargs):
        """`missing`: what a 404 means instead of a missing index (a search in a PIT names no index)."""
        try:
            return operation(**kwargs)
        except ConnectionTimeout:
            if deadline is not None:
                raise SearchTimedOut(deadline.seconds) from None
            raise DatasetUnavailable("Elasticsearch did not answer in time (ConnectionTimeout).") from None
        except NotFoundError:
            if missing is not None:
                raise missing from None
            raise DatasetEmpty(f"the Elasticsearch index {self.index!r} does not exist; run `flask --app wsgi person "
                                     "create-index` and load a dataset.") from None
        except EsApiError as error:
            if error.meta.status == 400:
                raise ApiError(400, f"Elasticsearch refused the query: {_reason(error)}") from None
            if error.meta.status in (401, 403):
                raise DatasetUnavailable("Elasticsearch refused our credentials (HIREKIT_ELASTICSEARCH_API_KEY).") from None
            raise DatasetUnavailable(f"Elasticsearch answered {error.meta.status}.") from None
        except TransportError as error:
            raise DatasetUnavailable(f"Elasticsearch is not reachable ({type(error).__name__}).") from None

    # reading
    def search(self, query: dict, *, size: int, offset: int = 0, sort=(), cursor: list | None = None,
               deadline: SearchDeadline | None = None, scroll: bool = False) -> SearchResult:
        """With `scroll` a first page opens a PIT that the cursor carries, and a walk's last page closes it. With a
        deadline the cluster gets what is left of it as the search's `timeout` (an answer marked timed_out is
        SearchTimedOut, never a partial page) and each HTTP request that plus DEADLINE_GRACE, not retried on timeout."""
        sort_clause = [{path: {"order": order}} if path == "_score" else {path: {"order": order, "missing": "_last"}}
                       for path, order in sort] or [{"_score": {"order": "desc"}}]
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
            next_cursor = [SEARCH_AFTER_CURSOR, consumed, hits[-1]["sort"], *([pit_id] if pit_id else [])]
        elif pit_id:
            self._close_pit(pit_id)
        return SearchResult(total=total, hits=[hit["_source"] for hit in hits], cursor=next_cursor)

    def _client(self, deadline: SearchDeadline | None) -> Elasticsearch:
        """The client for one request of a search: bounded by what is left of its deadline, if any."""
        if deadline is None:
            return self.client
        deadline.check()
        return self.client.options(request_timeout=deadline.remaining() + DEADLINE_GRACE, retry_on_timeout=False)

    def _open_pit(self, deadline: SearchDeadline | None) -> str:
        """A PIT on the alias's current index: the version of the dataset a new walk reads to its end."""
        return self._call(self._client(deadline).open_point_in_time, deadline=deadline, index=self.index,
                          keep_alive=self.keep_alive)["id"]

    def _first_page_in_pit(self, body: dict, deadline: SearchDeadline | None) -> tuple[dict, str]:
        """(answer, PIT id) of a new walk's first page, in a PIT of its own. A PIT gone before its first search (a
        replacing load deleted its index in between) is opened once more, on the index the alias now names; a PIT
        whose search failed otherwise is closed, as no token will name it."""
        for _ in range(2):
            pit_id = self._open_pit(deadline)
            try:
                return self._page(body, pit_id, deadline), pit_id
            except ScrollExpired:
                continue
            except Exception:
                self._close_pit(pit_id)
                raise
        raise DatasetUnavailable("Elasticsearch lost two new points in time in a row: the index is being replaced.")

    def _page(self, body: dict, pit_id: str | None, deadline: SearchDeadline | None) -> dict:
        """One search request: in the PIT when there is one (it names the index itself; a 404 means it is gone:
        ScrollExpired). A shard that fails (or lost its part of the PIT) fails the page rather than leave hits out."""
        client = self._client(deadline)
        if deadline is not None:
            body["timeout"] = f"{max(1, int(deadline.remaining() * 1000))}ms"
        where = {"pit": {"id": pit_id, "keep_alive": self.keep_alive}} if pit_id else {"index": self.index}
        answer = self._call(client.search, deadline=deadline, missing=ScrollExpired(self.keep_alive) if pit_id else None,
                            allow_partial_search_results=False, **where, **body)
        if answer.get("timed_out"):  # partial hits: never answered as if they were the page
            if deadline is not None:
                raise SearchTimedOut(deadline.seconds)
            raise DatasetUnavailable("Elasticsearch timed the search out (the cluster's default search timeout).")
        return answer

    def _close_pit(self, pit_id: str) -> None:
        """Free a finished walk's PIT now rather than at its keep_alive: a failure only costs the cluster that wait,
        so it is logged, never answered, and it may hold the answer up CLOSE_TIMEOUT at most."""
        try:
            self._call(self.client.options(request_timeout=CLOSE_TIMEOUT, max_retries=0).close_point_in_time, id=pit_id)
        except ApiError as error:
            log.warning("could not close an Elasticsearch point in time: %s", error.message)

    def get_by_ids(self, ids: Iterable[str]) -> dict[str, dict]:
        ids = [i for i in dict.fromkeys(ids) if isinstance(i, str) and i]
        if not ids:
            return {}
        answer = self._call(self.client.mget, index=self.index, ids=ids)
        return {doc["_id"]: doc["_source"] for doc in answer["docs"] if doc.get("found")}

    def count(self, query: dict) -> int:
        return self._call(self.client.count, index=self.index, query=query)["count"]

    def mapping(self) -> dict:
        answer = self._call(self.client.indices.get_mapping, index=self.index)
        return next(iter(answer.body.values()))

    def dataset_info(self) -> dict:
        now = time.monotonic()
        if self._info is None or now - self._info[0] > INFO_CACHE_SECONDS:
            meta = self.mapping().get("mappings", {}).get("_meta", {})
            self._info = (now, {"dataset_version": meta.get("dataset_version"), "count": self.count({"match_all": {}})})
        return self._info[1]

    def check(self) -> None:
        if not self._call(self.client.indices.exists, index=self.index):
            raise DatasetEmpty(f"the Elasticsearch index {self.index!r} does not exist.")

    # writing
    def create_index(self, *, replace: bool = False) -> None:
        """Create the alias over a new empty dated index; `replace` swaps an existing alias to a new empty index."""
        if replace:
            fresh = self._create_dated_index()
            self.swap_alias_to(fresh)
        elif not self._call(self.client.indices.exists, index=self.index):
            self._create_dated_index(alias=True)

    def _create_dated_index(self, *, alias: bool = False) -> str:
        name = f"{self.index}-{dt.datetime.now(dt.timezone.utc).strftime('%Y%m%dt%H%M%S%f')}"
        self._call(self.client.indices.create, index=name, mappings=profile_fields.elasticsearch_mapping(),
                   settings={"index": {"max_result_window": 10_000}}, **({"aliases": {self.index: {}}} if alias else {}))
        return name

    def swap_alias_to(self, fresh: str) -> None:
        """Point the alias at `fresh` in one atomic call, then delete what it pointed at before."""
        actions: list[dict] = [{"add": {"index": fresh, "alias": self.index}}]
        aliased = self._aliased_indices()
        previous = [name for name in aliased or () if name != fresh]
        actions += [{"remove": {"index": name, "alias": self.index}} for name in previous]
        if aliased is None and self._call(self.client.indices.exists, index=self.index):  # a plain index of an older release
            actions.append({"remove_index": {"index": self.index}})
        self._call(self.client.indices.update_aliases, actions=actions)
        for name in previous:
            self._call(self.client.indices.delete, index=name, ignore_unavailable=True)
        self._info = None

    def _aliased_indices(self) -> list[str] | None:
        """The indices behind the alias, or None when the configured name is not an alias."""
        if not self._call(self.client.indices.exists_alias, name=self.index):
            return None
        return list(self._call(self.client.indices.get_alias, name=self.index).body)

    def drop_index(self) -> None:
        aliased = self._aliased_indices()
        for name in aliased if aliased is not None else [self.index]:
            self._call(self.client.indices.delete, index=name, ignore_unavailable=True)

    def writer(self, *, replace: bool = False, threads: int = 0, delta: bool = False) -> "ElasticsearchWriter":
        if replace:
            return ElasticsearchWriter(self, threads=threads, target=self._create_dated_index())
        self.create_index()
        return ElasticsearchWriter(self, threads=threads, target=self.index, hold_refresh=delta)

    def refresh_interval(self) -> str | None:
        """The index's own refresh interval setting (None: the cluster default)."""
        answer = self._call(self.client.indices.get_settings, index=self.index, name="index.refresh_interval")
        return next(iter(answer.body.values()), {}).get("settings", {}).get("index", {}).get("refresh_interval")

    def set_refresh_interval(self, interval: str | None) -> None:
        self._call(self.client.indices.put_settings, index=self.index, settings={"index": {"refresh_interval": interval}})


class ElasticsearchWriter(DatasetWriter):
    """Bulk upserts by id (the document _id is the person id) into `target`: the alias, or a replacing load's new dated
    index, which close() refreshes and swaps the alias to; records the dataset version on close. `hold_refresh` (a delta)
    switches the index's refresh off until close() publishes everything with one refresh."""

    max_seq = -1
    rolls_back = False  # what a bulk request wrote stays written: a delta is checked whole before anything is sent

    def __init__(self, backend: ElasticsearchBackend, *, threads: int, target: str, hold_refresh: bool = False):
        self.backend = backend
        self.threads = max(1, threads)
        self.target = target
        self.held_interval: tuple[str | None] | None = None
        if hold_refresh:
            self.held_interval = (backend.refresh_interval(),)
            backend.set_refresh_interval("-1")

    def add(self, documents: list) -> None:
        actions = [{**action, "_index": self.target} for action in documents]
        if not actions:
            return
        if self.threads > 1:
            failures = [info for ok, info in helpers.parallel_bulk(self.backend.client, actions, thread_count=self.threads,
                                                                    chunk_size=BULK_CHUNK, raise_on_error=False) if not ok]
        else:
            _, failures = helpers.bulk(self.backend.client, actions, chunk_size=BULK_CHUNK, raise_on_error=False)
        if failures:
            raise RuntimeError(f"Elasticsearch rejected {len(failures)} document(s), first: {failures[0]}")

    def delete(self, ids: list[str]) -> int:
        actions = ({"_op_type": "delete", "_index": self.target, "_id": record_id} for record_id in ids)
        held, failures = 0, []
        for _, item in helpers.streaming_bulk(self.backend.client, actions, chunk_size=BULK_CHUNK, raise_on_error=False):
            outcome = item["delete"]
            if outcome.get("result") == "deleted":
                held += 1
            elif outcome.get("status") != 404:  # not_found: the id was not in the dataset
                failures.append(item)
        if failures:
            raise RuntimeError(f"Elasticsearch refused {len(failures)} deletion(s), first: {failures[0]}")
        return held

    def close(self, dataset_version: str | None) -> int:
        """Refresh (the publish), then record the version: it never names data searches cannot see yet."""
        backend, client = self.backend, self.backend.client
        backend._call(client.indices.refresh, index=self.target)
        if dataset_version:
            backend._call(client.indices.put_mapping, index=self.target, meta={"dataset_version": dataset_version})
        if self.target != backend.index:
            backend.swap_alias_to(self.target)
        self._restore_refresh()
        backend._info = None
        return backend.count({"match_all": {}})

    def abort(self) -> None:
        if self.target != self.backend.index:  # readers never saw the half-built index
            self.backend._call(self.backend.client.indices.delete, index=self.target, ignore_unavailable=True)
        self._restore_refresh()

    def _restore_refresh(self) -> None:
        if self.held_interval is not None:
            self.backend.set_refresh_interval(self.held_interval[0])
            self.held_interval = None


def _reason(error: EsApiError) -> str:
    try:
        return error.body["error"]["root_cause"][0]["reason"]
    except (KeyError, IndexError, TypeError):
        return str(error.message)
