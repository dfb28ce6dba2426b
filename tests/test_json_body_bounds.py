"""JSON bodies no route can turn into a 500 (app.http.request_json): nesting past MAX_JSON_DEPTH is
400 naming the bound, a number too large for a float and text with a lone UTF-16 surrogate are 422
naming the field, and nothing is stored. Each route family reads its body a different way (webargs
for jobs and person queries, request.get_json for the bodies that may carry a resume), and each is
covered, on SQLite and PostgreSQL."""

import io
import json

import pytest

from app.http.request_json import MAX_JSON_DEPTH
from tests.factories import (
    application_body,
    candidate_body,
    create_candidate,
    create_job,
    job_body,
    pdf_bytes,
)

NESTED_1000_OBJECTS = '{"a":' * 1000 + "1" + "}" * 1000
NESTED_1000_ARRAYS = "[" * 1000 + "]" * 1000
DIGITS_5000 = "9" * 5000
LONE_SURROGATE = "\\ud800"  # as a JSON escape: the text a client sends


def post_text(client, path, text, headers):
    return client.post(path, data=text, headers=headers, content_type="application/json")


def no_jobs_stored(client, tenant) -> bool:
    return client.get("/v1/jobs?page=1&size=5", headers=tenant.headers).json["total"] == 0


def nested_title(levels: int) -> str:
    """A job body whose title is arrays nested so that the whole body nests `levels` levels."""
    body = job_body()
    del body["title"]
    return json.dumps(body)[:-1] + ', "title": ' + "[" * (levels - 1) + "]" * (levels - 1) + "}"


@pytest.mark.parametrize(
    "text", [NESTED_1000_OBJECTS, NESTED_1000_ARRAYS], ids=["objects", "arrays"]
)
@pytest.mark.parametrize(
    "path, auth",
    [
        ("/v1/jobs", "headers"),
        ("/v1/candidates", "headers"),
        ("/v1/person/search", "person_headers"),
        ("/v1/person/bulk", "person_headers"),
    ],
)
def test_a_body_nested_1000_deep_is_400_naming_the_bound(client, tenant_a, path, auth, text):
    response = post_text(client, path, text, getattr(tenant_a, auth))
    assert response.status_code == 400, response.json
    assert response.json["error"]["type"] == "invalid_request_error"
    assert f"more than {MAX_JSON_DEPTH} levels deep" in response.json["error"]["message"]


def test_nesting_is_read_up_to_the_bound_and_refused_one_level_past_it(client, tenant_a):
    at_bound = post_text(client, "/v1/jobs", nested_title(MAX_JSON_DEPTH), tenant_a.headers)
    # read: not a string
    assert at_bound.status_code == 422 and list(at_bound.json["error"]["fields"]) == ["title"]
    past = post_text(client, "/v1/jobs", nested_title(MAX_JSON_DEPTH + 1), tenant_a.headers)
    assert past.status_code == 400 and str(MAX_JSON_DEPTH) in past.json["error"]["message"]
    assert no_jobs_stored(client, tenant_a)


def test_a_nul_escape_in_a_deep_body_is_refused_by_depth_not_a_recursion(client, tenant_a):
    """app.http.nul_guard decodes a body holding \\u0000 before the route does: the bound applies
    there too."""
    text = '{"title": ' + "[" * 1000 + '"\\u0000"' + "]" * 1000 + "}"
    response = post_text(client, "/v1/jobs", text, tenant_a.headers)
    assert response.status_code == 400 and str(MAX_JSON_DEPTH) in response.json["error"]["message"]


@pytest.mark.parametrize("digits", [DIGITS_5000, "1" + "0" * 400])
def test_a_number_too_large_for_a_float_is_422_naming_its_field(client, tenant_a, digits):
    body = json.dumps(job_body())[:-1] + f', "min_pay_rate": {digits}}}'
    response = post_text(client, "/v1/jobs", body, tenant_a.headers)
    assert response.status_code == 422, response.json
    assert list(response.json["error"]["fields"]) == ["min_pay_rate"]
    assert "1.8e308" in response.json["error"]["fields"]["min_pay_rate"][0]
    assert no_jobs_stored(client, tenant_a)


def test_a_huge_integer_is_named_wherever_the_body_holds_it(client, tenant_a):
    listed = post_text(
        client,
        "/v1/person/bulk",
        '{"requests": [{"params": {"lid": ' + DIGITS_5000 + "}}]}",
        tenant_a.person_headers,
    )
    assert listed.status_code == 422 and list(listed.json["error"]["fields"]) == [
        "requests.0.params.lid"
    ]
    candidate = json.dumps(candidate_body())[:-1] + f', "years": {DIGITS_5000}}}'
    # read by request.get_json
    resume_body = post_text(client, "/v1/candidates", candidate, tenant_a.headers)
    assert resume_body.status_code == 422 and list(resume_body.json["error"]["fields"]) == ["years"]


def test_an_integer_past_64_bits_meets_the_fields_range_not_a_500(client, tenant_a):
    body = '{"query": {"match": {"job_title": "nurse"}}, "size": 18446744073709551617}'
    response = post_text(client, "/v1/person/search", body, tenant_a.person_headers)
    assert response.status_code == 422 and list(response.json["error"]["fields"]) == ["size"]


def test_a_lone_surrogate_in_a_text_field_is_422_naming_it_and_nothing_is_stored(client, tenant_a):
    # json.dumps writes the lone surrogate as \ud800
    body = json.dumps(job_body(title="Nurse \ud800"))
    assert LONE_SURROGATE in body
    response = post_text(client, "/v1/jobs", body, tenant_a.headers)
    assert response.status_code == 422, response.json
    assert list(response.json["error"]["fields"]) == ["title"]
    assert "surrogate" in response.json["error"]["message"]
    assert no_jobs_stored(client, tenant_a)


def test_a_lone_surrogate_is_named_in_every_body_reader_and_position(client, tenant_a):
    candidate = json.dumps(candidate_body(first_name="Jane \udfff"))
    # request.get_json
    resume_body = post_text(client, "/v1/candidates", candidate, tenant_a.headers)
    assert resume_body.status_code == 422 and list(resume_body.json["error"]["fields"]) == [
        "first_name"
    ]
    job = create_job(client, tenant_a)
    upsert = client.put(
        "/v1/applications/by-source-id/app-1",
        headers=tenant_a.headers,
        content_type="application/json",
        data=json.dumps(
            application_body(
                create_candidate(client, tenant_a), job, source_application_status="applied \ud800"
            )
        ),
    )
    assert upsert.status_code == 422 and list(upsert.json["error"]["fields"]) == [
        "source_application_status"
    ]
    query = (
        '{"query": {"bool": {"must": [{"term": {"a": "b"}}, {"match": {"job_title": "eng'
        + LONE_SURROGATE
        + '"}}]}}}'
    )
    search = post_text(client, "/v1/person/search", query, tenant_a.person_headers)
    assert search.status_code == 422 and list(search.json["error"]["fields"]) == [
        "query.bool.must.1.match.job_title"
    ]
    as_a_key = post_text(client, "/v1/jobs", '{"x' + LONE_SURROGATE + '": 1}', tenant_a.headers)
    assert as_a_key.status_code == 422 and list(as_a_key.json["error"]["fields"]) == ["x\\ud800"]


@pytest.mark.parametrize(
    "questions, status, field",
    [
        (NESTED_1000_ARRAYS, 400, None),
        (
            '[{"question_text": "Why' + LONE_SURROGATE + '?", "source_id": "q1"}]',
            422,
            "questions.0.question_text",
        ),
        (
            '[{"question_text": "Why?", "source_id": "q1", "position": ' + DIGITS_5000 + "}]",
            422,
            "questions.0.position",
        ),
    ],
    ids=["nested", "surrogate", "number"],
)
def test_json_text_in_a_multipart_field_meets_the_same_bounds(
    client, tenant_a, questions, status, field
):
    """A multipart body sends its lists as JSON text (app.files.bodies): read by the same reader,
    named by field."""
    candidate, job = create_candidate(client, tenant_a), create_job(client, tenant_a)
    form = {
        "candidate_source_id": candidate["source_id"],
        "job_source_id": job["source_id"],
        "source_application_status": "applied",
        "application_stage": "ACTIVE",
        "questions": questions,
        "file": (io.BytesIO(pdf_bytes()), "cv.pdf"),
    }
    response = client.post(
        "/v1/applications/with-questions",
        data=form,
        headers=tenant_a.headers,
        content_type="multipart/form-data",
    )
    assert response.status_code == status, response.json
    if field is None:
        assert f"more than {MAX_JSON_DEPTH} levels deep" in response.json["error"]["message"]
    else:
        assert list(response.json["error"]["fields"]) == [field]
    assert client.get("/v1/applications?page=1&size=5", headers=tenant_a.headers).json["total"] == 0


def test_raw_surrogate_bytes_are_named_too(client, tenant_a):
    """The UTF-8 form of a surrogate (ED A0 80) is not UTF-8 at all; the standard library would read
    it."""
    body = json.dumps(job_body(title="TITLE")).encode().replace(b"TITLE", b"Nurse \xed\xa0\x80")
    response = post_text(client, "/v1/jobs", body, tenant_a.headers)
    assert response.status_code == 422 and list(response.json["error"]["fields"]) == ["title"]


def test_a_surrogate_pair_is_one_character_and_is_stored(client, tenant_a):
    body = json.dumps(job_body(title="Nurse \U0001f600"))  # written as the pair \ud83d\ude00
    assert "\\ud83d\\ude00" in body
    response = post_text(client, "/v1/jobs", body, tenant_a.headers)
    assert response.status_code == 201, response.json
    assert (
        client.get(f"/v1/jobs/{response.json['id']}", headers=tenant_a.headers).json["title"]
        == "Nurse \U0001f600"
    )


def test_nan_is_not_json_and_an_empty_body_still_names_the_required_fields(client, tenant_a):
    invalid = post_text(client, "/v1/jobs", '{"title": NaN}', tenant_a.headers)
    assert invalid.status_code == 400 and invalid.json["error"]["message"] == "Invalid JSON body."
    empty = post_text(client, "/v1/jobs", "", tenant_a.headers)
    assert empty.status_code == 422 and "title" in empty.json["error"]["fields"]


def test_the_bounds_are_in_the_api_description(client):
    description = client.get("/openapi.json").json["info"]["description"]
    assert f"nest at most {MAX_JSON_DEPTH} levels" in description and "1.8e308" in description
    assert "lone UTF-16 surrogate" in description
