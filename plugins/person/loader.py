"""Streams a JSONL dataset into a search backend (in parallel slices when the backend supports it, else parsed in worker processes and
upserted in batches); malformed lines are reported by number."""

from __future__ import annotations

import itertools
import multiprocessing
import os
import time
from typing import Callable, Iterator

import orjson

from plugins.person.backends import LoadReport, SearchBackend

BATCH_LINES = 2000
PARALLEL_THRESHOLD = 20_000  # below this many bytes-per-worker the process pool costs more than it saves
SLICE_THRESHOLD = 8 << 20  # files this large (or an explicit processes > 1) load in parallel slices when the backend can


def prepare_batch(args) -> tuple[list, list[tuple[int, str]], str | None]:
    """(preparer, base_seq, [(line_no, raw)]) -> (prepared documents, [(line_no, reason)], first dataset_version seen)."""
    preparer, base_seq, lines = args
    documents, bad = [], []
    version = None
    for line_no, raw in lines:
        raw = raw.strip()
        if not raw:
            continue
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            bad.append((line_no, f"invalid JSON ({exc})"))
            continue
        if not isinstance(record, dict):
            bad.append((line_no, "not a JSON object"))
            continue
        try:
            documents.append(preparer(record, raw, base_seq + line_no))
        except ValueError as exc:
            bad.append((line_no, str(exc)))
            continue
        if version is None and isinstance(record.get("dataset_version"), str):
            version = record["dataset_version"]
    return documents, bad, version


def _batches(path: str, size: int) -> Iterator[list[tuple[int, bytes]]]:
    with open(path, "rb") as handle:
        numbered = enumerate(handle, start=1)
        while True:
            batch = list(itertools.islice(numbered, size))
            if not batch:
                return
            yield batch


def load_file(backend: SearchBackend, path: str, *, replace: bool = False, dataset_version: str | None = None,
              processes: int | None = None, writer_threads: int = 0,
              progress: Callable[[int], None] | None = None) -> LoadReport:
    """Load every good line of `path` (upsert by id; --replace empties the dataset first); report the bad ones."""
    started = time.perf_counter()
    size = os.path.getsize(path)
    parallel_load = getattr(backend, "parallel_load", None)
    if parallel_load and (processes or 0) != 1 and (processes or size >= SLICE_THRESHOLD):
        # the embedded engine: each process parses and indexes its own slice of the file
        return parallel_load(path, replace=replace, processes=processes or os.cpu_count() or 1,
                             dataset_version=dataset_version, progress=progress)
    report = LoadReport()
    writer = backend.writer(replace=replace, threads=writer_threads)
    base_seq = writer.max_seq + 1 if hasattr(writer, "max_seq") else 0
    if processes is None:  # the engine's add loop holds one core; parse in the others
        processes = max(1, (os.cpu_count() or 1) - 1)
    if size < PARALLEL_THRESHOLD * max(processes, 1):
        processes = 1
    jobs = ((backend.preparer, base_seq, batch) for batch in _batches(path, BATCH_LINES))
    pool = multiprocessing.get_context("fork").Pool(processes) if processes > 1 else None
    try:
        results = pool.imap(prepare_batch, jobs, chunksize=1) if pool else map(prepare_batch, jobs)
        for documents, bad, version in results:
            writer.add(documents)
            report.loaded += len(documents)
            report.skipped.extend(bad)
            dataset_version = dataset_version or version
            if progress:
                progress(len(documents) + len(bad))
    except BaseException:
        writer.abort()
        raise
    finally:
        if pool:
            pool.close()
            pool.join()
    writer.close(dataset_version)
    report.seconds = time.perf_counter() - started
    return report
