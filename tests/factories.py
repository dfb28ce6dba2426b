"""Request bodies that carry every field the create bodies require, for tests to build state through
the public API."""

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


def candidate_body(**overrides) -> dict:
    n = next(_counter)
    body = {
        "first_name": "Jane",
        "last_name": f"Doe {n}",
        "email": f"jane.doe{n}@example.com",
        "phone_no": "+1 415 555 2671",
        "city": "Oakland",
        "state_name": "California",
        "country": "US",
        "source": "referral",
        "source_id": f"cand-{n}",
    }
    body.update(overrides)
    return body


def create_candidate(client, tenant, **overrides) -> dict:
    response = client.post(
        "/v1/candidates", json=candidate_body(**overrides), headers=tenant.headers
    )
    assert response.status_code == 201, response.json
    return response.json


def application_body(candidate: dict, job: dict, **overrides) -> dict:
    body = {
        "candidate_source_id": candidate["source_id"],
        "job_source_id": job["source_id"],
        "source_application_status": "applied",
        "application_stage": "ACTIVE",
    }
    body.update(overrides)
    return body


def create_application(client, tenant, candidate=None, job=None, **overrides) -> dict:
    """An application through the API; a fresh candidate and job are created when not given."""
    candidate = candidate or create_candidate(client, tenant)
    job = job or create_job(client, tenant)
    response = client.post(
        "/v1/applications",
        json=application_body(candidate, job, **overrides),
        headers=tenant.headers,
    )
    assert response.status_code == 201, response.json
    return response.json


def pdf_bytes(text: str = "Jane Doe - Registered Nurse") -> bytes:
    """A small but well-formed PDF."""
    return (
        b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count "
        b"0>>endobj\n"
        b"% " + text.encode() + b"\ntrailer<</Root 1 0 R>>\n%%EOF\n"
    )


def docx_bytes(text: str = "Jane Doe") -> bytes:
    """A minimal Word (OOXML) package."""
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as package:
        package.writestr("[Content_Types].xml", "<Types/>")
        package.writestr(
            "word/document.xml",
            f"<w:document><w:body><w:p><w:r><w:t>{text}</w:t></w:r></w:p></w:body></w:document>",
        )
    return buffer.getvalue()
