"""Totals read from the index statistics (match_all, a keyword term, exists, one must_not alone)
instead of counted, and first pages in index order found from the first sequences: the answers must
be those a full count and ranking give, on a fresh index and after a delta has left deleted
documents behind (whose term statistics still count them)."""

from __future__ import annotations

import orjson
import pytest

from plugins.person.backends.embedded import EmbeddedBackend, ranking
from plugins.person.loader import load_file

COUNTRIES = ("france", "spain", "italy")


def _profile(n: int) -> dict:
    record = {"id": f"k{n:05d}", "job_title": "engineer"}
    if n % 4:
        record["location_country"] = COUNTRIES[n % 3]
    if n % 9 == 0:
        record["linkedin_url"] = f"linkedin.com/in/k{n}"
    if n % 5:
        record["birth_year"] = 1960 + n % 40
    return record


QUERIES = [
    {"match_all": {}},
    {"term": {"location_country": "spain"}},
    {"exists": {"field": "linkedin_url"}},
    {"bool": {"must_not": [{"exists": {"field": "linkedin_url"}}]}},
    {"bool": {"must_not": [{"term": {"location_country": "france"}}]}},
]


def _matches(record: dict, query: dict) -> bool:
    ((kind, body),) = query.items()
    if kind == "match_all":
        return True
    if kind == "term":
        return record.get("location_country") == body["location_country"]
    if kind == "exists":
        return body["field"] in record
    return not _matches(record, body["must_not"][0])


@pytest.fixture
def people_index(tmp_path, make_app, make_tenant):
    """load(records, **load_file options) into one index, and post(body) to an app serving it."""
    directory = str(tmp_path / "index")
    app = make_app(SEARCH_INDEX=directory)
    client, headers = app.test_client(), {"X-API-Key": make_tenant("known").key}

    def load(records, name, **options):
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
        load_file(EmbeddedBackend(directory), str(path), processes=1, **options)

    def post(body):
        response = client.post("/v2/person/search", json=body, headers=headers)
        assert response.status_code in (200, 404), response.json
        return response.json

    return load, post


def _check(post, records: list[dict]) -> None:
    for query in QUERIES:
        expected = [r["id"] for r in records if _matches(r, query)]
        first = post({"query": query, "size": 7})
        assert first["total"] == len(expected), query
        assert [hit["id"] for hit in first["data"]] == expected[:7], query
        deep = post({"query": query, "from": 40, "size": 30})
        assert [hit["id"] for hit in deep["data"]] == expected[40:70], query
        by_year = post({"query": query, "size": 5, "sort": [{"birth_year": "desc"}]})
        assert by_year["total"] == len(expected), query


@pytest.mark.parametrize(
    "windowed_from", [0, ranking.WINDOWED_FIRST_PAGE_HITS], ids=["windows", "one search"]
)
def test_totals_and_first_pages_on_a_fresh_index_and_after_a_delta(
    people_index, monkeypatch, windowed_from
):
    """First pages in index order come from windows of sequences past WINDOWED_FIRST_PAGE_HITS hits:
    forced here."""
    monkeypatch.setattr(ranking, "WINDOWED_FIRST_PAGE_HITS", windowed_from)
    load, post = people_index
    records = [_profile(n) for n in range(600)]
    load(records, "v1", replace=True)
    _check(post, records)
    changed = [
        {**_profile(n), "location_country": "spain", "linkedin_url": f"linkedin.com/in/new{n}"}
        for n in range(0, 600, 7)
    ]
    removed = [f"k{n:05d}" for n in range(3, 600, 11)]
    load(changed, "delta", upsert=True, delete_ids=removed)
    by_id = {r["id"]: r for r in records}
    by_id.update({r["id"]: r for r in changed})
    for record_id in removed:
        by_id.pop(record_id)
    # upserts go last
    latest = sorted(by_id.values(), key=lambda r: (r["id"] in {c["id"] for c in changed}, r["id"]))
    _check(post, latest)
