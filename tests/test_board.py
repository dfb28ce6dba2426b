"""The unversioned job board: published jobs by number, and applying with name, email and resume."""

import io

import pytest

from tests.factories import create_candidate, create_job, pdf_bytes


def apply_form(name="Jane Doe", email="jane@example.com", resume=None, file_name="jane.pdf"):
    form = {"name": name, "email": email}
    if resume is not False:
        form["resume"] = (io.BytesIO(resume or pdf_bytes()), file_name)
    return form


def test_board_lists_published_jobs_by_number(client, tenant_a, tenant_b):
    first = create_job(client, tenant_a, title="Nurse", status="open")
    create_job(client, tenant_a, title="Old", status="Closed")
    create_job(client, tenant_a, title="Soon", status="draft")
    third = create_job(client, tenant_a, title="Porter", status="active")
    create_job(client, tenant_b, title="Other tenant")
    response = client.get("/jobs", headers=tenant_a.headers)
    assert response.status_code == 200
    assert response.json == [
        {"id": first["number"], "title": "Nurse", "description": first["desc"]},
        {"id": third["number"], "title": "Porter", "description": third["desc"]},
    ]


def test_board_pages_with_page_and_limit(client, tenant_a):
    numbers = [create_job(client, tenant_a)["number"] for _ in range(5)]
    assert [
        j["id"] for j in client.get("/jobs?page=2&limit=2", headers=tenant_a.headers).json
    ] == numbers[2:4]
    assert [
        j["id"] for j in client.get("/jobs?page=3&limit=2", headers=tenant_a.headers).json
    ] == numbers[4:]
    assert client.get("/jobs?limit=0", headers=tenant_a.headers).status_code == 422
    assert client.get("/jobs?page=0", headers=tenant_a.headers).status_code == 422


def test_board_reads_a_job_by_number(client, tenant_a):
    job = create_job(client, tenant_a, title="Forklift Operator")
    closed = create_job(client, tenant_a, status="closed")
    response = client.get(f"/jobs/{job['number']}", headers=tenant_a.headers)
    assert response.status_code == 200
    assert response.json == {
        "id": job["number"],
        "title": "Forklift Operator",
        "description": job["desc"],
    }
    assert client.get(f"/jobs/{closed['number']}", headers=tenant_a.headers).status_code == 404
    assert client.get("/jobs/999", headers=tenant_a.headers).status_code == 404


def test_board_needs_a_bearer_key(client, tenant_a):
    assert client.get("/jobs").status_code == 401
    assert client.get("/jobs", headers=tenant_a.person_headers).status_code == 401


def test_apply_creates_candidate_and_active_application_with_the_resume(client, tenant_a):
    job = create_job(client, tenant_a)
    resume = pdf_bytes("board applicant")
    response = client.post(
        f"/jobs/{job['number']}/apply",
        data=apply_form("Jane Q Doe", "Jane@Example.com", resume),
        headers=tenant_a.headers,
    )
    assert response.status_code == 201, response.json
    assert "Jane" in response.json["message"] and job["title"] in response.json["message"]
    application = client.get(
        f"/v1/applications/{response.json['application_id']}", headers=tenant_a.headers
    ).json
    assert application["application_stage"] == "ACTIVE" and application["job"]["id"] == job["id"]
    assert (application["candidate"]["first_name"], application["candidate"]["last_name"]) == (
        "Jane",
        "Q Doe",
    )
    assert (
        client.get(f"/v1/applications/{application['id']}/resume", headers=tenant_a.headers).data
        == resume
    )
    candidate = client.get(
        f"/v1/candidates/{application['candidate_id']}", headers=tenant_a.headers
    ).json
    assert candidate["source"] == "job_board" and candidate["resume"]["file_name"] == "jane.pdf"


def test_apply_finds_the_candidate_by_email(client, tenant_a):
    existing = create_candidate(client, tenant_a, email="ana@example.com")
    job_1, job_2 = create_job(client, tenant_a), create_job(client, tenant_a)
    for job in (job_1, job_2):
        response = client.post(
            f"/jobs/{job['number']}/apply",
            data=apply_form("Ana", "ANA@example.com"),
            headers=tenant_a.headers,
        )
        assert response.status_code == 201
    listing = client.get(
        f"/v1/applications?page=1&size=10&candidate_source_id={existing['source_id']}",
        headers=tenant_a.headers,
    ).json
    assert listing["total"] == 2
    assert client.get("/v1/candidates?page=1&size=10", headers=tenant_a.headers).json["total"] == 1


def test_applying_twice_to_a_job_is_409(client, tenant_a):
    job = create_job(client, tenant_a)
    assert (
        client.post(
            f"/jobs/{job['number']}/apply", data=apply_form(), headers=tenant_a.headers
        ).status_code
        == 201
    )
    assert (
        client.post(
            f"/jobs/{job['number']}/apply", data=apply_form(), headers=tenant_a.headers
        ).status_code
        == 409
    )


@pytest.mark.parametrize(
    "form, field",
    [
        (lambda: apply_form(resume=False), "resume"),
        (lambda: {"email": "x@example.com", "resume": (io.BytesIO(pdf_bytes()), "a.pdf")}, "name"),
        (lambda: {"name": "X", "resume": (io.BytesIO(pdf_bytes()), "a.pdf")}, "email"),
        (lambda: apply_form(email="not-an-email"), "email"),
    ],
    ids=["resume", "name", "email", "bad-email"],
)
def test_apply_without_a_required_part_is_422_and_stores_nothing(client, tenant_a, form, field):
    job = create_job(client, tenant_a)
    response = client.post(f"/jobs/{job['number']}/apply", data=form(), headers=tenant_a.headers)
    assert response.status_code == 422 and field in response.json["error"]["fields"]
    assert client.get("/v1/candidates?page=1&size=10", headers=tenant_a.headers).json["total"] == 0


def test_apply_with_a_non_resume_file_is_415_and_stores_nothing(client, tenant_a):
    job = create_job(client, tenant_a)
    response = client.post(
        f"/jobs/{job['number']}/apply",
        data=apply_form(resume=b"MZ\x90\x00" + b"\x00" * 64, file_name="cv.pdf"),
        headers=tenant_a.headers,
    )
    assert response.status_code == 415
    assert client.get("/v1/candidates?page=1&size=10", headers=tenant_a.headers).json["total"] == 0


def test_apply_to_a_closed_job_is_404(client, tenant_a):
    job = create_job(client, tenant_a, status="closed")
    assert (
        client.post(
            f"/jobs/{job['number']}/apply", data=apply_form(), headers=tenant_a.headers
        ).status_code
        == 404
    )


def test_board_routes_are_documented(client):
    paths = client.get("/openapi.json").json["paths"]
    apply = paths["/jobs/{number}/apply"]["post"]
    assert set(apply["requestBody"]["content"]) == {"multipart/form-data"}
    assert {"/jobs", "/jobs/{number}"} <= set(paths)


def test_apply_as_json_is_415(client, tenant_a):
    job = create_job(client, tenant_a)
    response = client.post(
        f"/jobs/{job['number']}/apply",
        json={"name": "A", "email": "a@example.com"},
        headers=tenant_a.headers,
    )
    assert response.status_code == 415
