"""Which person routes answer contact details: /openapi.json says it in one place, and the routes do
what it says (v2 search answers as v1 search; plain v2 enrich, bulk, retrieve and identify leave
contact details out; enrich/info adds them)."""

from __future__ import annotations

import json

import pytest

from plugins.person.profile_fields import CONTACT_FIELDS
from plugins.person.sample import generate

CONTACT_SENTENCE = "plain v2 enrich, bulk, retrieve and identify leave them out"
ASKED_ABOUT = ("work_email", "phone_numbers", "personal_emails", "emails")


@pytest.fixture(scope="module")
def someone():
    return next(p for p in generate(400, 21) if all(p.get(field) for field in CONTACT_FIELDS))


def test_openapi_says_once_which_person_routes_answer_contact_details(person_client):
    client, _ = person_client()
    document = client.get("/openapi.json").json
    assert json.dumps(document).count(CONTACT_SENTENCE) == 1
    tag = next(t for t in document["tags"] if t["name"] == "person_v2")
    assert CONTACT_SENTENCE in tag["description"]
    assert all(field in tag["description"] for field in CONTACT_FIELDS)
    assert (
        "v2 search, search/page, search-enrich, enrich/info and enrich/info/bulk answer them"
        in tag["description"]
    )
    assert all(
        document["paths"][path]["post"]["tags"] == ["person_v2"]
        for path in (
            "/v2/person/search",
            "/v2/person/enrich",
            "/v2/person/enrich/info",
            "/v2/person/bulk",
        )
    )


def test_the_routes_answer_contact_details_as_documented(person_client, someone):
    client, headers = person_client("enrich")
    by_id = {"query": {"term": {"id": someone["id"]}}}
    answering = {
        "v1 search": client.post("/v1/person/search", json=by_id, headers=headers).json["data"][0],
        "v2 search": client.post("/v2/person/search", json=by_id, headers=headers).json["data"][0],
        "v2 search/page": client.post("/v2/person/search/page", json=by_id, headers=headers).json[
            "data"
        ][0],
        "v2 search-enrich": client.post(
            "/v2/person/search-enrich", json=by_id, headers=headers
        ).json["data"][0],
        "v2 enrich/info": client.post(
            "/v2/person/enrich/info", json={"servicegraph_id": someone["id"]}, headers=headers
        ).json["data"],
        "v2 enrich/info/bulk": client.post(
            "/v2/person/enrich/info/bulk",
            json={"requests": [{"servicegraph_id": someone["id"]}]},
            headers=headers,
        ).json["data"][0]["data"],
        "v1 retrieve": client.get(f"/v1/person/retrieve/{someone['id']}", headers=headers).json[
            "data"
        ],
    }
    leaving_out = {
        "v2 enrich": client.post(
            "/v2/person/enrich", json={"servicegraph_id": someone["id"]}, headers=headers
        ).json["data"],
        "v2 bulk": client.post(
            "/v2/person/bulk",
            json={"requests": [{"params": {"servicegraph_id": someone["id"]}}]},
            headers=headers,
        ).json[0]["data"],
        "v2 retrieve": client.get(f"/v2/person/retrieve/{someone['id']}", headers=headers).json[
            "data"
        ],
        "v2 identify": client.post(
            "/v2/person/identify", json={"email": someone["work_email"]}, headers=headers
        ).json["matches"][0]["data"],
    }
    for route, record in answering.items():
        assert record["id"] == someone["id"] and all(
            record[field] == someone[field] for field in ASKED_ABOUT
        ), route
    for route, record in leaving_out.items():
        assert record["id"] == someone["id"] and not set(CONTACT_FIELDS) & set(record), route
