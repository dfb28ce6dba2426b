"""Bulk loads on every core: one process tops out at one core of document building and indexing, so
slices load in parallel."""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Callable, Iterable

import orjson
import tantivy
from tantivy import FieldType, Query

from plugins.person.backends import LoadReport
from plugins.person.backends.embedded.layout import SCHEMA
from plugins.person.backends.embedded.lines import prepare_line
from plugins.person.backends.embedded.query import narrowed
from plugins.person.pools import fork_pool

# a loader's indexing budget, unless a big load needs a larger one (worker_heap)
WORKER_HEAP = 1_000_000_000
WORKER_HEAP_MAX = 3_900_000_000  # tantivy refuses an indexing thread a budget of 4 GiB or more
# a budget fills with ~0.85-0.87 of the JSON it indexed (449,000 profiles fill 1 GB)
HEAP_PER_INPUT_BYTE = 0.88
MERGED_AT = 8  # tantivy's merge policy rewrites segments of about one size once there are this many
PROGRESS_EVERY = 2000
WRITER_LOCK = ".tantivy-writer.lock"
MANAGED = ".managed.json"


def plan_slices(path: str, parts: int) -> list[tuple[int, int]]:
    """[(start byte, end byte)]: `parts` slices cut at line ends. Nothing is read but a line at each
    cut: each slice's worker counts the lines before it (index_slice), so no pass over the whole
    file delays the load's start."""
    size = os.path.getsize(path)
    cuts = [0]
    with open(path, "rb") as handle:
        for k in range(1, parts):
            handle.seek(max(cuts[-1], size * k // parts))
            handle.readline()
            cuts.append(min(size, handle.tell()))
    cuts.append(size)
    return [(start, end) for start, end in zip(cuts, cuts[1:]) if end > start]


def _count_lines(handle, start: int, end: int) -> int:
    handle.seek(start)
    remaining, lines, last = end - start, 0, b"\n"
    while remaining:
        block = handle.read(min(remaining, 1 << 24))
        if not block:
            break
        lines += block.count(b"\n")
        last = block[-1:]
        remaining -= len(block)
    return lines + (last != b"\n")


_PROGRESS = None
_HEAP = WORKER_HEAP


def worker_heap(part_bytes: int, parts: int, available: int | None = None) -> int:
    """The indexing budget of each of `parts` loaders given at most `part_bytes` of JSON lines each.

    A loader writes a segment each time its budget fills, and tantivy merges eight segments of about
    one size, within a loader and again across all of them when the load publishes (then on one
    core). 1 GB indexes a profile fastest of the budgets that write few segments; a big load takes
    as much as tantivy and half the available memory allow when that keeps all its segments under
    eight, and merges nothing. Past that, merges cannot be avoided: 1 GB."""
    parts = max(1, parts)
    most = max(1, (MERGED_AT - 1) // parts)  # segments each loader may write
    needed = part_bytes * HEAP_PER_INPUT_BYTE / most
    if needed <= WORKER_HEAP:
        return WORKER_HEAP
    if available is None:
        available = _memory_available()
    roomy = min(WORKER_HEAP_MAX, available // 2 // parts)
    return roomy if needed <= roomy else WORKER_HEAP


def _memory_available() -> int:
    """MemAvailable from /proc/meminfo in bytes; 0 where it cannot be read (then loaders keep 1
    GB)."""
    try:
        with open("/proc/meminfo", "rb") as meminfo:
            for line in meminfo:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _share_counter(counter, heap: int) -> None:
    """Pool initializer: the lines-read counter the parent polls for its progress bar, and each
    loader's budget."""
    global _PROGRESS, _HEAP
    _PROGRESS = counter
    _HEAP = heap


def index_slice(args) -> dict:
    """Worker: index lines [start, end) of `path` into `directory` (index_lines). The slice's first
    line number (which its sequences and its bad lines' numbers follow from) is counted here, while
    the slices before it already index."""
    directory, path, start, end, base_seq = args

    def numbered():
        with open(path, "rb") as handle:
            first_line = 1 + _count_lines(handle, 0, start)
            handle.seek(start)
            position = start
            for line_no, raw in enumerate(handle, start=first_line):
                if position >= end:
                    return
                position += len(raw)
                yield line_no, raw

    return index_lines(directory, numbered(), base_seq)


def index_lines(directory: str, numbered: Iterable[tuple[int, bytes]], base_seq: int) -> dict:
    """Worker: index (line number, JSON line) pairs into a tantivy directory of its own; returns ids
    with their sequences, the bad lines, the first dataset_version seen and the last line number."""
    counter = _PROGRESS
    os.makedirs(directory, exist_ok=True)
    writer = tantivy.Index(SCHEMA, path=directory).writer(heap_size=_HEAP, num_threads=1)
    ids, seqs, bad, version, pending, line_no = [], [], [], None, 0, 0
    for line_no, raw in numbered:
        pending += 1
        if pending == PROGRESS_EVERY and counter is not None:
            with counter.get_lock():
                counter.value += pending
            pending = 0
        raw = raw.strip()
        if not raw:
            continue
        try:
            record_id, seq, document, record_version = prepare_line(raw, base_seq + line_no)
        except orjson.JSONDecodeError as exc:
            bad.append((line_no, f"invalid JSON ({exc})"))
            continue
        except TypeError:
            bad.append((line_no, "not a JSON object"))
            continue
        except ValueError as exc:
            bad.append((line_no, str(exc)))
            continue
        writer.add_json(document)
        ids.append(record_id)
        seqs.append(seq)
        if version is None:
            version = record_version
    if counter is not None:
        with counter.get_lock():
            counter.value += pending
    writer.commit()
    writer.wait_merging_threads()
    return {
        "directory": directory,
        "ids": ids,
        "seqs": seqs,
        "bad": bad,
        "version": version,
        "last_line": line_no,
    }


def parallel_load(
    backend,
    path: str,
    *,
    replace: bool,
    processes: int,
    dataset_version: str | None,
    progress: Callable[[int], None] | None,
) -> LoadReport:
    """Load `path` into the embedded `backend` with `processes` slice workers (load_parts)."""
    slices = plan_slices(path, processes)
    return load_parts(
        backend,
        index_slice,
        lambda staging, base_seq: [
            (str(staging / f"part-{k}"), path, start, end, base_seq)
            for k, (start, end) in enumerate(slices)
        ],
        replace=replace,
        dataset_version=dataset_version,
        progress=progress,
        part_bytes=max((end - start for start, end in slices), default=0),
    )


def load_parts(
    backend,
    worker: Callable[[tuple], dict],
    plan: Callable[[Path, int], list[tuple]],
    *,
    replace: bool,
    dataset_version: str | None,
    progress: Callable[[int], None] | None,
    part_bytes: int,
) -> LoadReport:
    """Run `worker` (index_slice, or any index_lines caller) on each job `plan(staging directory,
    first sequence)` gives, one process per job, then publish their parts into the embedded
    `backend`. `part_bytes`: the most JSON any one job reads, which sizes the loaders' indexing
    budget (worker_heap).

    Each worker indexes its own part into a tantivy directory of its own (parsing, flattening and
    indexing all in that process), then the parts' segments are grafted into the live index under
    its writer lock, and older copies of re-loaded ids are deleted. Readers keep answering from the
    previous published commit throughout: the graft's commit is never published, only the delete
    commit after it (write_meta)."""
    started = time.perf_counter()
    backend.directory.mkdir(parents=True, exist_ok=True)
    backend.check_layout(replace)
    backend.create_index(replace=False)
    base_seq = backend.next_seq(replace)
    staging = backend.directory / f"staging-{uuid.uuid4().hex[:8]}"
    counter = multiprocessing.get_context("fork").Value("q", 0)
    jobs = plan(staging, base_seq)
    report = LoadReport()
    try:
        heap = worker_heap(part_bytes, len(jobs))
        with fork_pool(
            len(jobs) or 1, initializer=_share_counter, initargs=(counter, heap)
        ) as pool:
            pending = pool.map_async(worker, jobs, chunksize=1)
            reported = 0
            while not pending.ready():
                pending.wait(0.25)
                if progress and counter.value > reported:
                    progress(counter.value - reported)
                    reported = counter.value
            parts = pending.get()
        if progress and counter.value > reported:
            progress(counter.value - reported)
        # id -> its last sequence (parts come in file order, each in line order)
        latest: dict[str, int] = {}
        max_seq = base_seq - 1
        for part in parts:
            report.skipped.extend(part["bad"])
            report.loaded += len(part["ids"])
            dataset_version = dataset_version or part["version"]
            latest.update(zip(part["ids"], part["seqs"]))
            if part["seqs"]:
                max_seq = max(max_seq, part["seqs"][-1])
        repeated: set[str] = set()
        # some id was loaded twice: which (the common load has none, and skips this)
        if len(latest) < report.loaded:
            seen: set[str] = set()
            for part in parts:
                for record_id in part["ids"]:
                    if record_id in seen:
                        repeated.add(record_id)
                    seen.add(record_id)
        if not replace:
            repeated |= _already_indexed(backend, list(latest))
        _graft(backend.engine_dir, [Path(part["directory"]) for part in parts], replace)
        index = tantivy.Index.open(str(backend.engine_dir))
        writer = index.writer(heap_size=128_000_000, num_threads=1)
        for record_id in repeated:  # every copy older than the last one loaded
            older = narrowed(
                Query.term_query(SCHEMA, "id", record_id),
                Query.range_query(
                    SCHEMA, "_seq", FieldType.Integer, None, latest[record_id], True, False
                ),
            )
            writer.delete_documents_by_query(older)
        opstamp = writer.commit()
        writer.garbage_collect_files()
        writer.wait_merging_threads()
        index.reload()
        backend.write_meta(
            replace=replace,
            dataset_version=dataset_version,
            count=index.searcher().num_docs,
            next_seq=max_seq + 1,
            opstamp=opstamp,
        )
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    report.skipped.sort()
    report.seconds = time.perf_counter() - started
    return report


def _already_indexed(backend, ids: list[str], batch: int = 1000) -> set[str]:
    """The ids (of this load) the live index already holds."""
    try:
        searcher = backend.searcher()
    except Exception:  # noqa: BLE001 - no readable index yet: nothing is already indexed
        return set()
    found: set[str] = set()
    for start in range(0, len(ids), batch):
        chunk = ids[start : start + batch]
        query = Query.term_set_query(SCHEMA, "id", chunk)
        if searcher.search(query, 1, count=True).count:
            found.update(i for i in chunk if searcher.doc_freq("id", i))
    return found


def _graft(engine_dir: Path, parts: list[Path], replace: bool) -> None:
    """Move the parts' segments into the live index and publish them in one atomic meta.json write,
    under the writer lock."""
    with open(engine_dir / WRITER_LOCK, "a+b") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RuntimeError(
                f"another process is writing the index at {engine_dir}; try again when it is done"
            ) from None
        meta = orjson.loads((engine_dir / "meta.json").read_bytes())
        managed_path = engine_dir / MANAGED
        managed = set(orjson.loads(managed_path.read_bytes())) if managed_path.exists() else set()
        segments = [] if replace else list(meta["segments"])
        opstamp = meta.get("opstamp", 0)
        for part in parts:
            part_meta = orjson.loads((part / "meta.json").read_bytes())
            opstamp = max(opstamp, part_meta.get("opstamp", 0))
            for segment in part_meta["segments"]:
                prefix = segment["segment_id"].replace("-", "")
                for file in part.glob(f"{prefix}.*"):
                    os.replace(file, engine_dir / file.name)
                    managed.add(file.name)
                segments.append(segment)
        meta["segments"] = segments
        # a commit of its own: readers tell it from the published one by its opstamp
        meta["opstamp"] = opstamp + 1
        managed_tmp = managed_path.with_name(MANAGED + ".tmp")
        managed_tmp.write_bytes(orjson.dumps(sorted(managed)))
        os.replace(managed_tmp, managed_path)
        meta_tmp = engine_dir / "meta.json.tmp"
        meta_tmp.write_bytes(orjson.dumps(meta))
        os.replace(meta_tmp, engine_dir / "meta.json")
