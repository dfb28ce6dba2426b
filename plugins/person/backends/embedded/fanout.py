"""One search on every core: the engine walks a searcher's segments one after another on one thread,
so a large index is also opened as a few searchers over contiguous runs of its segments, searched at
once, and their hits merged."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import orjson
import tantivy
from tantivy import DocAddress, Order, Query

log = logging.getLogger("hirekit.person")

# below this a search takes a few milliseconds: handing it to threads would cost more than it saves
FANOUT_MIN_DOCS = 500_000
# runs of segments per thread: more runs than threads even out segments of unequal size
PARTS_PER_THREAD = 2


def default_threads() -> int:
    """Threads one search runs on: one per core the process may run on, at most 4."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 4))


@dataclass(frozen=True)
class Part:
    """A searcher over `docs` live documents in segments [first, first + len) of the full searcher,
    whose segment ordinals it shifts by `first`."""

    searcher: tantivy.Searcher
    first: int
    docs: int


def group_segments(sizes: list[int], parts: int) -> list[tuple[int, int]]:
    """[(first, end)]: `parts` runs of segments (fewer if there are fewer segments), in order, as
    even as the segment sizes allow: the runs whose sizes have the smallest sum of squares (an index
    has tens of segments at most)."""
    n = len(sizes)
    parts = max(1, min(parts, n))
    before = [0]
    for size in sizes:
        before.append(before[-1] + size)
    # cost[k][j]: the least sum of squares of k runs holding the first j segments; cut[k][j]: where
    # its last run starts
    cost = [[float("inf")] * (n + 1) for _ in range(parts + 1)]
    cut = [[0] * (n + 1) for _ in range(parts + 1)]
    cost[0][0] = 0
    for k in range(1, parts + 1):
        for j in range(k, n + 1):
            for i in range(k - 1, j):
                total = cost[k - 1][i] + (before[j] - before[i]) ** 2
                if total < cost[k][j]:
                    cost[k][j], cut[k][j] = total, i
    runs, end = [], n
    for k in range(parts, 0, -1):
        runs.append((cut[k][end], end))
        end = cut[k][end]
    return runs[::-1]


def open_parts(engine_dir: Path, meta: bytes, parts: int) -> tuple[Part, ...]:
    """Searchers over contiguous runs of the segments that the commit `meta` (meta.json's bytes)
    lists, or () when it has fewer than two segments to share out. Each is an index directory of its
    own (links to the segment files and a meta.json naming them), removed once its searcher is open:
    the searcher keeps the files it has mapped."""
    record = orjson.loads(meta)
    segments = record["segments"]
    sizes = [
        segment["max_doc"] - ((segment.get("deletes") or {}).get("num_deleted_docs", 0))
        for segment in segments
    ]
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
            (directory / "meta.json").write_bytes(
                orjson.dumps({**record, "segments": segments[first:end]})
            )
            index = tantivy.Index.open(str(directory))
            index.config_reader("manual")
            opened.append(Part(index.searcher(), first, sum(sizes[first:end])))
        return tuple(opened)
    finally:
        remove_scratch(scratch)


def remove_scratch(scratch: Path, tries: int = 5) -> None:
    """Remove the parts' scratch directory. On a loaded machine one removal has been seen to leave
    the directory behind (the engine's reader, which watches its meta.json, wrote into it as it
    went), so a removal that left it is tried again a few times."""
    for _ in range(tries):
        shutil.rmtree(scratch, ignore_errors=True)
        if not scratch.exists():
            return
        time.sleep(0.05)
    log.warning("could not remove the search parts' scratch directory %s", scratch)


def locate(
    parts: tuple[Part, ...], address: DocAddress
) -> tuple[tantivy.Searcher, DocAddress] | None:
    """The part holding the full searcher's `address`, and the address within it (None without
    parts)."""
    for part in reversed(parts):
        if address.segment_ord >= part.first:
            return part.searcher, DocAddress(address.segment_ord - part.first, address.doc)
    return None


class MergedResult:
    """What tantivy's SearchResult offers the paging code: the hits in rank order and the count
    (None unless asked)."""

    __slots__ = ("hits", "count")

    def __init__(self, hits: list, count: int | None):
        self.hits, self.count = hits, count


class ProcessPool:
    """A process-wide thread pool, made again in a forked child (gunicorn workers fork after the app
    is loaded)."""

    def __init__(self, name: str):
        self.name = name
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._pid = 0
        self._size = 0

    def executor(self, size: int) -> ThreadPoolExecutor:
        if self._executor is None or self._pid != os.getpid() or self._size < size:
            with self._lock:
                if self._executor is None or self._pid != os.getpid() or self._size < size:
                    self._executor = ThreadPoolExecutor(
                        max_workers=size, thread_name_prefix=self.name
                    )
                    self._pid, self._size = os.getpid(), size
        return self._executor


_POOL = ProcessPool("person-search")


def fanned_search(
    parts: tuple[Part, ...],
    threads: int,
    query: Query,
    limit: int = 10,
    count: bool = True,
    order_by_field: str | None = None,
    offset: int = 0,
    order: Order = Order.Desc,
) -> MergedResult:
    """The full searcher's `search`, run on every part, `threads` parts at once.

    Each part returns its own first offset + limit hits in the engine's order (score or key, equal
    ones by address). Parts hold runs of segments in address order, so their lists laid end to end
    and sorted stably by key alone rank the union as one searcher would, equal keys by address;
    [offset, offset + limit) of it is the answer. The largest parts go first; the calling thread
    searches one itself, then every part no pool thread has begun, so a pool busy with other
    requests' parts costs a search its parallelism, never a wait. Relevance statistics (a term's
    document frequency) are each part's own, as they are each shard's in Elasticsearch."""
    window = offset + limit
    kwargs = (
        {"count": count, "order_by_field": order_by_field, "order": order}
        if order_by_field
        else {"count": count}
    )

    def run(part: Part):
        result = part.searcher.search(query, window, **kwargs)
        return result.hits, result.count

    largest_first = sorted(range(len(parts)), key=lambda k: -parts[k].docs)
    pool = _POOL.executor(max(1, threads - 1))
    futures: dict[int, Future] = {k: pool.submit(run, parts[k]) for k in largest_first[1:]}
    answers = {largest_first[0]: run(parts[largest_first[0]])}
    # the parts no pool thread has begun are searched here, then the others awaited
    for k in largest_first[1:]:
        if futures[k].cancel():
            answers[k] = run(parts[k])
    for k in largest_first[1:]:
        if k not in answers:
            answers[k] = futures[k].result()
    hits, owners = [], []
    for k, part in enumerate(parts):
        part_hits = answers[k][0]
        hits += part_hits
        owners += [part.first] * len(part_hits)
    keys = [key for key, _ in hits]
    ranked = sorted(
        range(len(hits)),
        key=keys.__getitem__,
        reverse=order_by_field is None or order == Order.Desc,
    )
    page = [
        (hits[i][0], DocAddress(owners[i] + hits[i][1].segment_ord, hits[i][1].doc))
        for i in ranked[offset:window]
    ]
    return MergedResult(page, sum(answers[k][1] for k in answers) if count else None)
