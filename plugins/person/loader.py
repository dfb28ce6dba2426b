"""Streams a JSONL dataset into a search backend (in parallel slices when the backend supports it,
else parsed in worker processes and upserted in batches), or applies a delta (upserts and removed
ids, published at once); malformed lines are reported by number."""

from __future__ import annotations

import itertools
import os
import time
from typing import Callable, Iterator

import orjson

from plugins.person.backends import LoadReport, SearchBackend
from plugins.person.pools import fork_pool

BATCH_LINES = 2000
# below this many bytes-per-worker the process pool costs more than it saves
PARALLEL_THRESHOLD = 20_000
# files this large (or an explicit processes > 1) load in parallel slices when the backend can
SLICE_THRESHOLD = 8 << 20


def prepare_batch(args) -> tuple[list, list[tuple[int, str]], str | None]:
    """(preparer, base_seq, [(line_no, raw)]) -> (prepared documents, [(line_no, reason)], first
    dataset_version seen)."""
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


class BadIdsFile(ValueError):
    """An ids file line that is not an id."""

    def __init__(self, line_no: int, reason: str):
        super().__init__(f"line {line_no}: {reason}")
        self.line_no = line_no


def read_ids(path: str) -> list[str]:
    """The ids of a --delete-ids file: one per line (or a JSON object with an "id", so removed
    records' JSONL also works); blank lines are skipped, anything else that is not an id is
    BadIdsFile naming its line."""
    ids = []
    with open(path, "rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            line = raw.strip()
            if not line:
                continue
            if line.startswith(b"{"):
                try:
                    record = orjson.loads(line)
                except orjson.JSONDecodeError as exc:
                    raise BadIdsFile(line_no, f"invalid JSON ({exc})") from None
                if not isinstance(record.get("id"), str) or not record["id"]:
                    raise BadIdsFile(line_no, "a JSON line needs a string \"id\"")
                ids.append(record["id"])
                continue
            try:
                text = line.decode()
            except UnicodeDecodeError:
                raise BadIdsFile(line_no, "not UTF-8") from None
            if len(text.split()) != 1:
                raise BadIdsFile(line_no, "one id per line (this line holds whitespace inside)")
            ids.append(text)
    return list(dict.fromkeys(ids))


def load_file(
    backend: SearchBackend,
    path: str | None,
    *,
    replace: bool = False,
    upsert: bool = False,
    delete_ids: list[str] = (),
    dataset_version: str | None = None,
    processes: int | None = None,
    writer_threads: int = 0,
    progress: Callable[[int], None] | None = None,
    pace: float = 1.0,
) -> LoadReport:
    """Load every good line of `path` (upsert by id; --replace empties the dataset first); report
    the bad ones.

    `pace` below 1 makes the loader rest after each batch until the CPU time it used (its engine
    threads' included) is at most that share of one core (a background load leaving the cores, their
    caches and the memory bus to the searches served meanwhile); a paced load parses in its own
    process and one writer, so all its CPU time is counted.

    A delta (`upsert`, or `delete_ids` given, with or without a `path`) is all or nothing: its
    records and removals are published in one commit with the dataset version, after the last
    removal; a malformed line publishes none of it."""
    started = time.perf_counter()
    delta = upsert or bool(delete_ids) or path is None
    size = os.path.getsize(path) if path else 0
    parallel_load = getattr(backend, "parallel_load", None)
    if (
        not delta
        and parallel_load
        and pace >= 1
        and (processes or 0) != 1
        and (processes or size >= SLICE_THRESHOLD)
    ):
        # the embedded engine: each process parses and indexes its own slice of the file
        return parallel_load(
            path,
            replace=replace,
            processes=processes or os.cpu_count() or 1,
            dataset_version=dataset_version,
            progress=progress,
        )
    report = LoadReport()
    if processes is None:  # the engine's add loop holds one core; parse in the others
        processes = max(1, (os.cpu_count() or 1) - 1)
    if size < PARALLEL_THRESHOLD * max(processes, 1) or pace < 1:
        processes = 1
    writer = backend.writer(replace=replace, threads=writer_threads, delta=delta)
    base_seq = writer.max_seq + 1 if hasattr(writer, "max_seq") else 0
    pool = fork_pool(processes) if processes > 1 else None

    def prepared():
        jobs = (
            (backend.preparer, base_seq, batch)
            for batch in (_batches(path, BATCH_LINES) if path else ())
        )
        return pool.imap(prepare_batch, jobs, chunksize=1) if pool else map(prepare_batch, jobs)

    try:
        # a backend that cannot take back what it was sent: check the whole delta first
        if delta and not writer.rolls_back:
            report.skipped = [line for _, bad, _ in prepared() for line in bad]
        batch_started, batch_cpu = time.perf_counter(), time.process_time()
        for documents, bad, version in prepared() if not (delta and report.skipped) else ():
            report.skipped.extend(bad)
            # a delta with a bad line is read to its end only to name every bad line
            if not (delta and report.skipped):
                writer.add(documents)
                report.loaded += len(documents)
            dataset_version = dataset_version or version
            if progress:
                progress(len(documents) + len(bad))
            # the engine indexes a batch after add() returns: its CPU lands in the next batch's
            if pace < 1:
                time.sleep(
                    max(
                        0.0,
                        (time.process_time() - batch_cpu) / pace
                        - (time.perf_counter() - batch_started),
                    )
                )
                batch_started, batch_cpu = time.perf_counter(), time.process_time()
        if delta and report.skipped:
            writer.abort()
            report.loaded, report.published = 0, False
        else:
            report.deleted = writer.delete(list(delete_ids)) if delete_ids else 0
            report.count = writer.close(dataset_version)
    except BaseException:
        writer.abort()
        raise
    finally:
        if pool:
            pool.close()
            pool.join()
    report.seconds = time.perf_counter() - started
    return report
