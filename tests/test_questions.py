"""The questions family: bodies and routes, job vs application questions, order, PATCH locator,
with-questions."""

import io
import json
import uuid

import pytest

from tests.factories import (
    application_body,
    create_application,
    create_candidate,
    create_job,
    pdf_bytes,
)

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT


def add_question(client, tenant, job, **body):
    body = {
        "question_text": "Are you comfortable with night shifts?",
        "source_id": f"q-{uuid.uuid4().hex[:8]}",
        **body,
    }
    response = client.post(f"/v1/jobs/{job['id']}/questions", json=body, headers=tenant.headers)
    assert response.status_code == 201, response.json
    return response.json


def listed(client, tenant, job, query=""):
    response = client.get(f"/v1/jobs/{job['id']}/questions{query}", headers=tenant.headers)
    assert response.status_code == 200, response.json
    return response.json["data"]


@pytest.mark.parametrize("missing", ["question_text", "source_id"])
def test_create_without_a_required_field_is_422_naming_it(client, tenant_a, missing):
    job = create_job(client, tenant_a)
    body = {"question_text": "Why us?", "source_id": "q1"}
    del body[missing]
    response = client.post(f"/v1/jobs/{job['id']}/questions", json=body, headers=tenant_a.headers)
    assert response.status_code == 422 and list(response.json["error"]["fields"]) == [missing]


def test_questions_list_in_creation_order_with_positions(client, tenant_a):
    job = create_job(client, tenant_a)
    made = [add_question(client, tenant_a, job, question_text=f"Question {n}?") for n in range(4)]
    got = listed(client, tenant_a, job)
    assert [q["id"] for q in got] == [q["id"] for q in made]
    assert [q["position"] for q in got] == [1, 2, 3, 4]
    assert (
        got[0]["job_id"] == job["id"]
        and got[0]["application_id"] is None
        and got[0]["generated"] is False
    )


def test_application_questions_belong_to_the_application(client, tenant_a):
    job = create_job(client, tenant_a)
    application = create_application(client, tenant_a, job=job)
    job_wide = add_question(client, tenant_a, job)
    own = add_question(client, tenant_a, job, application_id=application["id"])
    assert own["application_id"] == application["id"]
    assert [q["id"] for q in listed(client, tenant_a, job)] == [job_wide["id"]]
    assert [
        q["id"] for q in listed(client, tenant_a, job, f"?application_id={application['id']}")
    ] == [job_wide["id"], own["id"]]


def test_application_of_another_job_is_refused(client, tenant_a):
    job, other_job = create_job(client, tenant_a), create_job(client, tenant_a)
    application = create_application(client, tenant_a, job=other_job)
    response = client.post(
        f"/v1/jobs/{job['id']}/questions",
        headers=tenant_a.headers,
        json={"question_text": "Q?", "source_id": "q", "application_id": application["id"]},
    )
    assert response.status_code == 422 and list(response.json["error"]["fields"]) == [
        "application_id"
    ]
    assert (
        client.get(
            f"/v1/jobs/{job['id']}/questions?application_id={application['id']}",
            headers=tenant_a.headers,
        ).status_code
        == 404
    )
    assert (
        client.get(
            f"/v1/jobs/{job['id']}/questions?application_id=nope", headers=tenant_a.headers
        ).status_code
        == 422
    )


def test_duplicate_source_id_on_a_job_is_409(client, tenant_a):
    job = create_job(client, tenant_a)
    first = add_question(client, tenant_a, job, source_id="q-1")
    again = client.post(
        f"/v1/jobs/{job['id']}/questions",
        json={"question_text": "Other?", "source_id": "q-1"},
        headers=tenant_a.headers,
    )
    assert again.status_code == 409 and again.json["error"]["existing_id"] == first["id"]


def test_patch_question_requires_source_id(client, tenant_a):
    job = create_job(client, tenant_a)
    question = add_question(client, tenant_a, job, source_id="q-1")
    response = client.patch(
        f"/v1/jobs/{job['id']}/questions/{question['id']}",
        json={"question_text": "New?", "source_id": "q-1"},
        headers=tenant_a.headers,
    )
    assert response.status_code == 422 and list(response.json["error"]["fields"]) == ["source_id"]


def test_patch_question_changes_it_when_located_by_its_source_id(client, tenant_a):
    job = create_job(client, tenant_a)
    question = add_question(client, tenant_a, job, source_id="q-1")
    url = f"/v1/jobs/{job['id']}/questions/{question['id']}"
    wrong = client.patch(
        f"{url}?source_id=q-2",
        json={"question_text": "New?", "source_id": "q-1"},
        headers=tenant_a.headers,
    )
    assert wrong.status_code == 404
    response = client.patch(
        f"{url}?source_id=q-1",
        json={"question_text": "Can you work weekends?", "source_id": "q-1b"},
        headers=tenant_a.headers,
    )
    assert response.status_code == 200
    assert (response.json["question_text"], response.json["source_id"]) == (
        "Can you work weekends?",
        "q-1b",
    )
    assert client.get(url, headers=tenant_a.headers).json == response.json
    missing_text = client.patch(
        f"{url}?source_id=q-1b", json={"source_id": "q-1b"}, headers=tenant_a.headers
    )
    assert missing_text.status_code == 422 and list(missing_text.json["error"]["fields"]) == [
        "question_text"
    ]


def test_patch_with_application_id_moves_and_locates_application_questions(client, tenant_a):
    job = create_job(client, tenant_a)
    application = create_application(client, tenant_a, job=job)
    question = add_question(client, tenant_a, job, source_id="q-1")
    url = f"/v1/jobs/{job['id']}/questions/{question['id']}"
    moved = client.patch(
        f"{url}?source_id=q-1",
        json={"question_text": "Q?", "source_id": "q-1", "application_id": application["id"]},
        headers=tenant_a.headers,
    )
    assert moved.status_code == 200 and moved.json["application_id"] == application["id"]
    assert (
        client.patch(
            f"{url}?source_id=q-1",
            json={"question_text": "Q?", "source_id": "q-1"},
            # application_id omitted: unchanged
            headers=tenant_a.headers,
        ).status_code
        == 200
    )
    not_its_application = client.patch(
        f"{url}?source_id=q-1&application_id={uuid.uuid4()}",
        json={"question_text": "Q?", "source_id": "q-1"},
        headers=tenant_a.headers,
    )
    assert not_its_application.status_code == 404
    back = client.patch(
        f"{url}?source_id=q-1&application_id={application['id']}",
        json={"question_text": "Q?", "source_id": "q-1", "application_id": None},
        headers=tenant_a.headers,
    )
    assert back.status_code == 200 and back.json["application_id"] is None


def test_delete_then_get_is_404(client, tenant_a):
    job = create_job(client, tenant_a)
    question = add_question(client, tenant_a, job)
    url = f"/v1/jobs/{job['id']}/questions/{question['id']}"
    assert client.get(url, headers=tenant_a.headers).status_code == 200
    assert client.delete(url, headers=tenant_a.headers).status_code == 204
    assert client.get(url, headers=tenant_a.headers).status_code == 404
    assert client.delete(url, headers=tenant_a.headers).status_code == 404
    assert listed(client, tenant_a, job) == []


def test_with_questions_stores_them_on_the_application(client, tenant_a):
    job = create_job(client, tenant_a)
    job_wide = add_question(client, tenant_a, job)
    body = application_body(
        create_candidate(client, tenant_a),
        job,
        questions=[
            {"question_text": "Do you have a car?", "source_id": "ats-q-1"},
            {"question_text": "Earliest start date?", "source_id": "ats-q-2"},
        ],
    )
    response = client.post("/v1/applications/with-questions", json=body, headers=tenant_a.headers)
    assert response.status_code == 201, response.json
    application = response.json
    assert [q["source_id"] for q in application["questions"]] == ["ats-q-1", "ats-q-2"]
    assert (
        client.get(f"/v1/applications/{application['id']}", headers=tenant_a.headers).status_code
        == 200
    )
    in_list = listed(client, tenant_a, job, f"?application_id={application['id']}")
    assert [q["source_id"] for q in in_list] == [job_wide["source_id"], "ats-q-1", "ats-q-2"]
    assert all(q["application_id"] == application["id"] for q in in_list[1:])
    assert [q["id"] for q in listed(client, tenant_a, job)] == [job_wide["id"]]


def test_with_questions_is_all_or_nothing(client, tenant_a):
    job = create_job(client, tenant_a)
    candidate = create_candidate(client, tenant_a)
    repeated = application_body(
        candidate,
        job,
        questions=[
            {"question_text": "A?", "source_id": "x"},
            {"question_text": "B?", "source_id": "x"},
        ],
    )
    response = client.post(
        "/v1/applications/with-questions", json=repeated, headers=tenant_a.headers
    )
    assert response.status_code == 422 and "questions" in response.json["error"]["fields"]
    missing = application_body(candidate, job, questions=[{"source_id": "x"}])
    response = client.post(
        "/v1/applications/with-questions", json=missing, headers=tenant_a.headers
    )
    assert (
        response.status_code == 422
        and "questions.0.question_text" in response.json["error"]["fields"]
    )
    unknown_job = application_body(
        candidate, job, job_source_id="nope", questions=[{"question_text": "A?", "source_id": "a"}]
    )
    assert (
        client.post(
            "/v1/applications/with-questions", json=unknown_job, headers=tenant_a.headers
        ).status_code
        == 422
    )
    assert (
        client.get("/v1/applications?page=1&size=10", headers=tenant_a.headers).json["total"] == 0
    )


def test_other_tenant_cannot_see_or_change_questions(client, tenant_a, tenant_b):
    job = create_job(client, tenant_a)
    question = add_question(client, tenant_a, job, source_id="q-1")
    assert (
        client.get(f"/v1/jobs/{job['id']}/questions", headers=tenant_b.headers).status_code == 404
    )
    url = f"/v1/jobs/{job['id']}/questions/{question['id']}"
    assert (
        client.patch(
            f"{url}?source_id=q-1",
            json={"question_text": "X?", "source_id": "q-1"},
            headers=tenant_b.headers,
        ).status_code
        == 404
    )
    assert client.delete(url, headers=tenant_b.headers).status_code == 404
    assert (
        client.post(
            f"/v1/jobs/{job['id']}/questions",
            json={"question_text": "X?", "source_id": "x"},
            headers=tenant_b.headers,
        ).status_code
        == 404
    )
    assert (
        client.get(url, headers=tenant_a.headers).json["question_text"] == question["question_text"]
    )


def test_with_questions_accepts_multipart_with_a_resume(client, tenant_a):
    job = create_job(client, tenant_a)
    resume = pdf_bytes("with questions")
    form = {
        **application_body(create_candidate(client, tenant_a), job),
        "questions": json.dumps([{"question_text": "Can you lift 50 lbs?", "source_id": "lift"}]),
        "file": (io.BytesIO(resume), "cv.pdf"),
    }
    response = client.post("/v1/applications/with-questions", data=form, headers=tenant_a.headers)
    assert response.status_code == 201, response.json
    assert [q["source_id"] for q in response.json["questions"]] == ["lift"]
    assert (
        client.get(f"/v1/applications/{response.json['id']}/resume", headers=tenant_a.headers).data
        == resume
    )
