"""The jobs family: create and update bodies, pagination, uniqueness and tenant scoping."""

import pytest

from tests.factories import create_job, job_body

pytestmark = pytest.mark.plugins("jobs", "scheduling")

REQUIRED_ON_CREATE = [
    "title",
    "industry",
    "state_name",
    "country",
    "recruiter_name",
    "recruiter_email",
    "recruiter_work_phone_no",
    "status",
    "desc",
    "source_id",
]


def test_create_then_read_returns_every_field(client, tenant_a):
    job = create_job(
        client, tenant_a, min_pay_rate=40, max_pay_rate=55.5, posting_date="2026-01-05T00:00:00Z"
    )
    got = client.get(f"/v1/jobs/{job['id']}", headers=tenant_a.headers)
    assert got.status_code == 200
    assert got.json == job
    assert job["number"] == 1 and job["desc"].startswith("We need an RN")
    assert job["created_at"].endswith("Z") and job["max_pay_rate"] == 55.5


@pytest.mark.parametrize("missing", REQUIRED_ON_CREATE)
def test_create_without_a_required_field_is_422_naming_it(client, tenant_a, missing):
    body = job_body()
    del body[missing]
    response = client.post("/v1/jobs", json=body, headers=tenant_a.headers)
    assert response.status_code == 422
    assert response.json["status"] == 422
    assert response.json["error"]["type"] == "validation_error"
    assert list(response.json["error"]["fields"]) == [missing]


@pytest.mark.parametrize(
    "field, value",
    [
        ("title", 5),
        ("min_pay_rate", "lots"),
        ("recruiter_email", "not-an-email"),
        ("start_date", "next tuesday"),
        ("title", "   "),
    ],
)
def test_wrong_types_are_422(client, tenant_a, field, value):
    response = client.post("/v1/jobs", json=job_body(**{field: value}), headers=tenant_a.headers)
    assert response.status_code == 422
    assert field in response.json["error"]["fields"]


def test_pay_range_must_be_ordered(client, tenant_a):
    response = client.post(
        "/v1/jobs", json=job_body(min_pay_rate=50, max_pay_rate=40), headers=tenant_a.headers
    )
    assert response.status_code == 422 and "max_pay_rate" in response.json["error"]["fields"]
    job = create_job(client, tenant_a, min_pay_rate=10, max_pay_rate=20)
    response = client.patch(
        f"/v1/jobs/{job['id']}",
        json={"title": job["title"], "min_pay_rate": 30},
        headers=tenant_a.headers,
    )
    assert response.status_code == 422


def test_unknown_field_is_422(client, tenant_a):
    response = client.post("/v1/jobs", json=job_body(salary="a lot"), headers=tenant_a.headers)
    assert response.status_code == 422 and response.json["error"]["fields"] == {
        "salary": ["Unknown field."]
    }


def test_malformed_json_is_400(client, tenant_a):
    response = client.post(
        "/v1/jobs",
        data="{not json",
        headers={**tenant_a.headers, "Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json["error"]["type"] == "invalid_request_error"


def test_unknown_job_is_404(client, tenant_a):
    for job_id in ("6f1c1c1e-0000-4000-8000-000000000000", "not-a-uuid"):
        response = client.get(f"/v1/jobs/{job_id}", headers=tenant_a.headers)
        assert response.status_code == 404
        assert response.json["error"]["type"] == "not_found"


def test_duplicate_source_id_is_409_with_existing_id(client, tenant_a, tenant_b):
    job = create_job(client, tenant_a, source_id="ats-1")
    again = client.post("/v1/jobs", json=job_body(source_id="ats-1"), headers=tenant_a.headers)
    assert again.status_code == 409
    assert again.json["error"]["existing_id"] == job["id"]
    # source ids are unique per tenant, not globally
    assert (
        client.post(
            "/v1/jobs", json=job_body(source_id="ats-1"), headers=tenant_b.headers
        ).status_code
        == 201
    )


def test_patch_changes_only_sent_fields_and_refuses_source_id(client, tenant_a):
    job = create_job(client, tenant_a, city="Austin")
    response = client.patch(
        f"/v1/jobs/{job['id']}",
        json={"title": "Charge Nurse", "job_code": "RN-2"},
        headers=tenant_a.headers,
    )
    assert response.status_code == 200
    assert response.json["title"] == "Charge Nurse" and response.json["job_code"] == "RN-2"
    assert response.json["city"] == "Austin" and response.json["source_id"] == job["source_id"]
    refused = client.patch(
        f"/v1/jobs/{job['id']}", json={"title": "X", "source_id": "other"}, headers=tenant_a.headers
    )
    assert refused.status_code == 422 and "source_id" in refused.json["error"]["fields"]
    without_title = client.patch(
        f"/v1/jobs/{job['id']}", json={"city": "Reno"}, headers=tenant_a.headers
    )
    assert without_title.status_code == 422 and "title" in without_title.json["error"]["fields"]


def test_pagination_math(client, tenant_a):
    created = [create_job(client, tenant_a)["id"] for _ in range(7)]
    first = client.get("/v1/jobs?page=1&size=3", headers=tenant_a.headers).json
    assert (first["total"], first["total_pages"], first["page"], first["size"]) == (7, 3, 1, 3)
    last = client.get("/v1/jobs?page=3&size=3", headers=tenant_a.headers).json
    assert [j["id"] for j in last["data"]] == created[6:]
    walked = [
        j["id"]
        for p in (1, 2, 3)
        for j in client.get(f"/v1/jobs?page={p}&size=3", headers=tenant_a.headers).json["data"]
    ]
    assert walked == created
    beyond = client.get("/v1/jobs?page=4&size=3", headers=tenant_a.headers).json
    assert beyond["data"] == [] and beyond["total"] == 7


@pytest.mark.parametrize(
    "query, field",
    [
        ("page=1&size=101", "size"),
        ("page=0&size=10", "page"),
        ("size=10", "page"),
        ("page=1", "size"),
        ("page=x&size=10", "page"),
    ],
)
def test_bad_page_parameters_are_422(client, tenant_a, query, field):
    response = client.get(f"/v1/jobs?{query}", headers=tenant_a.headers)
    assert response.status_code == 422
    assert field in response.json["error"]["fields"]


def test_list_filters(client, tenant_a):
    create_job(
        client,
        tenant_a,
        source_id="a",
        status="open",
        city="Austin",
        employment_type="full_time",
        workplace_type="onsite",
    )
    create_job(
        client,
        tenant_a,
        source_id="b",
        status="closed",
        city="Boston",
        employment_type="contract",
        workplace_type="remote",
    )

    def ids(query):
        return [
            j["source_id"]
            for j in client.get(f"/v1/jobs?page=1&size=10&{query}", headers=tenant_a.headers).json[
                "data"
            ]
        ]

    assert ids("source_id=b") == ["b"]
    assert ids("status=OPEN") == ["a"]
    assert ids("city=boston") == ["b"]
    assert ids("employment_type=contract") == ["b"]
    assert ids("workplace_type=onsite&status=open") == ["a"]
    assert ids("country=US") == ["a", "b"]


def test_numbers_are_sequential_per_tenant(client, tenant_a, tenant_b):
    assert [create_job(client, tenant_a)["number"] for _ in range(3)] == [1, 2, 3]
    assert create_job(client, tenant_b)["number"] == 1


def test_tenant_b_cannot_see_or_change_tenant_a_jobs(client, tenant_a, tenant_b):
    job = create_job(client, tenant_a)
    assert client.get(f"/v1/jobs/{job['id']}", headers=tenant_b.headers).status_code == 404
    assert (
        client.patch(
            f"/v1/jobs/{job['id']}", json={"title": "hijack"}, headers=tenant_b.headers
        ).status_code
        == 404
    )
    assert client.get("/v1/jobs?page=1&size=100", headers=tenant_b.headers).json["total"] == 0
    assert (
        client.get(f"/v1/jobs/{job['id']}", headers=tenant_a.headers).json["title"] == job["title"]
    )
