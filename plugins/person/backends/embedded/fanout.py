"""One search on every core: the engine walks a searcher's segments one after another on one thread, so a large index
is also opened as a few searchers over contiguous runs of its segments, searched at once, and their hits merged."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from heapq import merge
from itertools import islice
from operator import itemgetter
from pathlib import Path

import orjson
import tantivy
from tantivy import DocAddress, Order, Query

FANOUT_MIN_DOCS = 500_000  # below this a search takes a few milliseconds: handing it to threads would cost more than it saves


def default_parts() -> int:
    """Parts a search is split into: one per core the process may run on, at most 4."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 4))


@dataclass(frozen=True)
class Part:
    """A searcher over segments [first, first + len) of the full searcher, whose segment ordinals it shifts by `first`."""

    searcher: tantivy.Searcher
    first: int


def group_segments(sizes: list[int], parts: int) -> list[tuple[int, int]]:
    """[(first, end)] runs of segments, in order, whose live documents are as even as the segment sizes allow."""
    total = sum(sizes)
    runs, start, held = [], 0, 0
    for k, size in enumerate(sizes):
        held += size
        wanted = total * (len(runs) + 1) / parts
        if len(runs) < parts - 1 and held >= wanted and k + 1 < len(sizes):
            over, under = held - wanted, wanted - (held - size)
            if over <= under or k == start:
                runs.append((start, k + 1))
                start = k + 1
            else:
                runs.append((start, k))
                start = k
    runs.append((start, len(sizes)))
    return [run for run in runs if run[1] > run[0]]


def open_parts(engine_dir: Path, meta: bytes, parts: int) -> tuple[Part, ...]:
    """Searchers over contiguous runs of the segments that the commit `meta` (meta.json's bytes) lists, or () when it has
    fewer than two segments to share out. Each is an index directory of its own (links to the segment files and a
    meta.json naming them), removed once its searcher is open: the searcher keeps the files it has mapped."""
    record = orjson.loads(meta)
    segments = record["segments"]
    sizes = [segment["max_doc"] - ((segment.get("deletes") or {}).get("num_deleted_docs", 0)) for segment in segments]
    runs = group_segments(sizes, parts) if parts > 1 else []
    if len(runs) < 2:
        return ()
    files: dict[str, list[str]] = {}
    for entry in os.scandir(engine_dir):
        files.setdefault(entry.name.split(".", 1)[0], []).append(entry.name)
    scratch = Path(tempfile.mkdtemp(prefix="hirekit-search-parts-"))
    try:
        opened = []
        for first, end in runs:
            directory = scratch / str(first)
            directory.mkdir()
            for segment in segments[first:end]:
                for name in files.get(segment["segment_id"].replace("-", ""), []):
                    os.symlink(engine_dir / name, directory / name)
            (directory / "meta.json").write_bytes(orjson.dumps({**record, "segments": segments[first:end]}))
            index = tantivy.Index.open(str(directory))
            index.config_reader("manual")
            opened.append(Part(index.searcher(), first))
        return tuple(opened)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def locate(parts: tuple[Part, ...], address: DocAddress) -> tuple[tantivy.Searcher, DocAddress] | None:
    """The part holding the full searcher's `address`, and the address within it (None without parts)."""
    for part in reversed(parts):
        if address.segment_ord >= part.first:
            return part.searcher, DocAddress(address.segment_ord - part.first, address.doc)
    return None


class MergedResult:
    """What tantivy's SearchResult offers the paging code: the hits in rank order and the count (None unless asked)."""

    __slots__ = ("hits", "count")

    def __init__(self, hits: list, count: int | None):
        self.hits, self.count = hits, count


class _Pool:
    """A process-wide thread pool, made again in a forked child (gunicorn workers fork after the app is loaded)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._pid = 0
        self._size = 0

    def executor(self, size: int) -> ThreadPoolExecutor:
        if self._executor is None or self._pid != os.getpid() or self._size < size:
            with self._lock:
                if self._executor is None or self._pid != os.getpid() or self._size < size:
                    self._executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix="person-search")
                    self._pid, self._size = os.getpid(), size
        return self._executor


_POOL = _Pool()


def fanned_search(parts: tuple[Part, ...], query: Query, limit: int = 10, count: bool = True,
                  order_by_field: str | None = None, offset: int = 0, order: Order = Order.Desc) -> MergedResult:
    """The full searcher's `search`, run on every part at once.

    Each part returns its own first offset + limit hits in the engine's order (score or key, equal ones by address);
    parts hold runs of segments in order, so merging their lists in that order, equal keys by part, ranks the union as
    one searcher would, and [offset, offset + limit) of it is the answer. The calling thread searches the first part
    itself, then every part no pool thread has begun, so a pool busy with other requests' parts costs a search its
    parallelism, never a wait.
    Relevance statistics (a term's document frequency) are each part's own, as they are each shard's in Elasticsearch."""
    window = offset + limit
    kwargs = {"count": count, "order_by_field": order_by_field, "order": order} if order_by_field else {"count": count}

    def run(part: Part):
        result = part.searcher.search(query, window, **kwargs)
        return result.hits, result.count

    futures: list[Future] = [_POOL.executor(len(parts) - 1).submit(run, part) for part in parts[1:]]
    answers = [run(parts[0])]
    for part, future in zip(parts[1:], futures):  # a part no pool thread has taken yet is searched here
        answers.append(run(part) if future.cancel() else future.result())
    ranked = merge(*(_tagged(hits, part.first) for part, (hits, _) in zip(parts, answers)), key=itemgetter(0),
                   reverse=order_by_field is None or order == Order.Desc)
    hits = [(key, DocAddress(first + address.segment_ord, address.doc)) for key, address, first in islice(ranked, offset, window)]
    return MergedResult(hits, sum(n for _, n in answers) if count else None)


def _tagged(hits: list, first: int):
    """A part's hits with the ordinal of its first segment, made one at a time as the merge takes them."""
    for key, address in hits:
        yield key, address, first
