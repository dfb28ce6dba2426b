"""Test state for calls, built through the public API: a job with screening questions, a candidate,
an application."""

from __future__ import annotations

import itertools

from tests.factories import job_body

_numbers = itertools.count(1)

JOB_QUESTIONS = (
    "How many years of ICU experience do you have?",
    "Do you hold a current BLS certification?",
    "Tell us about a difficult shift and how you handled it.",
)


def create_job_with_questions(client, tenant, questions=JOB_QUESTIONS, **overrides) -> dict:
    response = client.post("/v1/jobs", json=job_body(**overrides), headers=tenant.headers)
    assert response.status_code == 201, response.json
    job = response.json
    for n, text in enumerate(questions):
        added = client.post(
            f"/v1/jobs/{job['id']}/questions",
            json={"question_text": text, "source_id": f"q-{job['id']}-{n}"},
            headers=tenant.headers,
        )
        assert added.status_code == 201, added.json
    return job


def create_candidate(client, tenant, phone_no: str | None = "+14155550100", **overrides) -> dict:
    n = next(_numbers)
    body = {
        "first_name": "Jane",
        "last_name": f"Doe{n}",
        "email": f"jane{n}@example.com",
        "phone_no": phone_no,
        "source": "referral",
        "source_id": f"call-cand-{n}",
    }
    body.update(overrides)
    response = client.post("/v1/candidates", json=body, headers=tenant.headers)
    assert response.status_code == 201, response.json
    return response.json


def create_application(client, tenant, job: dict, candidate: dict, stage: str = "ACTIVE") -> dict:
    body = {
        "candidate_source_id": candidate["source_id"],
        "job_source_id": job["source_id"],
        "source_application_status": "applied",
        "application_stage": stage,
    }
    response = client.post("/v1/applications", json=body, headers=tenant.headers)
    assert response.status_code == 201, response.json
    return response.json


def application_for(
    client, tenant, *, phone_no: str = "+14155550100", job: dict | None = None
) -> dict:
    """An ACTIVE application of a fresh candidate with that phone number, on a job with
    JOB_QUESTIONS."""
    job = job or create_job_with_questions(client, tenant)
    return create_application(
        client, tenant, job, create_candidate(client, tenant, phone_no=phone_no)
    )


def instant_call(client, tenant, application: dict):
    return client.post(f"/v1/applications/{application['id']}/instant-call", headers=tenant.headers)
