"""EmbeddedBackend, the SearchBackend the routes talk to: it owns the index directory, its reader
snapshots and its one writer."""

from __future__ import annotations

import datetime as dt
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import orjson
import tantivy
from tantivy import Order, Query

from plugins.person import profile_fields
from plugins.person.backends import (
    DatasetEmpty,
    DatasetUnavailable,
    DatasetWriter,
    SearchBackend,
    SearchDeadline,
    SearchResult,
)
from plugins.person.backends.embedded.bounded import BoundedSearcher
from plugins.person.backends.embedded.build import parallel_load
from plugins.person.backends.embedded.fanout import (
    FANOUT_MIN_DOCS,
    PARTS_PER_THREAD,
    Part,
    default_threads,
    open_parts,
)
from plugins.person.backends.embedded.layout import SCHEMA, SCHEMA_VERSION, prepare_document, source
from plugins.person.backends.embedded.query import (
    QueryBuilder,
    count_hits,
    is_constant_score,
    known_total,
    may_run_long,
    requires_value,
    sort_parts,
)
from plugins.person.backends.embedded.ranking import by_index_order, by_key, by_score
from plugins.person.backends.embedded.sort import by_keys
from plugins.person.dsl import SCORE

ENGINE_DIR = "engine"
META_FILE = "dataset.json"


@dataclass(frozen=True)
class Snapshot:
    """One published commit: its searcher, the generation scroll tokens are bound to, and the
    dataset.json record of it (None when nothing was published yet); `stamps` tell whether the files
    on disk have changed since, and `parts` are searchers over runs of its segments that a search
    runs on at once (none on a small index: fanout.py)."""

    searcher: tantivy.Searcher
    generation: str
    info: dict | None
    stamps: tuple
    parts: tuple[Part, ...] = ()


def _stamp(path: Path) -> tuple | None:
    """What changes whenever `path` is atomically replaced (None: absent)."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_mtime_ns, stat.st_ino, stat.st_size


def engine_opstamp(engine_dir: Path) -> int:
    """The opstamp of the engine's last commit (its meta.json)."""
    try:
        return int(orjson.loads((engine_dir / "meta.json").read_bytes()).get("opstamp", 0))
    except FileNotFoundError:
        raise DatasetUnavailable("the embedded index is being replaced.") from None


class EmbeddedBackend(SearchBackend):
    """A tantivy index directory; opened lazily so a dataset loaded after start-up is picked up
    without a restart."""

    name = "embedded"
    preparer = staticmethod(prepare_document)

    def __init__(
        self, directory: str, search_threads: int = 0, fanout_min_docs: int = FANOUT_MIN_DOCS
    ):
        """search_threads: threads one search runs on (0: one per core, at most 4; 1: one), on an
        index of at least `fanout_min_docs` profiles."""
        self.directory = Path(directory)
        self.search_threads = search_threads or default_threads()
        self.fanout_min_docs = fanout_min_docs
        self.engine_dir = self.directory / ENGINE_DIR
        self._index: tantivy.Index | None = None
        self._lock = threading.Lock()
        self._snapshot: Snapshot | None = None

    # lifecycle
    def _open(self) -> tantivy.Index:
        if self._index is None:
            with self._lock:
                if self._index is None:
                    if not self.engine_dir.is_dir() or not tantivy.Index.exists(
                        str(self.engine_dir)
                    ):
                        raise DatasetEmpty("no embedded index has been loaded yet.")
                    index = tantivy.Index.open(str(self.engine_dir))
                    # the reader moves only when snapshot() says a commit is published
                    index.config_reader("manual")
                    self._index = index
        return self._index

    def snapshot(self) -> Snapshot:
        """The last published commit: a load's commit (another process) is picked up on the next
        request once the load has recorded it in dataset.json; until then (a load between its
        commits and its publish) requests keep the previous snapshot, so no search sees half a
        delta."""
        index = self._open()
        stamps = (_stamp(self.engine_dir / "meta.json"), _stamp(self.directory / META_FILE))
        if stamps[0] is None:
            raise DatasetUnavailable("the embedded index is being replaced.")
        current = self._snapshot
        if current is not None and current.stamps == stamps:
            return current
        with self._lock:
            current = self._snapshot
            if current is not None and current.stamps == stamps:
                return current
            published = self.read_meta()
            committed = engine_opstamp(self.engine_dir)
            if current is not None and published.get("opstamp") not in (None, committed):
                return current
            index.reload()
            searcher = index.searcher()
            if current is not None and engine_opstamp(self.engine_dir) != committed:
                return current  # committed again while reloading: the next request looks again
            info = {
                "dataset_version": published.get("dataset_version"),
                "count": published.get("count", 0),
            }
            generation = str(published.get("publish_id") or committed)
            self._snapshot = Snapshot(
                searcher,
                generation,
                info if published else None,
                stamps,
                self._parts(committed) if searcher.num_docs >= self.fanout_min_docs else (),
            )
            return self._snapshot

    def _parts(self, committed: int) -> tuple[Part, ...]:
        """The commit `committed`'s segments shared out into PARTS_PER_THREAD searchers a thread; ()
        when meta.json has moved on, or when one thread searches."""
        try:
            meta = (self.engine_dir / "meta.json").read_bytes()
        except FileNotFoundError:
            return ()
        if orjson.loads(meta).get("opstamp") != committed or self.search_threads < 2:
            return ()
        return open_parts(self.engine_dir, meta, self.search_threads * PARTS_PER_THREAD)

    def searcher(self) -> tantivy.Searcher:
        return self.snapshot().searcher

    def check(self) -> None:
        self.dataset_info()

    def dataset_info(self) -> dict:
        """The version and count of the published dataset the searches answer from."""
        info = self.snapshot().info
        if info is None:
            raise DatasetEmpty("no dataset has been loaded yet.")
        return dict(info)

    def mapping(self) -> dict:
        return {"mappings": profile_fields.elasticsearch_mapping()}

    # reading
    def count(self, query: dict) -> int:
        snapshot = self.snapshot()
        searcher = BoundedSearcher(snapshot.searcher, None, snapshot.parts, self.search_threads)
        known = known_total(searcher, query)
        if known is not None:
            return known
        return count_hits(
            searcher, QueryBuilder(searcher).prepare(query).build(query, scoring=False)
        )

    def get_by_ids(self, ids: Iterable[str]) -> dict[str, dict]:
        ids = [i for i in dict.fromkeys(ids) if isinstance(i, str) and i]
        if not ids:
            return {}
        searcher = self.searcher()
        result = searcher.search(
            Query.term_set_query(SCHEMA, "id", ids),
            len(ids) * 2,
            count=False,
            order_by_field="_seq",
            order=Order.Asc,
        )
        found = {}
        for _, address in result.hits:
            record = source(searcher, address)
            found[record["id"]] = record
        return found

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
        """The deadline is checked between engine calls and in the loops around them (bounded.py): a
        page needing several calls stops at the first check past it. A query whose calls may run
        long is answered at its deadline even inside one call, which runs to its end on a thread of
        its own. `scroll` changes nothing here: the result's generation is what binds a walk to one
        version of the dataset."""
        snapshot = self.snapshot()
        bounded = BoundedSearcher(
            snapshot.searcher,
            deadline,
            snapshot.parts,
            self.search_threads,
            long_calls=may_run_long(query),
        )
        builder = QueryBuilder(bounded).prepare(query)
        searcher = builder.searcher
        if any(path == SCORE for path, _ in sort) and is_constant_score(query):
            # every hit scores the same, so _score orders nothing: the other keys rank every hit,
            # not only a window read in score order (a tie as large as the result would be cut in
            # engine order)
            sort = [(path, order) for path, order in sort if path != SCORE]
        if len(sort) > 1:
            result = by_keys(
                searcher,
                builder.build(query, scoring=any(p == SCORE for p, _ in sort)),
                list(sort),
                size,
                offset,
                cursor,
            )
            result.generation = snapshot.generation
            return result
        if sort:
            path, order = sort[0]
            parts = sort_parts(
                builder.build(query, scoring=False), path, requires_value(query, path)
            )
            ranked = by_key(
                searcher, parts, path, order, size, offset, cursor, known_total(searcher, query)
            )
        elif is_constant_score(query):
            ranked = by_index_order(
                searcher,
                builder.build(query, scoring=False),
                size,
                offset,
                cursor,
                known_total(searcher, query),
            )
        else:
            ranked = by_score(searcher, builder.build(query), size, offset, cursor)
        addresses, total, next_cursor = ranked
        return SearchResult(
            total=total,
            raw=[searcher.doc(a)["_source"][0] for a in addresses],
            cursor=next_cursor,
            generation=snapshot.generation,
        )

    # writing
    def create_index(self, *, replace: bool = False) -> None:
        self.engine_dir.mkdir(parents=True, exist_ok=True)
        tantivy.Index(SCHEMA, path=str(self.engine_dir), reuse=not replace)
        if replace:  # an emptied index has no dataset: readers stop answering from the old one
            (self.directory / META_FILE).unlink(missing_ok=True)

    def writer(
        self, *, replace: bool = False, threads: int = 0, delta: bool = False
    ) -> "EmbeddedWriter":
        """Every writer publishes once, at close (one commit); `delta` needs nothing more."""
        return EmbeddedWriter(self, replace=replace, threads=threads)

    def parallel_load(
        self,
        path: str,
        *,
        replace: bool,
        processes: int,
        dataset_version: str | None,
        progress=None,
    ):
        """Load a large file with `processes` slice workers (build.py)."""
        return parallel_load(
            self,
            path,
            replace=replace,
            processes=processes,
            dataset_version=dataset_version,
            progress=progress,
        )

    def check_layout(self, replace: bool) -> None:
        meta = self.read_meta()
        if meta and meta.get("schema_version") != SCHEMA_VERSION and not replace:
            raise RuntimeError("the index was built with another layout; load with --replace")

    def write_meta(
        self, *, replace: bool, dataset_version: str | None, count: int, next_seq: int, opstamp: int
    ) -> None:
        """Publish what was loaded: dataset.json (beside the engine directory) names the engine
        commit `opstamp` holding it, and readers move to that commit (snapshot) only once this
        atomic write is done."""
        meta = self.read_meta() if not replace else {}
        meta.update(
            {
                "opstamp": opstamp,
                "publish_id": uuid.uuid4().hex,
                "schema_version": SCHEMA_VERSION,
                "dataset_version": dataset_version
                or meta.get("dataset_version")
                or dt.date.today().isoformat(),
                "count": count,
                "next_seq": next_seq,
                "loaded_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            }
        )
        target = self.directory / META_FILE
        temporary = target.with_suffix(".tmp")
        temporary.write_bytes(orjson.dumps(meta))
        temporary.replace(target)

    def read_meta(self) -> dict:
        path = self.directory / META_FILE
        return orjson.loads(path.read_bytes()) if path.exists() else {}

    def next_seq(self, replace: bool) -> int:
        return 0 if replace else int(self.read_meta().get("next_seq", 0))


class EmbeddedWriter(DatasetWriter):
    """The one writer of an index directory (tantivy locks it); readers keep answering from the last
    commit."""

    def __init__(self, backend: EmbeddedBackend, *, replace: bool, threads: int):
        self.backend = backend
        backend.directory.mkdir(parents=True, exist_ok=True)
        backend.check_layout(replace)
        backend.create_index(replace=False)
        self.index = tantivy.Index.open(str(backend.engine_dir))
        self._writer = self.index.writer(
            heap_size=512_000_000 if threads != 1 else 256_000_000, num_threads=threads
        )
        self.replace = replace
        self._loaded: set[str] = set()
        if replace:
            self._writer.delete_all_documents()
        self.max_seq = backend.next_seq(replace) - 1

    def add(self, documents: list) -> None:
        """documents: (id, seq, engine JSON) from prepare_document; a later document with the same
        id replaces the earlier."""
        writer, loaded, replace = self._writer, self._loaded, self.replace
        for record_id, seq, document in documents:
            # after --replace only this load's own repeats need deleting
            if not replace or record_id in loaded:
                writer.delete_documents_by_term("id", record_id)
            loaded.add(record_id)
            writer.add_json(document.decode())
            if seq > self.max_seq:
                self.max_seq = seq

    def delete(self, ids: list[str]) -> int:
        held = count_ids(self.index.searcher(), ids)
        for record_id in ids:
            self._writer.delete_documents_by_term("id", record_id)
        return held

    def close(self, dataset_version: str | None) -> int:
        """One commit holds every add and delete of the load; it is published (write_meta) after
        merging settles."""
        opstamp = self._writer.commit()
        self._writer.wait_merging_threads()
        self.index.reload()
        count = self.index.searcher().num_docs
        self.backend.write_meta(
            replace=self.replace,
            dataset_version=dataset_version,
            count=count,
            next_seq=self.max_seq + 1,
            opstamp=opstamp,
        )
        return count

    def abort(self) -> None:
        self._writer.rollback()


def count_ids(searcher: tantivy.Searcher, ids: list[str], batch: int = 1000) -> int:
    """How many of `ids` the searcher's commit holds."""
    return sum(
        searcher.search(
            Query.term_set_query(SCHEMA, "id", ids[start : start + batch]), 1, count=True
        ).count
        for start in range(0, len(ids), batch)
    )
