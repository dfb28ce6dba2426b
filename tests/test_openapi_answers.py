"""Real answers of every family validate against /openapi.json with a strict OpenAPI 3.0.3 validator
(openapi-core): what a generated client or a contract test on the caller's side would check. Records
are seeded through the API (a candidate with a resume, one without, a call, a webhook with a
delivery) and every route of the app is called with the requests the isolation matrix knows, as the
records' own tenant; the person routes on the 8-profile dataset."""

from __future__ import annotations

import pytest
from openapi_core import OpenAPI
from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest, WerkzeugOpenAPIResponse

from tests.factories import create_candidate
from tests.person.conftest import embedded_index, person_app, person_client, sample_file  # noqa: F401 - the fixtures
from tests.tenant_records import seed_records
from tests.test_tenant_isolation import METHODS, send_matrix_request

# MCP is JSON-RPC, described by tools/list
NOT_IN_THE_DOCUMENT = ("/openapi.json", "/docs", "/static/", "/mcp")
PERSON_REQUESTS = [
    ("POST", "/v1/person/search", {"json": {"query": {"match_all": {}}, "size": 2}}),
    ("GET", "/v1/person/search", {"query_string": {"query": '{"match_all": {}}', "size": 1}}),
    ("POST", "/v2/person/search", {"json": {"query": {"match_all": {}}, "size": 2}}),
    (
        "POST",
        "/v2/person/search/page",
        {"json": {"query": {"match_all": {}}, "size": 3, "page": 2}},
    ),
    ("POST", "/v1/person/search-enrich", {"json": {"query": {"match_all": {}}, "size": 2}}),
    ("POST", "/v2/person/search-enrich", {"json": {"query": {"match_all": {}}, "size": 2}}),
    ("GET", "/v2/person/schema", {}),
    # the error body, 400
    ("POST", "/v1/person/search", {"json": {"query": {"no_such_clause": {}}}}),
]


class AnsweredRequest(WerkzeugOpenAPIRequest):
    """The request an answer was given to, as openapi-core reads it to find the operation; its body
    was read by the app already and only the answer is validated here."""

    @property
    def body(self) -> bytes | None:
        return None


def strict_document(client) -> OpenAPI:
    return OpenAPI.from_dict(client.get("/openapi.json").json)


def assert_answer_matches_the_document(openapi: OpenAPI, response, label: str) -> None:
    result = openapi.unmarshal_response(
        AnsweredRequest(response.request), WerkzeugOpenAPIResponse(response)
    )
    problems = [f"{error}: {getattr(error, '__cause__', None) or ''}" for error in result.errors]
    for error in result.errors:
        problems += [str(cause) for cause in getattr(error.__cause__, "schema_errors", ())]
    assert not result.errors, (
        f"{label} -> {response.status_code}: {problems}\n{response.get_data(as_text=True)[:600]}"
    )


def test_every_route_answers_what_the_document_says(app, client, tenant_a):
    openapi = strict_document(client)
    without_resume = create_candidate(client, tenant_a)
    a = seed_records(client, tenant_a)
    a.update(
        tenant_id=tenant_a.id,
        job_source_id=f"{tenant_a.id}-job",
        candidate_source_id=f"{tenant_a.id}-candidate",
        question_source_id=f"{tenant_a.id}-question",
    )
    nulls = client.get(f"/v1/candidates/{without_resume['id']}", headers=tenant_a.headers)
    assert nulls.json["resume"] is None
    assert_answer_matches_the_document(openapi, nulls, "a candidate without a resume")
    checked: dict[str, int] = {}
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith(NOT_IN_THE_DOCUMENT) or "/person/" in rule.rule:
            continue
        for method in sorted(set(rule.methods) & set(METHODS)):
            response = send_matrix_request(app, client, rule, method, a, tenant_a)
            assert response.status_code != 500, (method, rule.rule, response.get_data(as_text=True))
            assert_answer_matches_the_document(openapi, response, f"{method} {rule.rule}")
            family = (
                rule.rule.split("/")[2] if rule.rule.startswith("/v1/") else rule.rule.split("/")[1]
            )
            checked[family] = checked.get(family, 0) + 1
    assert {
        "jobs",
        "candidates",
        "applications",
        "calls",
        "tenant-webhook",
        "tenant",
        "events",
        "healthz",
        "readyz",
    } <= set(checked)


def test_person_answers_match_the_document(person_client):  # noqa: F811
    client, headers = person_client("people8")
    openapi = strict_document(client)
    for method, path, sent in PERSON_REQUESTS:
        response = client.open(path, method=method, headers=headers, **sent)
        assert response.status_code in (200, 400), (path, response.get_data(as_text=True)[:300])
        assert_answer_matches_the_document(openapi, response, f"{method} {path}")
    person = client.post(
        "/v1/person/search", json={"query": {"match_all": {}}, "size": 1}, headers=headers
    ).json["data"][0]
    for path, seed in (
        (
            "/v1/person/enrich",
            {"email": person["emails"][0]["address"] if person.get("emails") else None},
        ),
        (
            "/v2/person/enrich",
            {"full_name": person.get("full_name"), "company_name": person.get("job_company_name")},
        ),
    ):
        response = client.post(path, json={k: v for k, v in seed.items() if v}, headers=headers)
        assert response.status_code in (200, 400, 404), (
            path,
            response.get_data(as_text=True)[:300],
        )
        assert_answer_matches_the_document(openapi, response, f"POST {path}")


@pytest.mark.parametrize(
    "path", ["/v1/jobs/00000000-0000-4000-8000-000000000000", "/v1/jobs?page=0&size=1"]
)
def test_error_answers_match_the_document(client, tenant_a, path):
    response = client.get(path, headers=tenant_a.headers)
    assert response.status_code in (404, 422)
    assert_answer_matches_the_document(strict_document(client), response, path)
