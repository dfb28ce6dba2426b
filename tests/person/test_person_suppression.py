"""The suppression list (`flask person suppress`): a person who opted out is never answered by
search, search-enrich, enrich, bulk, retrieve or identify, on the embedded index, Elasticsearch and
OpenSearch, also after the dataset is reloaded."""

from __future__ import annotations

import orjson
import pytest

from tests.person.conftest import SEARCH_BACKENDS


def profile(person_id: str, name: str, email: str, company: str = "acme") -> dict:
    first, last = name.split()
    return {
        "id": person_id,
        "full_name": name,
        "first_name": first,
        "last_name": last,
        "job_title": "nurse",
        "job_company_name": company,
        "location_country": "united states",
        "work_email": email,
        "emails": [{"address": email, "type": "current_professional"}],
        "skills": ["icu"],
    }


PEOPLE = [
    profile("s1", "opal outly", "opal.outly@example.com"),
    profile("s2", "ida idd", "ida@example.com"),
    profile("s3", "kay kept", "kay@example.com"),
]


def write(path, people) -> str:
    path.write_bytes(b"".join(orjson.dumps(person) + b"\n" for person in people))
    return str(path)


@pytest.fixture(params=SEARCH_BACKENDS)
def loaded(request, person_client, cluster_config, tmp_path):
    """(client, headers, runner, reload(people)) over PEOPLE on the parametrized backend, loaded
    through the CLI."""
    if request.param == "embedded":
        client, headers = person_client(None, SEARCH_INDEX=str(tmp_path / "index"))
    else:
        client, headers = person_client(None, **cluster_config(request.param))
    runner = client.application.test_cli_runner()
    version = iter(range(1, 100))

    def reload(people) -> None:
        path = write(tmp_path / f"people-{next(version)}.jsonl", people)
        result = runner.invoke(args=["person", "load", path, "--replace", "--yes"])
        assert result.exit_code == 0, result.output

    reload(PEOPLE)
    return client, headers, runner, reload


def search_ids(client, headers) -> tuple[list[str], int]:
    answer = client.post(
        "/v1/person/search", json={"query": {"match_all": {}}, "size": 10}, headers=headers
    )
    assert answer.status_code == 200, answer.json
    return sorted(hit["id"] for hit in answer.json["data"]), answer.json["total"]


def answers_for(client, headers, person_id: str, email: str) -> dict:
    """What each person route answers about one person (status codes, and whether the person is in
    it)."""
    page = client.post(
        "/v2/person/search/page",
        json={"query": {"term": {"work_email": email}}, "size": 10},
        headers=headers,
    )
    bulk = client.post(
        "/v1/person/bulk", json={"requests": [{"params": {"email": email}}]}, headers=headers
    )
    identify = client.get("/v1/person/identify", query_string={"email": email}, headers=headers)
    search_enrich = client.post(
        "/v1/person/search-enrich", json={"query": {"term": {"id": person_id}}}, headers=headers
    )
    return {
        "search": page.json["total"],
        "search_enrich": search_enrich.json["total"],
        "enrich": client.post(
            "/v1/person/enrich", json={"email": email}, headers=headers
        ).status_code,
        "bulk": bulk.json[0]["status"],
        "retrieve": client.get(f"/v1/person/retrieve/{person_id}", headers=headers).status_code,
        "identify": identify.status_code,
    }


SEEN = {
    "search": 1,
    "search_enrich": 1,
    "enrich": 200,
    "bulk": 200,
    "retrieve": 200,
    "identify": 200,
}
HIDDEN = {
    "search": 0,
    "search_enrich": 0,
    "enrich": 404,
    "bulk": 404,
    "retrieve": 404,
    "identify": 404,
}


def test_a_suppressed_person_is_never_answered_also_after_a_reload(loaded):
    client, headers, runner, reload = loaded
    assert answers_for(client, headers, "s1", "opal.outly@example.com") == SEEN

    result = runner.invoke(args=["person", "suppress", "--email", "OPAL.OUTLY@example.com"])
    assert result.exit_code == 0 and "suppressed" in result.output
    assert answers_for(client, headers, "s1", "opal.outly@example.com") == HIDDEN
    assert search_ids(client, headers) == (["s2", "s3"], 2)
    first = client.post(
        "/v1/person/search",
        json={"query": {"match_all": {}}, "size": 1, "sort": [{"id": "asc"}]},
        headers=headers,
    ).json
    # excluded in the query: a full first page, not an empty one
    assert [hit["id"] for hit in first["data"]] == ["s2"]

    # reloaded, even under a new id: the opt-out still holds, by the email
    reload([profile("s1-new", "opal outly", "opal.outly@example.com"), *PEOPLE[1:]])
    assert answers_for(client, headers, "s1-new", "opal.outly@example.com") == HIDDEN
    assert search_ids(client, headers) == (["s2", "s3"], 2)


def test_suppress_by_id_list_and_remove(loaded):
    client, headers, runner, reload = loaded
    assert runner.invoke(args=["person", "suppress", "--id", "s2"]).exit_code == 0
    assert "already" in runner.invoke(args=["person", "suppress", "--id", "s2"]).output
    assert answers_for(client, headers, "s2", "ida@example.com") == HIDDEN
    reload(PEOPLE)
    assert search_ids(client, headers) == (["s1", "s3"], 2)
    listed = runner.invoke(args=["person", "suppress", "--list"])
    assert listed.exit_code == 0 and "id\ts2" in listed.output
    assert "removed" in runner.invoke(args=["person", "suppress", "--id", "s2", "--remove"]).output
    assert answers_for(client, headers, "s2", "ida@example.com") == SEEN
    assert (
        runner.invoke(args=["person", "suppress", "--email", "a@b.c", "--id", "x"]).exit_code != 0
    )
    assert runner.invoke(args=["person", "suppress"]).exit_code != 0
