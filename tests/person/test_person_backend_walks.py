"""The backend conformance suite beyond single queries: paging and scroll walks, walks across a
delta and a replacing load, deltas, enrich and search-enrich, and search deadlines, answered alike
by every backend (the embedded index, and a real OpenSearch node or an Elasticsearch cluster)
through the person API."""

from __future__ import annotations

import orjson
import pytest

from plugins.person.sample import generate
from tests.person.conftest import SEARCH_BACKENDS
from tests.person.paging import walk_pages, walk_scroll

MATCH_ALL = {"match_all": {}}
PEOPLE, SEED = 600, 51
RENAMED = "delta co"


@pytest.fixture(scope="module")
def people():
    return list(generate(PEOPLE, SEED))


def write_jsonl(path, records) -> str:
    path.write_bytes(b"".join(orjson.dumps(record) + b"\n" for record in records))
    return str(path)


@pytest.fixture(params=SEARCH_BACKENDS)
def walked(request, backend_client, people, tmp_path):
    """(client, headers, runner, kind) over PEOPLE generated profiles on the parametrized
    backend."""
    client, headers, runner = backend_client(
        request.param, write_jsonl(tmp_path / "people.jsonl", people)
    )
    return client, headers, runner, request.param


def load(runner, path, *args):
    result = runner.invoke(args=["person", "load", *([path] if path else []), *args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"sort": [{"birth_year": "desc"}]},
        {
            "sort": [
                {"job_title_role": "asc"},
                {"inferred_years_experience": "desc"},
                {"last_name": "asc"},
            ]
        },
        {"query": {"match": {"job_title": "senior software engineer manager"}}},
        {
            "query": {"bool": {"filter": [{"range": {"birth_year": {"gte": 1975}}}]}},
            "sort": [{"job_start_date": "asc"}],
        },
    ],
    ids=["index order", "number with missing", "several keys", "relevance", "range, date sort"],
)
def test_scroll_and_pages_walk_every_hit_once_in_the_same_order(walked, extra):
    client, headers, _, _ = walked
    body = {"query": MATCH_ALL, "size": 70, **extra}
    scrolled, pages, last = walk_scroll(client, headers, body)
    paged, page_answer = walk_pages(client, headers, body)
    assert len(scrolled) == len(set(scrolled)) == page_answer["total"]
    assert scrolled == paged and pages == page_answer["total_pages"]
    if "query" not in extra:
        assert page_answer["total"] == PEOPLE


def test_a_delta_publishes_whole_and_a_walk_begun_before_it_never_mixes_two_versions(
    walked, people, tmp_path
):
    """A cluster walk goes on in its point in time (the version it began on, to its end); the
    embedded index refuses its next page with a 400 saying to restart. Either way no walk skips or
    repeats a profile, or mixes versions."""
    client, headers, runner, kind = walked
    body = {"query": MATCH_ALL, "size": 100, "sort": [{"birth_year": "asc"}]}
    first = client.post("/v2/person/search", json=body, headers=headers).json
    delta = write_jsonl(
        tmp_path / "delta.jsonl",
        [{**person, "job_company_name": RENAMED} for person in people[:40]]
        + list(generate(25, SEED + 1)),
    )
    ids = tmp_path / "removed.txt"
    ids.write_text("".join(person["id"] + "\n" for person in people[500:510]))
    output = load(runner, delta, "--upsert", "--delete-ids", str(ids), "--dataset-version", "v2")
    assert f"published: {PEOPLE + 25 - 10} profiles" in output

    renamed = client.post(
        "/v2/person/search",
        json={"query": {"term": {"job_company_name": RENAMED}}, "size": 1},
        headers=headers,
    ).json
    assert renamed["total"] == 40  # every upsert of the delta is searchable, none twice
    assert (
        client.post("/v2/person/search", json={"query": MATCH_ALL}, headers=headers).json["total"]
        == PEOPLE + 15
    )

    walked_ids, token = [hit["id"] for hit in first["data"]], first["scroll_token"]
    while token:
        answer = client.post(
            "/v2/person/search", json={**body, "scroll_token": token}, headers=headers
        )
        if kind == "embedded":
            assert (
                answer.status_code == 400
                and "start the scroll again" in answer.json["error"]["message"]
            )
            break
        assert answer.status_code == 200, answer.json
        assert answer.json["total"] == PEOPLE
        walked_ids += [hit["id"] for hit in answer.json["data"]]
        assert all(hit["job_company_name"] != RENAMED for hit in answer.json["data"])
        token = answer.json.get("scroll_token")
    else:
        assert sorted(walked_ids) == sorted(
            person["id"] for person in people
        )  # the old version, whole, once each


def test_a_malformed_delta_publishes_nothing(walked, people, tmp_path):
    client, headers, runner, _ = walked
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        orjson.dumps({**people[0], "job_company_name": RENAMED}).decode() + "\n{broken\n"
    )
    result = runner.invoke(args=["person", "load", str(bad), "--upsert"])
    assert "line 2" in result.output
    renamed = client.post(
        "/v2/person/search",
        json={"query": {"term": {"job_company_name": RENAMED}}},
        headers=headers,
    )
    assert renamed.json["total"] == 0


def test_a_replacing_load_while_walking_refuses_the_old_walk_and_serves_the_new_data(
    walked, tmp_path
):
    client, headers, runner, _ = walked
    body = {"query": MATCH_ALL, "size": 100}
    first = client.post("/v1/person/search", json=body, headers=headers).json
    newer = list(generate(120, SEED + 2))
    load(runner, write_jsonl(tmp_path / "newer.jsonl", newer), "--replace", "--yes")
    refused = client.post(
        "/v1/person/search", json={**body, "scroll_token": first["scroll_token"]}, headers=headers
    )
    assert refused.status_code == 400 and "scroll_token" in refused.json["error"]["fields"]
    ids, _, last = walk_scroll(client, headers, body)
    assert sorted(ids) == sorted(person["id"] for person in newer) and last["total"] == 120


def test_enrich_and_search_enrich_through_the_backend(walked, people):
    client, headers, _, _ = walked
    someone = next(person for person in people if person["work_email"])
    enriched = client.post(
        "/v1/person/enrich", json={"email": someone["work_email"]}, headers=headers
    )
    assert enriched.status_code == 200 and enriched.json["data"]["id"] == someone["id"]
    body = {"query": {"term": {"job_company_name": someone["job_company_name"]}}, "size": 5}
    searched = client.post("/v2/person/search", json=body, headers=headers).json
    overlaid = client.post("/v2/person/search-enrich", json=body, headers=headers).json
    assert overlaid["total"] == searched["total"] >= 1
    assert [hit["id"] for hit in overlaid["data"]] == [hit["id"] for hit in searched["data"]]
    retrieved = client.get(f"/v1/person/retrieve/{someone['id']}", headers=headers)
    assert retrieved.status_code == 200 and retrieved.json["data"]["id"] == someone["id"]


def test_a_search_past_its_deadline_is_503_with_retry_after(walked):
    client, headers, _, _ = walked
    client.application.config["PERSON_SEARCH_TIMEOUT"] = 1e-6
    response = client.post(
        "/v2/person/search",
        json={
            "query": {"match": {"job_title": "engineer"}},
            "size": 100,
            "sort": [{"job_title_role": "asc"}, {"birth_year": "desc"}],
        },
        headers=headers,
    )
    assert response.status_code == 503 and int(response.headers["Retry-After"]) >= 1
    assert "PERSON_SEARCH_TIMEOUT" in response.json["error"]["message"]
