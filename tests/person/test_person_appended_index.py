"""Paging an embedded index grown by several loads (many segments, re-loaded ids): every sort,
relevance included, must walk each hit exactly once, and scroll, page-based search and one large
page must agree on the order.

Equal relevance scores are where this broke: the engine fills a window's last places from a tie in
its own segment order, so ranking the window by any other tie-break made a longer window disagree
with a shorter one."""

from __future__ import annotations

import orjson
import pytest

from plugins.person.loader import load_file
from tests.person.indexes import load_in_appends
from tests.person.paging import walk_pages, walk_scroll

MATCH = {"match": {"job_title": "software engineer"}}
MATCH_ALL = {"match_all": {}}
COUNTRIES = ("france", "spain", "italy")


def _profile(n: int) -> dict:
    record = {
        "id": f"p{n:05d}",
        "job_title": "software engineer" if n % 3 else "senior software engineer",
    }
    if n % 4:
        record["location_country"] = COUNTRIES[n % 3]
    if n % 5:
        record["birth_year"] = 1980 + n % 4
    return record


@pytest.fixture(scope="module")
def appended_index(tmp_path_factory):
    """480 profiles loaded in 12 appends of 40, then 11 of them loaded again with other values."""
    root = tmp_path_factory.mktemp("appended")
    backend = load_in_appends(
        root, [[_profile(n) for n in range(load * 40 + 1, load * 40 + 41)] for load in range(12)]
    )
    again = root / "again.jsonl"
    again.write_bytes(
        b"".join(
            orjson.dumps(
                {
                    "id": f"p{n:05d}",
                    "job_title": "software engineer",
                    "location_country": "spain",
                    "birth_year": 1981,
                }
            )
            + b"\n"
            for n in range(5, 400, 37)
        )
    )
    load_file(backend, str(again), processes=1, writer_threads=1)
    assert backend.searcher().num_docs == 480
    return str(root / "index")


@pytest.fixture
def appended_client(make_app, make_tenant, appended_index):
    app = make_app(SEARCH_INDEX=appended_index)
    return app.test_client(), {"X-API-Key": make_tenant("appended").key}


@pytest.mark.parametrize("size", [7, 50])
@pytest.mark.parametrize(
    "query, sort",
    [
        (MATCH, None),
        (MATCH, [{"_score": "desc"}, {"birth_year": "asc"}]),
        (MATCH, [{"location_country": "asc"}, {"_score": "desc"}]),
        (MATCH_ALL, None),
        (MATCH_ALL, [{"location_country": "desc"}]),
        (MATCH_ALL, [{"birth_year": "asc"}]),
        (MATCH_ALL, [{"location_country": "asc"}, {"birth_year": "desc"}]),
    ],
    ids=[
        "relevance",
        "score then number",
        "keyword then score",
        "index order",
        "keyword",
        "number",
        "keyword then number",
    ],
)
def test_every_hit_once_in_one_order_across_segments(appended_client, query, sort, size):
    client, headers = appended_client
    body = {"query": query, "size": size, **({"sort": sort} if sort else {})}
    scrolled, _, _ = walk_scroll(client, headers, body, path="/v2/person/search", max_pages=100)
    assert len(scrolled) == len(set(scrolled)) == 480
    assert walk_pages(client, headers, body)[0] == scrolled
    whole = client.post("/v2/person/search", json={**body, "size": 100}, headers=headers).json[
        "data"
    ]
    assert [hit["id"] for hit in whole] == scrolled[:100]


def test_relevance_keeps_better_scores_first_across_segments(appended_client):
    client, headers = appended_client
    ids, _, _ = walk_scroll(
        client,
        headers,
        {"query": {"match": {"job_title": "senior software engineer"}}, "size": 25},
        path="/v2/person/search",
    )
    senior = {f"p{n:05d}" for n in range(1, 481) if n % 3 == 0 and n not in range(5, 400, 37)}
    assert set(ids[: len(senior)]) == senior
