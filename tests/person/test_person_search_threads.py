"""A large embedded index is searched on several threads at once (fanout.py): each thread searches a
run of the index's segments and the hits are merged. Forced on small indexes here, it must answer
every sort, count and scroll as one thread does, keep doing so after a delta, and never leave files
or threads behind."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import orjson
import pytest

from plugins.person.backends.embedded.fanout import group_segments
from plugins.person.loader import load_file
from tests.person.indexes import load_in_appends
from tests.person.paging import walk_pages, walk_scroll

COUNTRIES = ("france", "spain", "italy", "germany")


def _profile(n: int) -> dict:
    record = {
        "id": f"t{n:05d}",
        "job_title": ("senior " if n % 3 == 0 else "") + "software engineer",
        "skills": ["python"] + (["rust"] if n % 4 == 0 else []),
    }
    if n % 5:
        record["location_country"] = COUNTRIES[n % 4]
    if n % 7:
        record["birth_year"] = 1970 + n % 30
    if n % 6:
        record["job_start_date"] = f"20{10 + n % 14:02d}-{1 + n % 12:02d}"
    return record


@pytest.fixture(scope="module")
def segmented_index(tmp_path_factory):
    """600 profiles in 4 appended loads (several segments), then 20 of them loaded again and 15
    removed."""
    root = tmp_path_factory.mktemp("segmented")
    backend = load_in_appends(
        root, [[_profile(n) for n in range(load * 150, load * 150 + 150)] for load in range(4)]
    )
    again = root / "again.jsonl"
    again.write_bytes(
        b"".join(
            orjson.dumps({**_profile(n), "location_country": "spain"}) + b"\n"
            for n in range(3, 600, 30)
        )
    )
    removed = root / "removed.txt"
    removed.write_text("".join(f"t{n:05d}\n" for n in range(10, 600, 40)))
    load_file(
        backend,
        str(again),
        upsert=True,
        delete_ids=[line for line in removed.read_text().split()],
        processes=1,
    )
    assert backend.searcher().num_docs == 585
    return str(root / "index")


@pytest.fixture
def clients(make_app, make_tenant, segmented_index):
    """(one thread, two threads forced on this small index, headers)."""
    single = make_app(SEARCH_INDEX=segmented_index, PERSON_SEARCH_THREADS=1)
    split = make_app(
        SEARCH_INDEX=segmented_index, PERSON_SEARCH_THREADS=2, PERSON_SEARCH_THREADS_MIN_PROFILES=0
    )
    return single.test_client(), split.test_client(), {"X-API-Key": make_tenant("threads").key}


def test_the_forced_backend_really_splits_its_searches(make_app, segmented_index):
    app = make_app(
        SEARCH_INDEX=segmented_index, PERSON_SEARCH_THREADS=2, PERSON_SEARCH_THREADS_MIN_PROFILES=0
    )
    with app.app_context():
        from plugins.person.datasets import sources

        parts = sources().backend().snapshot().parts
    assert len(parts) >= 2
    assert sum(part.searcher.num_docs for part in parts) == 585


UNSCORED = [
    ({"match_all": {}}, None),
    ({"term": {"location_country": "spain"}}, None),
    ({"bool": {"must_not": [{"exists": {"field": "birth_year"}}]}}, None),
    ({"match_all": {}}, [{"birth_year": "desc"}]),
    ({"range": {"job_start_date": {"gte": "2015"}}}, [{"job_start_date": "asc"}]),
    ({"match_all": {}}, [{"location_country": "asc"}]),
    ({"term": {"skills": "python"}}, [{"location_country": "desc"}, {"birth_year": "asc"}]),
]


@pytest.mark.parametrize(
    "query, sort",
    UNSCORED,
    ids=[
        "index order",
        "term",
        "must_not",
        "number desc",
        "date asc",
        "keyword",
        "keyword then number",
    ],
)
def test_split_searches_answer_as_one_thread_does(clients, query, sort):
    single, split, headers = clients
    body = {"query": query, "size": 23, **({"sort": sort} if sort else {})}
    one, _, last_one = walk_scroll(single, headers, body, path="/v2/person/search", max_pages=60)
    many, _, last_many = walk_scroll(split, headers, body, path="/v2/person/search", max_pages=60)
    assert many == one
    assert last_many["total"] == last_one["total"] == len(one)
    assert walk_pages(split, headers, body)[0] == one
    deep = {**body, "from": 40, "size": 30}
    assert [
        h["id"] for h in split.post("/v2/person/search", json=deep, headers=headers).json["data"]
    ] == one[40:70]


@pytest.mark.parametrize(
    "query, sort",
    [
        ({"match": {"job_title": "senior software engineer"}}, None),
        (
            {
                "bool": {
                    "should": [{"term": {"skills": "rust"}}, {"match": {"job_title": "senior"}}]
                }
            },
            None,
        ),
        (
            {"match": {"job_title": "senior software engineer"}},
            [{"location_country": "asc"}, {"_score": "desc"}],
        ),
    ],
    ids=["match", "should", "keyword then score"],
)
def test_split_relevance_walks_every_hit_once_best_first(clients, query, sort):
    """Each part scores with its own term statistics (as an Elasticsearch shard does), so ties may
    order differently; the hits, their count and the better-scoring group first must not change."""
    single, split, headers = clients
    body = {"query": query, "size": 17, **({"sort": sort} if sort else {})}
    one, _, _ = walk_scroll(single, headers, body, path="/v2/person/search", max_pages=60)
    many, _, last = walk_scroll(split, headers, body, path="/v2/person/search", max_pages=60)
    assert sorted(many) == sorted(one) and len(many) == len(set(many)) == last["total"]
    assert walk_pages(split, headers, body)[0] == many
    # the senior engineers outscore the others by far, on one thread or several
    if "match" in query and not sort:
        best = {f"t{n:05d}" for n in range(600) if n % 3 == 0 and n % 40 != 10}
        assert set(one[: len(best)]) == set(many[: len(best)]) == best


def test_split_search_sees_a_delta_and_leaves_no_scratch_files(
    make_app, tmp_path, make_tenant, monkeypatch
):
    # the parts' scratch directories go to a temporary directory of this test's own: other tests
    # running at the same time (other workers of the suite) open split searches too, and theirs are
    # not this one's to count
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    backend = load_in_appends(
        tmp_path, [[_profile(n) for n in range(load * 50, load * 50 + 50)] for load in range(3)]
    )
    directory = str(backend.directory)
    app = make_app(
        SEARCH_INDEX=directory, PERSON_SEARCH_THREADS=2, PERSON_SEARCH_THREADS_MIN_PROFILES=0
    )
    client, headers = app.test_client(), {"X-API-Key": make_tenant("delta-threads").key}
    assert (
        client.post("/v2/person/search", json={"query": {"match_all": {}}}, headers=headers).json[
            "total"
        ]
        == 150
    )
    threads = len(os.listdir("/proc/self/task")) if Path("/proc/self/task").is_dir() else 0
    # each publish opens new parts; the old ones and their scratch directories must go
    for round_ in range(10):
        removed = tmp_path / f"removed-{round_}.txt"
        removed.write_text(f"t{round_ * 10:05d}\n")
        load_file(
            backend,
            str(tmp_path / "load-2.jsonl"),
            upsert=True,
            delete_ids=[f"t{round_ * 10:05d}"],
            processes=1,
        )
        answer = client.post(
            "/v2/person/search", json={"query": {"match_all": {}}, "size": 100}, headers=headers
        ).json
        assert answer["total"] == 150 - (round_ + 1)
        assert f"t{round_ * 10:05d}" not in {hit["id"] for hit in answer["data"]}
    # the engine's threads (a watcher per opened part among them) end within a second or so of their
    # use
    if threads:
        deadline = time.monotonic() + 10
        while len(os.listdir("/proc/self/task")) > threads + 4 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(os.listdir("/proc/self/task")) <= threads + 4
    # a part being opened right now (an index watcher of this process reopening it) has its
    # directory for a moment: what must not be is one left behind
    deadline = time.monotonic() + 10
    while (
        left := [name for name in os.listdir(scratch) if name.startswith("hirekit-search-parts")]
    ) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left


@pytest.mark.parametrize(
    "sizes, parts, runs",
    [
        ([448_929, 448_846, 51_154, 51_071], 2, [(0, 1), (1, 4)]),
        ([448_929, 448_846, 51_154, 51_071], 4, [(0, 1), (1, 2), (2, 3), (3, 4)]),
        (
            [3_590, 3_590, 449, 449, 449, 449, 449, 449, 63, 63],
            4,
            [(0, 1), (1, 2), (2, 5), (5, 10)],
        ),
        ([100, 100, 100, 100], 2, [(0, 2), (2, 4)]),
        ([100, 100, 100, 100], 4, [(0, 1), (1, 2), (2, 3), (3, 4)]),
        ([900, 50, 50], 2, [(0, 1), (1, 3)]),
        ([10, 900], 2, [(0, 1), (1, 2)]),
        ([500], 2, [(0, 1)]),
        ([100, 100, 100], 1, [(0, 3)]),
    ],
)
def test_segments_are_shared_out_in_order_as_evenly_as_they_allow(sizes, parts, runs):
    assert group_segments(sizes, parts) == runs
