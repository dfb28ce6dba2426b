"""Request bodies that satisfy SPEC's required fields, for tests to build state through the public API."""

from __future__ import annotations

import itertools

_counter = itertools.count(1)


def job_body(**overrides) -> dict:
    n = next(_counter)
    body = {
        "title": f"Registered Nurse {n}",
        "industry": "healthcare",
        "state_name": "California",
        "country": "US",
        "city": "San Francisco",
        "recruiter_name": "Rita Recruiter",
        "recruiter_email": "rita@example.com",
        "recruiter_work_phone_no": "+14155550100",
        "status": "open",
        "desc": "We need an RN with 3+ years of ICU experience and a BLS certification.",
        "source_id": f"job-{n}",
    }
    body.update(overrides)
    return body


def create_job(client, tenant, **overrides) -> dict:
    response = client.post("/v1/jobs", json=job_body(**overrides), headers=tenant.headers)
    assert response.status_code == 201, response.json
    return response.json
