"""What the OpenAPI fuzzer found, pinned: each input once answered 500 or broke the document's
promise."""

import base64
import io

import pytest

from tests.factories import candidate_body, create_job, job_body, pdf_bytes


def test_a_page_past_the_bound_is_422_not_an_integer_overflow(client, tenant_a):
    for path in (
        "/v1/jobs?size=100&page=338351049314859231477760",
        "/v1/candidates?size=5&page=1000000001",
        "/v1/calls?size=1&page=4064465884154112895810011136",
        "/jobs?page=12098513794281626402816",
    ):
        response = client.get(path, headers=tenant_a.headers)
        assert response.status_code == 422, (path, response.json)
        assert "page" in response.json["error"]["fields"]
    assert (
        client.get("/v1/jobs?size=100&page=1000000000", headers=tenant_a.headers).json["data"] == []
    )


def test_a_board_number_beyond_the_column_is_404(client, tenant_a):
    create_job(client, tenant_a)
    for path in ("/jobs/5107750345870134273515317377368064", "/jobs/2147483648"):
        assert client.get(path, headers=tenant_a.headers).status_code == 404
    applied = client.post(
        "/jobs/99999999999999999999/apply",
        headers=tenant_a.headers,
        data={
            "name": "Jane Doe",
            "email": "jane@example.com",
            "resume": (io.BytesIO(pdf_bytes()), "cv.pdf"),
        },
    )
    assert applied.status_code == 404


def test_a_phone_number_that_is_not_a_string_is_422(client, tenant_a):
    response = client.post(
        "/v1/candidates", json=candidate_body(phone_no=False), headers=tenant_a.headers
    )
    assert response.status_code == 422 and "phone_no" in response.json["error"]["fields"]


def test_attached_questions_missing_a_source_id_are_422(client, tenant_a):
    candidate = client.post("/v1/candidates", json=candidate_body(), headers=tenant_a.headers).json
    job = create_job(client, tenant_a)
    body = {
        "candidate_source_id": candidate["source_id"],
        "job_source_id": job["source_id"],
        "source_application_status": "applied",
        "application_stage": "ACTIVE",
        "questions": [
            {"question_text": "Why nursing?", "source_id": "q1"},
            {"question_text": "Nights?"},
        ],
    }
    response = client.post("/v1/applications/with-questions", json=body, headers=tenant_a.headers)
    assert response.status_code == 422, response.json
    assert "questions.1.source_id" in response.json["error"]["fields"]


def test_nul_characters_are_422_on_every_backend(client, tenant_a):
    created = client.post("/v1/jobs", json=job_body(title="Nurse\u0000"), headers=tenant_a.headers)
    assert created.status_code == 422 and created.json["error"]["fields"] == {
        "title": ["Must not contain NUL (\\u0000) characters."]
    }
    listed = client.get("/v1/calls?page=1&size=5&job_source_id=a%00b", headers=tenant_a.headers)
    assert listed.status_code == 422 and "job_source_id" in listed.json["error"]["fields"]
    nested = client.post(
        "/v1/candidates",
        json=candidate_body(
            base64file=base64.b64encode(pdf_bytes()).decode(), file_name="c\u0000v.pdf"
        ),
        headers=tenant_a.headers,
    )
    assert nested.status_code == 422 and "file_name" in nested.json["error"]["fields"]
    assert client.get("/v1/jobs?page=1&size=5", headers=tenant_a.headers).json["total"] == 0


def test_max_length_bounds_the_text_as_sent(client, tenant_a):
    too_long = client.post(
        "/v1/jobs", json=job_body(title="    " + "n" * 500), headers=tenant_a.headers
    )
    assert too_long.status_code == 422 and "title" in too_long.json["error"]["fields"]
    trimmed = client.post(
        "/v1/jobs", json=job_body(title="  " + "n" * 498), headers=tenant_a.headers
    )
    assert trimmed.status_code == 201 and trimmed.json["title"] == "n" * 498


def test_enrich_profile_must_be_url_strings(client, tenant_a):
    response = client.post(
        "/v2/sandbox/person/enrich/info",
        headers=tenant_a.person_headers,
        json={"full_name": "Jane Doe", "company_name": "Acme", "profile": [[-342, "x"]]},
    )
    assert response.status_code == 422 and "profile" in response.json["error"]["fields"]


def test_mcp_documents_batches_as_arrays(client):
    operation = client.get("/openapi.json").json["paths"]["/mcp"]["post"]
    answer = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert [variant.get("type") for variant in answer["oneOf"]] == [None, "array"]


def test_nul_characters_in_a_form_field_are_422(client, tenant_a):
    from tests.test_board import apply_form

    job = create_job(client, tenant_a)
    response = client.post(
        f"/jobs/{job['number']}/apply", data=apply_form(name="Ja\u0000ne"), headers=tenant_a.headers
    )
    assert response.status_code == 422 and "name" in response.json["error"]["fields"]


@pytest.mark.parametrize("value", [0, 1, "yes", "on", None])
def test_booleans_in_json_bodies_are_true_or_false_only(client, tenant_a, value):
    job = client.post("/v1/jobs", json=job_body(), headers=tenant_a.headers).json
    toggled = client.patch(
        f"/v1/jobs/{job['id']}/scheduling", json={"scheduling": value}, headers=tenant_a.headers
    )
    assert toggled.status_code == 422 and "scheduling" in toggled.json["error"]["fields"]
    bulk = client.post(
        "/v2/person/enrich/info/bulk",
        json={"include_if_matched": value, "requests": [{}]},
        headers=tenant_a.person_headers,
    )
    assert bulk.status_code == 422 and "include_if_matched" in bulk.json["error"]["fields"]
