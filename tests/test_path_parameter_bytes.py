"""Path parameters are UTF-8 text without NUL (app.http.path_params): `%00` or bytes that are not
UTF-8 (`%FF%FE`) in a path parameter answer 422 naming it, on every route, and nothing is stored, on
SQLite and PostgreSQL, through the test client and through gunicorn (which hands the application the
raw request target differently)."""

import http.client
import json

import pytest

from tests.factories import candidate_body, create_candidate, create_job, job_body
from tests.test_fault_drills import gunicorn_server  # noqa: F401 - the fixture: the app under gunicorn, 2 workers

FAMILIES = ("jobs", "candidates", "applications")
# %ED%A0%80: a surrogate
REFUSED = {"abc%00def": "NUL", "%FF%FE": "UTF-8", "ok%C3": "UTF-8", "%ED%A0%80": "UTF-8"}


def without_source_id(body: dict) -> dict:
    return {key: value for key, value in body.items() if key != "source_id"}


def upsert_bodies(client, tenant) -> dict:
    """A valid upsert body for each family (the application's candidate and job exist)."""
    candidate, job = create_candidate(client, tenant), create_job(client, tenant)
    return {
        "jobs": without_source_id(job_body()),
        "candidates": without_source_id(candidate_body()),
        "applications": {
            "candidate_source_id": candidate["source_id"],
            "job_source_id": job["source_id"],
            "source_application_status": "applied",
            "application_stage": "ACTIVE",
        },
    }


def totals(client, tenant) -> dict:
    return {
        family: client.get(f"/v1/{family}?page=1&size=5", headers=tenant.headers).json["total"]
        for family in FAMILIES
    }


def assert_refused(status: int, body: dict, parameter: str, kind: str) -> None:
    assert status == 422, body
    assert body["error"]["type"] == "validation_error"
    assert list(body["error"]["fields"]) == [parameter]
    assert kind in body["error"]["fields"][parameter][0]


@pytest.mark.parametrize("source_id, kind", REFUSED.items())
def test_an_upsert_source_id_that_is_not_utf8_text_is_refused_and_not_stored(
    client, tenant_a, source_id, kind
):
    bodies = upsert_bodies(client, tenant_a)
    before = totals(client, tenant_a)
    for family in FAMILIES:
        response = client.put(
            f"/v1/{family}/by-source-id/{source_id}", json=bodies[family], headers=tenant_a.headers
        )
        assert_refused(response.status_code, response.json, "source_id", kind)
    assert totals(client, tenant_a) == before


def test_different_bytes_never_name_the_same_record(client, tenant_a):
    """Before, %FF%FE and %FE%FF were both stored as two U+FFFD: the second replaced the first's
    record."""
    body = without_source_id(job_body())
    for raw in ("%FF%FE", "%FE%FF"):
        assert (
            client.put(
                f"/v1/jobs/by-source-id/{raw}", json=body, headers=tenant_a.headers
            ).status_code
            == 422
        )
    replacement = client.put(
        "/v1/jobs/by-source-id/%EF%BF%BD%EF%BF%BD", json=body, headers=tenant_a.headers
    )
    # sent as U+FFFD: valid
    assert replacement.status_code == 201 and replacement.json["source_id"] == "\ufffd\ufffd"


def test_a_percent_encoded_utf8_source_id_is_text(client, tenant_a):
    created = client.put(
        "/v1/jobs/by-source-id/caf%C3%A9-1",
        json=without_source_id(job_body()),
        headers=tenant_a.headers,
    )
    assert created.status_code == 201 and created.json["source_id"] == "café-1"


@pytest.mark.parametrize(
    "path, parameter",
    [
        ("/v1/jobs/abc%00def", "job_id"),
        ("/v1/candidates/%FF/resume", "candidate_id"),
        ("/v1/jobs/%00/questions/%FF", "job_id"),  # the second variable is named too (below)
        ("/v1/person/retrieve/%00", "person_id"),
        ("/no/such%00route", "path"),
    ],
)
def test_every_route_names_the_parameter_holding_the_bytes(client, tenant_a, path, parameter):
    response = client.get(path, headers={**tenant_a.headers, **tenant_a.person_headers})
    assert response.status_code == 422, response.json
    assert parameter in response.json["error"]["fields"]
    if "questions" in path:
        assert list(response.json["error"]["fields"]) == ["job_id", "question_id"]


def test_the_rule_is_in_the_api_description(client):
    assert (
        "Path parameters percent-decode to UTF-8 text without NUL"
        in client.get("/openapi.json").json["info"]["description"]
    )


def test_gunicorn_refuses_them_from_the_raw_request_line(gunicorn_server, client, tenant_a):  # noqa: F811
    """gunicorn hands over the raw target (RAW_URI) and PATH_INFO with the bytes as latin-1
    characters."""
    base, port = gunicorn_server()
    bodies = upsert_bodies(client, tenant_a)
    before = totals(client, tenant_a)

    def put(path: str, body: dict) -> tuple[int, dict]:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            connection.request(
                "PUT",
                path,
                body=json.dumps(body),
                headers={**tenant_a.headers, "Content-Type": "application/json"},
            )
            response = connection.getresponse()
            assert response.getheader("Content-Type") == "application/json"
            return response.status, json.loads(response.read())
        finally:
            connection.close()

    for source_id, kind in REFUSED.items():
        for family in FAMILIES:
            assert_refused(
                *put(f"/v1/{family}/by-source-id/{source_id}", bodies[family]), "source_id", kind
            )
    assert totals(client, tenant_a) == before
    status, created = put("/v1/jobs/by-source-id/caf%C3%A9-2", bodies["jobs"])
    assert status == 201 and created["source_id"] == "café-2"
