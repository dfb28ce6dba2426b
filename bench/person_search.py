"""Person search benchmark: generate profiles and load them as a stream into the embedded index
(cached; no JSONL is written), time a fixed query mix in-process and through gunicorn (2 workers),
deep scroll pages against the first, bulk enrichment of 100 local matches, the index on disk and the
workers' memory, then apply a 1 % delta (N/100 changed, N/500 new, N/1000 removed) to a copy of the
index while searching it.

    .venv/bin/python bench/person_search.py                   # 1,000,000 profiles
    .venv/bin/python bench/person_search.py --quick           # 50,000 profiles, fewer repetitions
    .venv/bin/python bench/person_search.py --count 10000000  # ten million
    .venv/bin/python bench/person_search.py --count 200000 --reload --no-delta

The index of a count is built once, then cached in bench/.cache/.

Figures are printed as milliseconds and as ratios against a baseline measured in the same run (the
in-process engine for HTTP, the first page for deep scroll pages, the searches before the delta for
those during it).
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from bench.harness import (  # noqa: E402
    KeepAliveClient,
    free_port,
    load_average,
    percentile,
    start_gunicorn,
    status_kib,
    stop,
    time_calls,
    worker_pids,
)

CACHE = ROOT / "bench" / ".cache"
T = lambda field, value: {"term": {field: value}}  # noqa: E731

QUERIES = [  # (name, request body): every clause type, relevance and field sorts, deep from, scroll
    ("term", {"query": T("job_company_name", "acme labs")}),
    (
        "terms + match",
        {
            "query": {
                "bool": {
                    "filter": [{"terms": {"location_country": ["united states", "canada"]}}],
                    "must": [{"match": {"job_title": "software engineer"}}],
                }
            }
        },
    ),
    (
        "match operator and",
        {"query": {"match": {"job_title": {"query": "senior data engineer", "operator": "and"}}}},
    ),
    (
        "match msm 2",
        {
            "query": {
                "match": {
                    "job_title": {
                        "query": "senior staff software engineer",
                        "minimum_should_match": 2,
                    }
                }
            }
        },
    ),
    ("match_phrase", {"query": {"match_phrase": {"job_title": "senior software engineer"}}}),
    ("match_phrase summary", {"query": {"match_phrase": {"summary": "years of experience"}}}),
    (
        "bool must_not",
        {
            "query": {
                "bool": {
                    "filter": [T("job_title_role", "engineering")],
                    "must_not": [
                        T("job_title_levels", "senior"),
                        {"terms": {"location_country": ["india"]}},
                        {"exists": {"field": "linkedin_url"}},
                    ],
                }
            }
        },
    ),
    (
        "range years, sort desc",
        {
            "query": {"range": {"inferred_years_experience": {"gte": 10, "lte": 15}}},
            "sort": [{"inferred_years_experience": "desc"}],
        },
    ),
    ("range date", {"query": {"range": {"job_start_date": {"gte": "2023-01", "lt": "2024"}}}}),
    (
        "exists x2 + term",
        {
            "query": {
                "bool": {
                    "filter": [
                        {"exists": {"field": "linkedin_url"}},
                        {"exists": {"field": "education.school.name"}},
                        T("industry", "computer software"),
                    ]
                }
            }
        },
    ),
    ("prefix", {"query": {"prefix": {"last_name": "mc"}}}),
    ("wildcard nested path", {"query": {"wildcard": {"experience.company.name": "*analytics"}}}),
    (
        "prefix + wildcard",
        {
            "query": {
                "bool": {
                    "must": [
                        {"prefix": {"last_name": "ma"}},
                        {"wildcard": {"experience.company.name": "*labs"}},
                    ]
                }
            }
        },
    ),
    (
        "should x6 msm 2 + range",
        {
            "query": {
                "bool": {
                    "should": [
                        {"match": {"job_title": "engineer"}},
                        {"match": {"job_title": "manager"}},
                        T("skills", "python"),
                        {"terms": {"location_country": ["germany", "france"]}},
                        {"match": {"summary": "kubernetes"}},
                        T("job_title_levels", "senior"),
                    ],
                    "minimum_should_match": 2,
                    "filter": [{"range": {"inferred_years_experience": {"gte": 3}}}],
                }
            }
        },
    ),
    (
        "should only + must_not",
        {
            "query": {
                "bool": {
                    "should": [T("skills", "rust"), T("skills", "go")],
                    "must_not": [T("location_country", "united states")],
                }
            }
        },
    ),
    (
        "flattened objects",
        {
            "query": {
                "bool": {
                    "filter": [
                        T("experience.company.name", "hooli"),
                        T("experience.title.role", "product"),
                    ]
                }
            }
        },
    ),
    (
        "match skills and + term",
        {
            "query": {
                "bool": {
                    "must": [{"match": {"skills": "machine learning"}}],
                    "filter": [T("experience.company.name", "nova analytics")],
                }
            }
        },
    ),
    ("must_not only", {"query": {"bool": {"must_not": [{"exists": {"field": "job_title"}}]}}}),
    ("match_all sort keyword", {"query": {"match_all": {}}, "sort": [{"location_country": "asc"}]}),
    (
        "match_all sort date desc",
        {"query": {"match_all": {}}, "sort": [{"job_start_date": "desc"}]},
    ),
    (
        "term, from 9900",
        {"query": T("location_country", "united states"), "from": 9900, "size": 100},
    ),
    (
        "relevance, from 9900",
        {"query": {"match": {"job_title": "engineer manager"}}, "from": 9900, "size": 100},
    ),
    (
        "number sort, from 9900",
        {
            "query": T("job_title_role", "engineering"),
            "sort": [{"birth_year": "asc"}],
            "from": 9900,
            "size": 100,
        },
    ),
]
SQL_TWINS = [  # (name of a DSL query above, the SQL that translates to exactly that query)
    ("term", "SELECT * FROM person WHERE job_company_name = 'acme labs'"),
    ("match_phrase", "SELECT * FROM person WHERE job_title = 'senior software engineer'"),
    ("prefix", "SELECT * FROM person WHERE last_name LIKE 'mc%'"),
    (
        "wildcard nested path",
        "SELECT * FROM person WHERE experience.company.name LIKE '%analytics'",
    ),
    (
        "prefix + wildcard",
        "SELECT * FROM person WHERE last_name LIKE 'ma%' AND experience.company.name LIKE '%labs'",
    ),
]
SCROLLS = [  # (name, body, pages to walk): each page after the first is timed as one "scroll" query
    ("scroll index order", {"query": T("location_country", "united states"), "size": 100}, 30),
    (
        "scroll number sort",
        {"query": {"match_all": {}}, "size": 100, "sort": [{"inferred_years_experience": "desc"}]},
        30,
    ),
]


def summary(values: list[float]) -> str:
    return (
        f"p50 {percentile(values, 50):7.2f}  p95 {percentile(values, 95):7.2f}  p99 "
        f"{percentile(values, 99):7.2f} ms"
    )


def generated_lines(count: int, seed: int, start: int = 0):
    """(line number, JSON line) of profiles start .. start+count-1 of the sample named by `seed`."""
    from plugins.person import sample

    for n, person in enumerate(sample.generate(count, seed, start=start), start=start + 1):
        yield n, orjson.dumps(person)


LOADER_STATS = None  # a queue the load workers report their CPU on (set before they are forked)


def index_generated(args) -> dict:
    """Load worker: generate its range of profiles and index them as they come (no file in between).
    Reports on LOADER_STATS the CPU its main thread spent generating (timed in chunks of 1,000
    profiles), its main thread's CPU in all (generating, building documents, handing them to
    tantivy) and its whole process's (tantivy's thread included)."""
    from plugins.person.backends.embedded.build import index_lines

    directory, count, seed, start, base_seq = args
    generating = 0.0

    def timed_lines():
        nonlocal generating
        lines = generated_lines(count, seed, start)
        while True:
            started = time.thread_time()
            chunk = list(itertools.islice(lines, 1000))
            generating += time.thread_time() - started
            if not chunk:
                return
            yield from chunk

    main, process = time.thread_time(), time.process_time()
    result = index_lines(directory, timed_lines(), base_seq)
    LOADER_STATS.put((generating, time.thread_time() - main, time.process_time() - process))
    return result


def ensure_index(
    count: int, seed: int, reload: bool, processes: int | None, from_file: bool = False
) -> Path:
    from plugins.person.backends.embedded import EmbeddedBackend
    from plugins.person.backends.embedded.build import load_parts, worker_heap
    from plugins.person.backends.embedded.layout import SCHEMA_VERSION

    directory = CACHE / f"index-{count}-{seed}"
    stale = EmbeddedBackend(str(directory)).read_meta().get("schema_version") != SCHEMA_VERSION
    if not (reload or stale):
        print(f"using cached index {directory} (--reload to rebuild and time the load)")
        return directory
    shutil.rmtree(directory, ignore_errors=True)
    processes = processes or os.cpu_count() or 1
    if from_file:
        load_whole_file(directory, count, seed, processes)
        return directory
    step = -(-count // processes)
    generate_us, line_bytes = generation_cost(seed)
    part_bytes = int(step * line_bytes)
    # what load_parts gives each loader, read before the load takes memory
    heap = worker_heap(part_bytes, processes)
    global LOADER_STATS
    LOADER_STATS = multiprocessing.get_context("fork").SimpleQueue()
    cpu = time.process_time()
    report = load_parts(
        EmbeddedBackend(str(directory)),
        index_generated,
        lambda staging, base_seq: [
            (str(staging / f"part-{k}"), min(step, count - k * step), seed, k * step, base_seq)
            for k in range(processes)
            if k * step < count
        ],
        replace=True,
        dataset_version=None,
        progress=None,
        part_bytes=part_bytes,
    )
    wall, parent_cpu = report.seconds, time.process_time() - cpu
    stats = [LOADER_STATS.get() for _ in range(min(processes, -(-count // step)))]
    generating, main, process = (sum(column) for column in zip(*stats))
    without_generation = wall - generating / processes
    rate = report.loaded / without_generation
    per = 1e6 / report.loaded
    print(
        f"loaded {report.loaded:,} generated profiles in {wall:.1f}s with {processes} processes ("
        f"{heap / 1e9:.1f} GB "
        f"indexing budget each), generating included ({report.loaded / wall:,.0f}/s); generating "
        "took "
        f"{generating * per:.0f} µs CPU a profile in the loaders (measured there; {generate_us:.0f}"
        " µs alone), so the load "
        f"itself took about {without_generation:.1f}s: {rate:,.0f} profiles/s; skipped "
        f"{len(report.skipped)}; "
        f"load average {load_average()}"
    )
    print(
        f"  CPU a profile: loaders' main threads {(main - generating) * per:.1f} µs besides "
        "generating (building documents, "
        f"handing them to tantivy), tantivy's threads {(process - main) * per:.0f} µs, the "
        "publishing parent "
        f"{parent_cpu * per:.1f} µs; the loaders used {process / wall / processes:.0%} of their "
        f"{processes} cores"
    )
    small_batch_ceiling(seed, rate)
    engine_ceiling(count, seed, rate, processes, heap, line_bytes)
    return directory


def load_whole_file(directory: Path, count: int, seed: int, processes: int) -> None:
    """The operator's path: the whole dataset written as one JSONL file (untimed), then `person load
    FILE --replace` (timed, with the CPU of its processes), against tantivy alone on prebuilt
    documents in the same run."""
    import resource

    from plugins.person.backends.embedded import EmbeddedBackend
    from plugins.person.backends.embedded.build import plan_slices, worker_heap
    from plugins.person.loader import load_file

    started = time.perf_counter()
    source = written_dataset(count, seed, processes)
    size = source.stat().st_size
    print(
        f"wrote {count:,} generated profiles as one JSONL file of {size / 1e9:.1f} GB in "
        f"{time.perf_counter() - started:.0f}s "
        f"(untimed); load average {load_average()}"
    )
    try:
        heap = worker_heap(
            max(end - start for start, end in plan_slices(str(source), processes)), processes
        )
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = time.process_time()
        report = load_file(
            EmbeddedBackend(str(directory)), str(source), replace=True, processes=processes
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (
            time.process_time()
            - cpu
            + (after.ru_utime - children.ru_utime)
            + (after.ru_stime - children.ru_stime)
        )
    finally:
        source.unlink()
    rate = report.loaded / report.seconds
    print(
        f"loaded {report.loaded:,} profiles from that file (`person load FILE --replace`, "
        f"{processes} slices, {heap / 1e9:.1f} GB "
        f"indexing budget each) in {report.seconds:.1f}s: {rate:,.0f} profiles/s, "
        f"{cpu / report.loaded * 1e6:.0f} µs CPU a "
        f"profile in all its processes; skipped {len(report.skipped)}; load average "
        f"{load_average()}"
    )
    engine_ceiling(count, seed, rate, processes, heap, size / count, like_for_like=False)


def written_dataset(count: int, seed: int, processes: int) -> Path:
    """Profiles 0 .. count-1 of the sample named by `seed` as one JSONL file in the cache: parts
    generated in parallel, then appended to the first (the caller deletes it)."""
    from plugins.person.pools import fork_pool

    path = CACHE / f"people-{count}-{seed}.jsonl"
    step = -(-count // processes)
    parts = [
        (f"{path}.part-{k}", min(step, count - k * step), seed, k * step)
        for k in range(processes)
        if k * step < count
    ]
    CACHE.mkdir(parents=True, exist_ok=True)
    with fork_pool(len(parts)) as pool:
        pool.map(write_lines, parts, chunksize=1)
    concatenate([part for part, *_ in parts], path)
    return path


def concatenate(parts: list[str], path: Path) -> None:
    """Join the files `parts` into `path` (the first renamed, the others appended and removed),
    synced to disk so that no write-back of them runs during the timed load that reads it."""
    os.replace(parts[0], path)
    with open(path, "ab") as joined:
        for part in parts[1:]:
            with open(part, "rb") as source:
                shutil.copyfileobj(source, joined, 1 << 24)
            os.unlink(part)
    os.sync()


def write_lines(args) -> int:
    """Dataset writer: profiles start .. start+count-1 as JSON lines to `path`."""
    path, count, seed, start = args
    with open(path, "wb") as lines:
        for _, line in generated_lines(count, seed, start):
            lines.write(line)
            lines.write(b"\n")
    return count


def loader_against_engine(count: int, seed: int, processes: int | None) -> None:
    """engine_ceiling alone, with the configuration a load of `count` generated profiles would
    have."""
    from plugins.person.backends.embedded.build import worker_heap

    processes = processes or os.cpu_count() or 1
    _, line_bytes = generation_cost(seed)
    engine_ceiling(
        count,
        seed,
        None,
        processes,
        worker_heap(int(-(-count // processes) * line_bytes), processes),
        line_bytes,
    )


def generation_cost(seed: int, count: int = 20_000) -> tuple[float, float]:
    """(CPU µs to generate and serialize one profile: the bench's own cost inside the streamed load,
    bytes a line)."""
    started, size = time.process_time(), 0
    for _, line in generated_lines(count, seed, start=10_000_000 * seed):
        size += len(line) + 1
    return (time.process_time() - started) / count * 1e6, size / count


def small_batch_ceiling(seed: int, load_rate: float, count: int = 100_000) -> None:
    """What tantivy alone indexes per second when 100,000 documents are built beforehand (untimed),
    one writer with one indexing thread per core: small segments, which tantivy fills faster per
    profile than a big load's. Also the per-profile CPU of the loader's own document building
    (parse, flatten, engine JSON) on the path it takes."""
    import gc

    import tantivy

    from plugins.person.backends.embedded import lines as engine_lines
    from plugins.person.backends.embedded.layout import SCHEMA, prepare_document

    raw_lines = [line for _, line in generated_lines(count, seed)]
    gc.disable()
    try:
        started = time.process_time()
        documents = [engine_lines.prepare_line(line, seq)[2] for seq, line in enumerate(raw_lines)]
        loader_us = (time.process_time() - started) / len(raw_lines) * 1e6
        started = time.process_time()
        for seq, line in enumerate(raw_lines[:20_000]):
            prepare_document(orjson.loads(line), line, seq)
        python_us = (time.process_time() - started) / min(len(raw_lines), 20_000) * 1e6
        directory = Path(tempfile.mkdtemp(prefix="hirekit-ceiling-"))
        try:
            writer = tantivy.Index(SCHEMA, path=str(directory)).writer(
                heap_size=1_000_000_000, num_threads=os.cpu_count() or 1
            )
            started, cpu = time.perf_counter(), time.process_time()
            for document in documents:
                writer.add_json(document)
            writer.commit()
            writer.wait_merging_threads()
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        finally:
            shutil.rmtree(directory, ignore_errors=True)
    finally:
        gc.enable()
    ceiling = len(documents) / wall
    path = "the C fast path" if engine_lines.fast_path_built() else "the Python path"
    print(
        f"engine alone, {len(documents):,} documents built beforehand, {os.cpu_count()} indexing "
        f"threads: {ceiling:,.0f} profiles/s "
        f"({cpu / len(documents) * 1e6:.0f} µs CPU each); the loader builds a document in "
        f"{loader_us:.1f} µs CPU on {path} "
        f"(the Python path alone: {python_us:.1f} µs)"
    )
    print(
        f"  load rate / this small-batch rate {load_rate / ceiling:.2f}x (for reference: tantivy's "
        "own per-profile cost "
        f"grows with the segment it fills, so a big load cannot reach it)"
    )


def prebuilt_documents(args) -> int:
    """Ceiling helper: write profiles start .. start+count-1 as their engine documents, one a line,
    to `documents_path`, and (unless `lines_path` is None) as JSON lines to `lines_path`."""
    from plugins.person.backends.embedded.lines import prepare_line

    documents_path, lines_path, count, seed, start = args
    with (
        open(documents_path, "w", encoding="utf-8") as documents,
        open(lines_path or os.devnull, "wb") as lines,
    ):
        for n, line in generated_lines(count, seed, start):
            documents.write(prepare_line(line, n)[2])
            documents.write("\n")
            if lines_path:
                lines.write(line)
                lines.write(b"\n")
    return count


def index_prebuilt(args) -> tuple[float, float, float]:
    """Ceiling worker: index a file of prebuilt documents as one loader does (one writer, one
    thread, the load's budget), starting when every worker is ready; (wall seconds, CPU seconds, CPU
    seconds of reading the file alone, which the timed pass includes: measured by one untimed pass
    before it, which also brings the file into the page cache)."""
    import tantivy

    from plugins.person.backends.embedded.layout import SCHEMA

    path, directory, heap, barrier = args
    os.makedirs(directory)
    writer = tantivy.Index(SCHEMA, path=directory).writer(heap_size=heap, num_threads=1)
    with open(path, encoding="utf-8") as handle:
        cpu = time.process_time()
        for _ in handle:
            pass
        reading = time.process_time() - cpu
        handle.seek(0)
        barrier.wait()
        started, cpu = time.perf_counter(), time.process_time()
        for document in handle:
            writer.add_json(document)
        writer.commit()
        writer.wait_merging_threads()
    return time.perf_counter() - started, time.process_time() - cpu, reading


def engine_ceiling(
    count: int,
    seed: int,
    load_rate: float | None,
    processes: int,
    heap: int,
    line_bytes: float,
    like_for_like: bool = True,
) -> None:
    """The target's baseline: tantivy alone on documents built beforehand (untimed, read back from
    files), in the load's own configuration: as many writers as loaders, one indexing thread and the
    load's budget each. Each writer indexes its share of the load, or, for a load bigger than one
    budget a loader, one full budget's worth (a big load writes segments of that size and merges
    none, see worker_heap), so the engine does per profile what it does in the load.

    Then (unless `like_for_like` is off, when the load timed was already one from a file) the loader
    like for like: the same profiles as one JSONL file, loaded as `person load FILE --replace` loads
    it (slices in as many processes, the budget worker_heap gives them), with nothing else running
    in its processes."""
    import multiprocessing

    from plugins.person.backends.embedded import EmbeddedBackend
    from plugins.person.backends.embedded.build import HEAP_PER_INPUT_BYTE, worker_heap
    from plugins.person.loader import load_file
    from plugins.person.pools import fork_pool

    share = min(-(-count // processes), int(heap / HEAP_PER_INPUT_BYTE / line_bytes))
    workdir = Path(tempfile.mkdtemp(prefix="ceiling-", dir=CACHE))
    try:
        files = [
            (
                str(workdir / f"documents-{k}.jsonl"),
                str(workdir / f"lines-{k}.jsonl") if like_for_like else None,
            )
            for k in range(processes)
        ]
        with fork_pool(processes) as pool:
            pool.map(
                prebuilt_documents,
                [(*files[k], share, seed, k * share) for k in range(processes)],
                chunksize=1,
            )
        os.sync()  # written back before the timed indexing, as the load's file was
        size = sum(os.path.getsize(documents) for documents, _ in files)
        indexes = [str(workdir / f"index-{k}") for k in range(processes)]
        with multiprocessing.get_context("fork").Manager() as manager, fork_pool(processes) as pool:
            barrier = manager.Barrier(processes)
            timings = pool.map(
                index_prebuilt,
                [(files[k][0], indexes[k], heap, barrier) for k in range(processes)],
                chunksize=1,
            )
        for (documents, _), index in zip(files, indexes):  # room on disk for the like for like load
            os.unlink(documents)
            shutil.rmtree(index)
        wall = max(seconds for seconds, _, _ in timings)
        cpu = sum(cpu for _, cpu, _ in timings)
        reading_us = sum(reading for _, _, reading in timings) / share / processes * 1e6
        ceiling = share * processes / wall
        print(
            f"engine alone in the load's configuration ({processes} writers, 1 indexing thread and "
            f"{heap / 1e9:.1f} GB each), "
            f"{share * processes:,} documents built beforehand ({size / share / processes:,.0f} "
            "bytes each, read back from "
            f"files): {ceiling:,.0f} profiles/s ({cpu / share / processes * 1e6:.0f} µs CPU each, "
            "of which reading the file "
            f"back {reading_us:.1f} µs), {wall:.1f}s"
        )
        if load_rate is not None and like_for_like:
            print(
                f"load rate / engine-alone ceiling {load_rate / ceiling:.2f}x (target >= 0.9x; the "
                "streamed load's loaders "
                f"also run the generator, whose Python slows tantivy's threads beside it)"
            )
        elif load_rate is not None:
            print(
                f"whole-dataset load from a file / engine-alone ceiling {load_rate / ceiling:.2f}x "
                "(target >= 0.9x)"
            )
            return
        source = workdir / "people.jsonl"
        concatenate([lines for _, lines in files], source)
        load_heap = worker_heap(-(-os.path.getsize(source) // processes), processes)
        report = load_file(
            EmbeddedBackend(str(workdir / "loaded")), str(source), replace=True, processes=processes
        )
        rate = report.loaded / report.seconds
        print(
            f"the loader like for like: `person load` of those {report.loaded:,} profiles from a "
            f"JSONL file, {processes} slices "
            f"({load_heap / 1e9:.1f} GB budget each): {rate:,.0f} profiles/s, {report.seconds:.1f}s"
        )
        print(f"loader / engine alone, like for like {rate / ceiling:.2f}x (target >= 0.9x)")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def disk_and_memory(index: Path, count: int, server) -> None:
    """The index on disk and each gunicorn worker's memory per profile: anonymous (RssAnon, the
    process's own) apart from the index's mapped pages (RssFile, the OS page cache's, shared between
    workers and dropped under pressure)."""
    size = sum(f.stat().st_size for f in index.rglob("*") if f.is_file())
    print(f"\nindex on disk {size / 2**20:,.0f} MiB ({size / count:,.0f} bytes a profile)")
    for pid in worker_pids(server):
        anon, mapped = status_kib(pid, "RssAnon"), status_kib(pid, "RssFile")
        print(
            f"gunicorn worker {pid}: RssAnon {anon / 1024:,.0f} MiB ({anon * 1024 / count:,.1f} "
            "bytes a profile; target <= 2 GiB), "
            f"mapped index and code pages RssFile {mapped / 1024:,.0f} MiB"
        )


def time_mix(
    app, one_thread_app, client: KeepAliveClient, repeats: int
) -> tuple[dict[str, list[float]], ...]:
    """(engine timings, one-thread engine timings, HTTP timings) per query: each query is timed
    in-process as served (split across threads on a large index), in-process on one thread, and then
    over HTTP straight after, so that the machine's slow and fast spells fall on every side of a
    ratio alike (each side in a block of its own, after a warm-up, so none evicts the others' caches
    between runs)."""
    from plugins.person import services

    def post(params):
        return client.call("POST", "/v2/person/search", params)

    def timed(search, params) -> list[float]:
        return time_calls(lambda: search(params), repeats, warmup=3)

    engine: dict[str, list[float]] = {}
    one_thread: dict[str, list[float]] = {}
    http: dict[str, list[float]] = {}
    for name, body in QUERIES:
        params = {"size": 10, **body}
        with one_thread_app.app_context():
            one_thread[name] = timed(services.people_search, params)
        with app.app_context():
            engine[name] = timed(services.people_search, params)
            http[name] = timed(post, params)
    for name, body, pages in SCROLLS:
        with one_thread_app.app_context():
            one_thread[name] = walk_scroll(services.people_search, body, pages)
        with app.app_context():
            engine[name] = walk_scroll(services.people_search, body, pages)
            http[name] = walk_scroll(post, body, pages)
    return engine, one_thread, http


def time_concurrent_mix(
    base: str, headers: dict, clients: int, rounds: int
) -> tuple[list[float], float]:
    """(milliseconds of every search, searches a second) of `clients` keep-alive connections sending
    the query mix at once over HTTP, `rounds` times each, every client in its own order (so they do
    not move in step)."""
    import random

    timings: list[float] = []
    lock = threading.Lock()

    def client_loop(seed: int) -> None:
        client = KeepAliveClient(base, headers)
        order = [body for _, body in QUERIES] * rounds
        random.Random(seed).shuffle(order)
        mine = []
        for body in order:
            started = time.perf_counter()
            client.call("POST", "/v2/person/search", {"size": 10, **body})
            mine.append((time.perf_counter() - started) * 1000)
        with lock:
            timings.extend(mine)

    threads = [threading.Thread(target=client_loop, args=(seed,)) for seed in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return timings, len(timings) / (time.perf_counter() - started)


def time_sql_twins(app, repeats: int) -> list[tuple[str, list[float], list[float], list[float]]]:
    """(name, DSL ms, SQL ms, SQL translation ms uncached) per twin: each SQL search is timed right
    after its DSL twin, run after run, so both see the same machine; the translation alone is timed
    with sqlglot's parse uncached."""
    from plugins.person import services, sql

    bodies = dict(QUERIES)
    rows = []
    with app.app_context():
        for name, statement in SQL_TWINS:
            dsl_params, sql_params = {"size": 10, **bodies[name]}, {"size": 10, "sql": statement}
            same = [p["id"] for p in services.people_search(dict(sql_params))["data"]] == [
                p["id"] for p in services.people_search(dict(dsl_params))["data"]
            ]
            assert same, f"{name}: the SQL twin answers other ids"
            dsl_times, sql_times, translate_times = [], [], []
            for _ in range(repeats * 3):
                for params, times in ((dsl_params, dsl_times), (sql_params, sql_times)):
                    started = time.perf_counter()
                    services.people_search(dict(params))
                    times.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                sql._translate.__wrapped__(statement)
                translate_times.append((time.perf_counter() - started) * 1000)
            rows.append((name, dsl_times, sql_times, translate_times))
    return rows


def walk_scroll(search, body: dict, pages: int) -> list[float]:
    """Milliseconds of each page after the first."""
    times, token = [], None
    for _ in range(pages):
        params = {**body, **({"scroll_token": token} if token else {})}
        started = time.perf_counter()
        answer = search(params)
        if token:
            times.append((time.perf_counter() - started) * 1000)
        token = answer.get("scroll_token")
        if not token:
            break
    return times


def time_deep_scroll(app, repeats: int) -> None:
    """Scroll pages sorted by a field, walked far (pages 250-300 of 100), against the first page of
    the same scroll (timed `repeats` times on its own)."""
    from plugins.person import services

    with app.app_context():
        for name, body in (
            (
                "number sort",
                {
                    "query": {"match_all": {}},
                    "size": 100,
                    "sort": [{"inferred_years_experience": "desc"}],
                },
            ),
            (
                "date sort",
                {
                    "query": T("location_country", "united states"),
                    "size": 100,
                    "sort": [{"job_start_date": "asc"}],
                },
            ),
        ):
            first = time_calls(lambda: services.people_search(dict(body)), repeats, warmup=2)
            deep = walk_scroll(services.people_search, body, 300)[-50:]
            ratio = percentile(deep, 50) / percentile(first, 50)
            print(
                f"deep scroll, {name}: first page {summary(first)}; pages 250-300 {summary(deep)}; "
                f"deep / first p50 {ratio:.2f}x (target <= 2x)"
            )


def time_floor(client: KeepAliveClient, repeats: int) -> list[float]:
    """The app's per-request cost with no search: auth, limiter, routing and a small JSON answer
    over gunicorn."""
    return time_calls(lambda: client.call("GET", "/v2/person/schema"), repeats, warmup=4)


def bulk_enrich_body(seed: int) -> dict:
    """100 enrich requests by an identifier of loaded profiles (the first ones generated)."""
    requests_ = []
    for _, line in generated_lines(2_000, seed):
        person = orjson.loads(line)
        if person.get("work_email"):
            requests_.append({"params": {"email": person["work_email"]}})
        elif person.get("linkedin_url"):
            requests_.append({"params": {"profile": [person["linkedin_url"]]}})
        if len(requests_) == 100:
            return {"requests": requests_}
    return {"requests": requests_}


def delta_files(count: int, seed: int, workdir: Path) -> tuple[Path, Path, str]:
    """A 1 % delta of the loaded sample: N/100 profiles changed (same id, another company), N/500
    new, N/1000 removed."""
    from plugins.person.sample import person_id

    changed, new, removed = count // 100, count // 500, count // 1000
    delta, ids = workdir / "delta.jsonl", workdir / "removed-ids.txt"
    with open(delta, "wb") as out:
        for _, line in generated_lines(changed, seed, start=count // 4):
            out.write(
                orjson.dumps(
                    {
                        **orjson.loads(line),
                        "job_company_name": "delta co",
                        "dataset_version": "delta-1",
                    }
                )
                + b"\n"
            )
        for _, line in generated_lines(new, seed, start=count):
            out.write(line + b"\n")
    ids.write_text("".join(person_id(seed, count // 2 + k) + "\n" for k in range(removed)))
    return delta, ids, f"{changed:,} changed, {new:,} new, {removed:,} removed"


WARMUP_ROUNDS = 2
# rounds of the mix before a delta: enough that its p95 is not decided by one query's few runs
BEFORE_ROUNDS = 16


def time_delta(
    index: Path,
    count: int,
    seed: int,
    workdir: Path,
    env: dict,
    foreground: bool,
    searchers: int,
    http_key: str | None,
    pace: float | None,
) -> None:
    """Apply the delta with `person load --upsert --delete-ids` (its own process, as an operator
    runs it: in the background, at idle CPU priority, paced, with one indexing thread, unless
    `foreground`) to a hard-linked copy of the index while `searchers` threads search the copy with
    the query mix, in this process or, given `http_key`, over HTTP through gunicorn serving the
    copy; the same before it is the baseline. Every search must see the dataset whole before or
    whole after (the match_all count of each round says which)."""
    from app import create_app
    from plugins.person import services
    from plugins.person.datasets import sources

    copy = workdir / "delta-index"
    # the engine never rewrites a file: links are a safe copy
    shutil.copytree(index, copy, copy_function=os.link)
    delta, ids, described = delta_files(count, seed, workdir)
    copy_env = {**env, "HIREKIT_SEARCH_INDEX": str(copy)}
    app = create_app(
        {
            "DATABASE_URL": env["HIREKIT_DATABASE_URL"],
            "SEARCH_INDEX": str(copy),
            "RATE_LIMIT_ENABLED": False,
            "LOG_LEVEL": "WARNING",
        }
    )
    server = port = None
    if http_key:
        port = free_port()
        server = start_gunicorn("wsgi:app", port, copy_env, settle_seconds=3)
    local = threading.local()

    def search(body: dict) -> dict:
        if not http_key:
            return services.people_search(body)
        if not hasattr(local, "client"):
            local.client = KeepAliveClient(f"http://127.0.0.1:{port}", {"X-API-Key": http_key})
        return local.client.call("POST", "/v2/person/search", body)

    def state() -> tuple:
        """(profiles, dataset_version) a search sees now; over HTTP the version is not in the
        answer."""
        if http_key:
            return search({"size": 1, "query": {"match_all": {}}})["total"], None
        backend = sources().backend()
        return backend.count({"match_all": {}}), backend.dataset_info()["dataset_version"]

    def mix_round(timings: list[float], seen: set, by_query: dict | None = None) -> None:
        for name, body in QUERIES:
            started = time.perf_counter()
            search({"size": 10, **body})
            timings.append((time.perf_counter() - started) * 1000)
            if by_query is not None:
                by_query.setdefault(name, []).append(timings[-1])
        seen.add(state())

    def at_once(rounds_left, timings: list[float], seen: set, by_query: dict) -> None:
        """`searchers` threads each running rounds of the mix while rounds_left() says so."""

        def run() -> None:
            with app.app_context():
                while rounds_left():
                    mix_round(timings, seen, by_query)

        threads = [threading.Thread(target=run) for _ in range(searchers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    with app.app_context():
        # a new process's first searches open the segments: not a serving worker's speed
        for _ in range(WARMUP_ROUNDS):
            mix_round([], set())
        before, seen_before, before_by_query = [], set(), {}
        rounds = iter(range(BEFORE_ROUNDS * searchers))
        at_once(lambda: next(rounds, None) is not None, before, seen_before, before_by_query)
        command = [
            sys.executable,
            "-m",
            "flask",
            "--app",
            "wsgi",
            "person",
            "load",
            str(delta),
            "--upsert",
            "--delete-ids",
            str(ids),
            "--dataset-version",
            "delta-1",
        ]
        if foreground:
            command.append("--foreground")
        if pace:
            command += ["--pace", str(pace)]
        started = time.perf_counter()
        update = subprocess.Popen(
            command, cwd=ROOT, env=copy_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        output = []
        reader = threading.Thread(target=lambda: output.append(update.stdout.read()), daemon=True)
        reader.start()
        during, seen_during, during_by_query = [], set(), {}
        at_once(lambda: update.poll() is None, during, seen_during, during_by_query)
        took = time.perf_counter() - started
        reader.join()
        after = set()
        mix_round([], after)
    if server:
        stop(server)
    shutil.rmtree(copy, ignore_errors=True)
    print(
        f"\ndelta of {described} ({delta.stat().st_size / 2**20:,.0f} MiB JSONL): applied in "
        f"{took:.1f}s "
        f"(exit {update.returncode}) by `person load --upsert --delete-ids"
        f"{' --foreground' if foreground else ''}{f' --pace {pace}' if pace else ''}`"
        f"{'' if foreground else ' (in the background)'}, {searchers} searching "
        f"thread(s) {'over HTTP (gunicorn -w 2)' if http_key else 'in-process'}; load average "
        f"{load_average()}"
    )
    lines = (
        output[0].decode(errors="replace").strip().splitlines()
        if output and output[0]
        else ["(no output)"]
    )
    for line in [line for line in lines if line.startswith("loading in the background")] + lines[
        -1:
    ]:
        print("  " + line)
    ratio50 = percentile(during, 50) / percentile(before, 50) if during else float("nan")
    ratio95 = percentile(during, 95) / percentile(before, 95) if during else float("nan")
    print(f"  searches before: {summary(before)} ({len(before)} searches)")
    print(
        f"  searches during: {summary(during)} ({len(during)} searches); during / before p50 "
        f"{ratio50:.2f}x, "
        f"p95 {ratio95:.2f}x (target <= 1.5x)"
    )
    slowed = sorted(
        (
            (
                statistics.median(during_by_query[name]) / statistics.median(before_by_query[name]),
                name,
            )
            for name in during_by_query
        ),
        reverse=True,
    )[:4]
    print(
        "  most slowed, p50 during / before: "
        + "; ".join(
            f"{name} {ratio:.2f}x ({statistics.median(before_by_query[name]):.1f} ms before)"
            for ratio, name in slowed
        )
    )
    print(
        f"  (profiles, dataset_version) seen: before {sorted(seen_before)}, during "
        f"{sorted(seen_during)}, after {sorted(after)}"
    )
    expected = {*seen_before, *after}
    if not seen_during <= expected or len(after) != 1 or after == seen_before:
        raise SystemExit(
            f"a search saw a state neither before nor after the delta: {seen_during - expected}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--count", type=int, default=None, help="profiles (default 1,000,000; 50,000 with --quick)"
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--reload", action="store_true", help="rebuild the index even when cached")
    parser.add_argument(
        "--processes", type=int, default=None, help="loader slice processes (default CPU count)"
    )
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument(
        "--clients",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[2, 4],
        help="connections sending the mix at once over HTTP, a shape each (default 2,4)",
    )
    parser.add_argument(
        "--load-only",
        action="store_true",
        help="only (re)build the index and print the load figures",
    )
    parser.add_argument(
        "--from-file",
        action="store_true",
        help="with --reload or --load-only: build the index as an operator does, from the whole "
        "dataset written "
        "as one JSONL file first (untimed; as big as the dataset, deleted after), instead of "
        "streamed",
    )
    parser.add_argument(
        "--loader-against-engine",
        action="store_true",
        help="only time the loader against tantivy alone on the same profiles (no index is built "
        "or read)",
    )
    parser.add_argument(
        "--python-documents",
        action="store_true",
        help="build engine documents on the Python path only, as a package installed without a C "
        "compiler does",
    )
    parser.add_argument("--no-delta", action="store_true", help="skip applying the 1 %% delta")
    parser.add_argument(
        "--delta-only",
        action="store_true",
        help="only apply the 1 %% delta (and the searches around it)",
    )
    parser.add_argument(
        "--delta-foreground",
        action="store_true",
        help="apply the delta at full speed (--foreground) instead of in the background, as by "
        "default",
    )
    parser.add_argument(
        "--delta-over-http",
        action="store_true",
        help="search over HTTP through gunicorn during the delta instead of in-process",
    )
    parser.add_argument(
        "--delta-pace", type=float, default=None, help="pass --pace to the delta's `person load`"
    )
    parser.add_argument(
        "--delta-searchers",
        type=int,
        default=1,
        help="threads searching at once before and during the delta (default 1; 2 keeps both cores "
        "busy)",
    )
    args = parser.parse_args()
    # the app and the servers it starts need one
    os.environ.setdefault("HIREKIT_SECRET_KEY", secrets.token_urlsafe(48))
    count = args.count or (50_000 if args.quick else 1_000_000)
    repeats = args.repeats or (10 if args.quick else 30)

    if args.python_documents:
        from plugins.person.backends.embedded import lines

        lines.use_python_path()
    if args.loader_against_engine:
        loader_against_engine(count, args.seed, args.processes)
        return
    index = ensure_index(
        count, args.seed, args.reload or args.load_only, args.processes, args.from_file
    )
    if args.load_only:
        return

    from app import create_app
    from app.cli import upgrade_database
    from app.data.db import database
    from app.data.tenancy import create_tenant

    workdir = Path(tempfile.mkdtemp(prefix="hirekit-bench-"))
    database_url = f"sqlite:///{workdir / 'bench.sqlite3'}"
    app = create_app(
        {
            "DATABASE_URL": database_url,
            "SEARCH_INDEX": str(index),
            "RATE_LIMIT_ENABLED": False,
            "LOG_LEVEL": "WARNING",
        }
    )
    with app.app_context():
        upgrade_database()
        with database.connection_context():
            _, key = create_tenant("bench")

    env = {
        **os.environ,
        "HIREKIT_DATABASE_URL": database_url,
        "HIREKIT_SEARCH_INDEX": str(index),
        "HIREKIT_RATE_LIMIT_ENABLED": "false",
        "HIREKIT_TENANT_MAX_IN_FLIGHT": "-1",
        "HIREKIT_LOG_LEVEL": "WARNING",
        "HIREKIT_REDIS_URL": "",
        "HIREKIT_ACCESS_LOG": "",
    }
    if not args.delta_only:
        from plugins.person import services

        port = free_port()
        # gunicorn as deployed (the gthread worker with keep-alive, GC freeze), 2 workers; the
        # second may still be booting when the first answers, so it gets 3 s before anything is
        # timed
        server = start_gunicorn("wsgi:app", port, env, settle_seconds=3)
        print(
            f"\n{count:,} profiles, {repeats} runs per query, each query in-process then over "
            f"HTTP; load average {load_average()}"
        )
        try:
            client = KeepAliveClient(f"http://127.0.0.1:{port}", {"X-API-Key": key})
            one_thread_app = create_app(
                {
                    "DATABASE_URL": database_url,
                    "SEARCH_INDEX": str(index),
                    "RATE_LIMIT_ENABLED": False,
                    "LOG_LEVEL": "WARNING",
                    "PERSON_SEARCH_THREADS": 1,
                }
            )
            engine, one_thread, http = time_mix(app, one_thread_app, client, repeats)
            concurrent = {
                n: time_concurrent_mix(
                    f"http://127.0.0.1:{port}", {"X-API-Key": key}, n, max(2, repeats // 6)
                )
                for n in args.clients
            }
            sql_rows = time_sql_twins(app, repeats)
            floor = time_floor(client, repeats * 5)
            body = bulk_enrich_body(args.seed)
            bulk_engine, bulk_http = [], []
            with app.app_context():
                answers = []
                for bulk, timings in (
                    (services.people_bulk_enrich, bulk_engine),
                    (lambda b: client.call("POST", "/v2/person/enrich/info/bulk", b), bulk_http),
                ):
                    timings += time_calls(
                        lambda: answers.append(bulk(body)), 1 + repeats // 3, warmup=2
                    )
            statuses = [item["status"] for item in answers[-1]["data"]]
            disk_and_memory(index, count, server)
            time_deep_scroll(app, repeats)
        finally:
            stop(server)

        print(
            f"\n{'query':32} {'engine, one thread p50':>22} {'engine (in-process, as served)':44} "
            "split/one "
            f"{'HTTP (gunicorn -w 2)':44} HTTP/engine"
        )
        all_engine, all_one, all_http, ratios = [], [], [], []
        for name in engine:
            all_engine += engine[name]
            all_one += one_thread[name]
            all_http += http[name]
            ratio = statistics.median(http[name]) / statistics.median(engine[name])
            ratios.append(ratio)
            split = statistics.median(engine[name]) / statistics.median(one_thread[name])
            print(
                f"{name:32} {statistics.median(one_thread[name]):19.2f} ms "
                f"{summary(engine[name]):44} {split:8.2f}x "
                f"{summary(http[name]):44} {ratio:4.2f}x"
            )
        print(
            f"{'ALL QUERIES':32} {percentile(all_one, 50):19.2f} ms {summary(all_engine):44} "
            f"{statistics.median(all_engine) / statistics.median(all_one):8.2f}x "
            f"{summary(all_http):44} "
            f"{statistics.median(all_http) / statistics.median(all_engine):4.2f}x"
        )
        print(f"{'  one thread, pooled':32} {'':22} {summary(all_one):44}")
        print(f"{'HTTP floor (GET /v2/person/schema)':32} {'':44} {summary(floor):44}")
        weighted = sum(statistics.median(http[n]) for n in engine) / sum(
            statistics.median(engine[n]) for n in engine
        )
        print(
            "HTTP vs engine: pooled p50s "
            f"{statistics.median(all_http) / statistics.median(all_engine):.2f}x (the pooled p50 "
            "falls "
            "between clusters of queries, so it swings); per query p50s: median "
            f"{statistics.median(ratios):.2f}x, worst "
            f"{max(ratios):.2f}x; time-weighted (sum of per-query p50s) {weighted:.2f}x"
        )
        for n, (timings, rate) in concurrent.items():
            print(
                f"{f'HTTP, {n} clients at once':32} {'':22} {summary(timings):44} {rate:,.1f} "
                "searches/s"
            )
        print(
            f"\n{'SQL twin of':32} {'DSL':44} {'SQL':44} SQL - DSL p50; translation (uncached) p50"
        )
        for name, dsl_times, sql_times, translate_times in sql_rows:
            difference = statistics.median(sql_times) - statistics.median(dsl_times)
            print(
                f"{name:32} {summary(dsl_times):44} {summary(sql_times):44} {difference:+.3f} ms; "
                f"{statistics.median(translate_times):.3f} ms"
            )
        print(
            f"\nbulk enrich of {len(body['requests'])} local matches: engine {summary(bulk_engine)}"
            f"; HTTP {summary(bulk_http)}; "
            f"{statuses.count(200)} of {len(statuses)} matched"
        )
        print(f"load average {load_average()}")
        print(
            "targets: engine p50 <= 10 ms and p95 <= 50 ms at 1 M (<= 20 / 100 ms at 10 M); HTTP "
            "<= 1.3x engine; load >= 0.9x "
            "the engine-alone ceiling; bulk enrich of 100 <= 150 ms; a SQL search within 1 ms of "
            "its DSL twin"
        )
    if not args.no_delta:
        time_delta(
            index,
            count,
            args.seed,
            workdir,
            env,
            args.delta_foreground,
            args.delta_searchers,
            key if args.delta_over_http else None,
            args.delta_pace,
        )
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
