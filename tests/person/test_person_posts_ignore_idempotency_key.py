"""Person POSTs only read (search, search-enrich, enrich, bulk, identify, v1, v2 and sandbox): an
Idempotency-Key on them is ignored, so no answer is stored for a day and nothing is replayed; writes
keep their keys."""

from __future__ import annotations

import pytest

from app.http import idempotency
from app.data.db import database
from plugins.person.sample import generate

pytestmark = pytest.mark.plugins("person", "jobs")  # a recruitment write beside the person posts

PERSON = next(p for p in generate(400, 21) if p["work_email"])
BY_EMAIL = {"email": PERSON["work_email"]}
US = {"term": {"location_country": "united states"}}
BODIES = {  # a valid body per route, by the path after .../person
    "/search": {"query": US, "size": 3},
    "/search/page": {"query": US, "size": 3, "page": 1},
    "/search-enrich": {"query": US, "size": 3},
    "/enrich": BY_EMAIL,
    "/enrich/info": BY_EMAIL,
    "/identify": BY_EMAIL,
    "/bulk": {"requests": [{"params": BY_EMAIL}]},
    "/enrich/info/bulk": {"requests": [BY_EMAIL]},
}
PERSON_BLUEPRINTS = {"person_v1", "person_v2", "person_sandbox_v1", "person_sandbox_v2"}


@pytest.fixture
def pdl(person_client):
    return person_client("enrich", "sandbox", ENRICH_VENDOR="local")


def person_posts(app) -> list[str]:
    """Every POST route of the person blueprints, as the app routes them."""
    return sorted(
        rule.rule
        for rule in app.url_map.iter_rules()
        if "POST" in rule.methods and rule.endpoint.split(".")[0] in PERSON_BLUEPRINTS
    )


def stored_keys() -> int:
    with database.connection_context():
        return idempotency.IdempotencyKey.select().count()


def test_every_person_post_ignores_the_key_and_stores_nothing(pdl):
    client, headers = pdl
    app = client.application
    paths = person_posts(app)
    assert (
        "/v1/person/search" in paths
        and "/v2/sandbox/person/search/page" in paths
        and len(paths) >= 20
    )
    for number, path in enumerate(paths):
        body = BODIES[path.split("/person", 1)[1]]
        keyed = {**headers, "Idempotency-Key": f"read-{number}"}
        first = client.post(path, json=body, headers=keyed)
        again = client.post(path, json=body, headers=keyed)
        # another request, same key
        other = client.post(path, json={**body, "pretty": True}, headers=keyed)
        assert first.status_code < 500 and again.status_code == first.status_code, (
            path,
            first.json,
        )
        assert "Idempotent-Replayed" not in again.headers, path
        # not 422 "used for another request"
        assert other.status_code == first.status_code, (path, other.json)
        with app.app_context():
            assert stored_keys() == 0, path


def test_a_write_still_keeps_its_key(pdl):
    from tests.factories import job_body

    client, headers = pdl
    keyed = {"Authorization": f"Bearer {headers['X-API-Key']}", "Idempotency-Key": "write-1"}
    body = job_body()
    first = client.post("/v1/jobs", json=body, headers=keyed)
    again = client.post("/v1/jobs", json=body, headers=keyed)
    assert first.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    with client.application.app_context():
        assert stored_keys() == 1


def test_openapi_documents_the_key_on_writes_only(pdl):
    client, _ = pdl
    spec = client.get("/openapi.json").json
    for path in person_posts(client.application):
        parameters = spec["paths"][path]["post"].get("parameters", [])
        assert all(p.get("name") != "Idempotency-Key" for p in parameters), path
    create_job = spec["paths"]["/v1/jobs"]["post"]
    description = next(p for p in create_job["parameters"] if p["name"] == "Idempotency-Key")[
        "description"
    ]
    assert (
        "read-only POSTs (person search, enrich, bulk, identify) ignore the header" in description
    )
