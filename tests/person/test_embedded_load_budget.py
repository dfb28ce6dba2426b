"""A bulk load's indexing budget: each loader writes a segment whenever its budget fills and tantivy
merges eight segments of about one size (on one core when the load publishes), so a big load gets a
budget that keeps its segments under eight."""

from __future__ import annotations

import orjson
import pytest
import tantivy

from plugins.person import sample
from plugins.person.backends.embedded import EmbeddedBackend, build
from plugins.person.loader import load_file

GB = 1_000_000_000


@pytest.mark.parametrize(
    "part_bytes, parts, available, expected",
    [
        # small: the default budget writes few segments
        (1 * GB, 2, 22 * GB, build.WORKER_HEAP),
        (3 * GB, 2, 22 * GB, build.WORKER_HEAP),  # three segments each, six in all
        # eight in all at 1 GB: as much as tantivy allows
        (4 * GB, 2, 22 * GB, build.WORKER_HEAP_MAX),
        # 10 M generated profiles: three each at the cap
        (int(12.7 * GB), 2, 22 * GB, build.WORKER_HEAP_MAX),
        # half the available memory, shared, still enough
        (4 * GB, 2, 6 * GB, int(1.5 * GB)),
        # not enough memory to avoid the merges: the default
        (4 * GB, 2, 4 * GB, build.WORKER_HEAP),
        # too big to avoid them at any budget: the default
        (20 * GB, 2, 22 * GB, build.WORKER_HEAP),
        # three loaders may write two segments each
        (3 * GB, 3, 22 * GB, 22 * GB // 2 // 3),
        (4 * GB, 1, 22 * GB, build.WORKER_HEAP),  # one loader may write seven
    ],
)
def test_the_budget_keeps_a_loads_segments_under_eight_when_memory_allows(
    part_bytes, parts, available, expected
):
    assert build.worker_heap(part_bytes, parts, available) == expected


def _load(tmp_path, count: int) -> tantivy.Searcher:
    path = tmp_path / "people.jsonl"
    path.write_bytes(
        b"".join(orjson.dumps(person) + b"\n" for person in sample.generate(count, seed=5))
    )
    backend = EmbeddedBackend(str(tmp_path / "index"))
    report = load_file(backend, str(path), replace=True, processes=2)
    assert report.loaded == count and not report.skipped
    searcher = tantivy.Index.open(str(backend.engine_dir)).searcher()
    assert searcher.num_docs == count
    return searcher


def test_a_load_too_big_for_the_default_budget_writes_one_segment_a_loader_and_merges_none(
    tmp_path, monkeypatch
):
    # scaled down: 15 MB (tantivy's least) stands for 1 GB, so each loader's 24,000 profiles would
    # write about four segments, eight in all, which tantivy would merge when the load publishes
    monkeypatch.setattr(build, "WORKER_HEAP", 15_000_000)
    monkeypatch.setattr(build, "WORKER_HEAP_MAX", 200_000_000)
    assert _load(tmp_path, 48_000).num_segments == 2


def test_the_default_budget_would_have_written_more_segments(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "WORKER_HEAP", 15_000_000)
    monkeypatch.setattr(build, "worker_heap", lambda part_bytes, parts: 15_000_000)
    assert _load(tmp_path, 48_000).num_segments != 2
