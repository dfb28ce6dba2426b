"""A bulk load's indexing budget: each loader writes a segment whenever its budget fills, so the budget decides how
many segments (and later merges) a load makes."""

from __future__ import annotations

import orjson
import pytest
import tantivy

from plugins.person import sample
from plugins.person.backends.embedded import EmbeddedBackend, build
from plugins.person.loader import load_file

GIB = 1 << 30
COUNT = 20_000  # several times the smallest budget tantivy takes (15 MB) for each of two loaders


@pytest.mark.parametrize("available, processes, expected", [
    (22 * GIB, 2, build.THREAD_HEAP_MAX),  # a big machine: tantivy's own cap
    (2 * GIB, 2, GIB // 2),                # half the available memory, shared
    (3 * GIB, 3, GIB // 2),
    (0, 4, build.THREAD_HEAP_MIN),         # unreadable or tiny: the floor
])
def test_each_loader_gets_an_equal_share_of_half_the_available_memory(available, processes, expected):
    assert build.worker_heap(processes, available) == expected


def _segments_after_load(tmp_path, monkeypatch, budget: int | None) -> int:
    path = tmp_path / "people.jsonl"
    path.write_bytes(b"".join(orjson.dumps(person) + b"\n" for person in sample.generate(COUNT, seed=5)))
    if budget is not None:
        monkeypatch.setattr(build, "worker_heap", lambda processes: budget)
    backend = EmbeddedBackend(str(tmp_path / f"index-{budget}"))
    report = load_file(backend, str(path), replace=True, processes=2)
    assert report.loaded == COUNT
    searcher = tantivy.Index.open(str(backend.engine_dir)).searcher()
    assert searcher.num_docs == COUNT
    return searcher.num_segments


def test_a_load_writes_one_segment_per_loader_when_the_budget_holds_its_share(tmp_path, monkeypatch):
    assert _segments_after_load(tmp_path, monkeypatch, None) == 2


def test_a_small_budget_makes_each_loader_write_several_segments(tmp_path, monkeypatch):
    assert _segments_after_load(tmp_path, monkeypatch, 15_000_000) > 2
