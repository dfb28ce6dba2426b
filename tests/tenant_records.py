"""One record of every kind for a tenant, built through the public API, keyed by the path parameter
that names it.

The fuzzer pins path parameters to these ids so generated bodies reach real records; the
tenant-isolation matrix points another tenant's key at them.
"""

from __future__ import annotations

import base64
import uuid

from tests.factories import candidate_body, create_job, pdf_bytes

# a profile of the shared person dataset the fuzzer loads (tests/person/people8.jsonl): not tenant
# data, but a path parameter of the person retrieve routes
PERSON_ID = "p1"

# a receiver nobody listens on: deliveries fail fast and are logged as attempts
UNREACHABLE_RECEIVER = "http://127.0.0.1:9/hooks"


def ok(response, status=200) -> dict:
    assert response.status_code == status, (response.status_code, response.get_data(as_text=True))
    return response.json


def seed_records(client, tenant) -> dict:
    """{path parameter name: value} for a job, question, candidate (with a resume), application,
    call, webhook, delivery, an erased candidate (its tombstone and erasure log entry) and a
    do-not-call number."""
    headers = tenant.headers
    job = create_job(client, tenant, source_id=f"{tenant.id}-job")
    question = ok(
        client.post(
            f"/v1/jobs/{job['id']}/questions",
            headers=headers,
            json={
                "question_text": "How many years of ICU experience do you have?",
                "source_id": f"{tenant.id}-question",
            },
        ),
        201,
    )
    candidate = ok(
        client.post(
            "/v1/candidates",
            headers=headers,
            json=candidate_body(
                source_id=f"{tenant.id}-candidate",
                base64file=base64.b64encode(pdf_bytes()).decode(),
                file_name="cv.pdf",
            ),
        ),
        201,
    )
    webhook = ok(
        client.post(
            "/v1/tenant-webhook",
            headers=headers,
            json={
                "tenant_id": tenant.id,
                "triggered_event": "application_activty",
                "type": "post_call_screening",
                "fields": ["id", "application_stage"],
                "url": UNREACHABLE_RECEIVER,
                "http_method": "POST",
                "content_type": "application/json",
            },
        ),
        201,
    )
    application = ok(
        client.post(
            "/v1/applications",
            headers=headers,
            json={
                "candidate_source_id": candidate["source_id"],
                "job_source_id": job["source_id"],
                "source_application_status": "applied",
                "application_stage": "ACTIVE",
            },
        ),
        201,
    )
    call = ok(
        client.post(f"/v1/applications/{application['id']}/instant-call", headers=headers), 202
    )
    erased = ok(
        client.post(
            "/v1/candidates", headers=headers, json=candidate_body(source_id=f"{tenant.id}-erased")
        ),
        201,
    )
    # a tombstone, a log row
    assert client.delete(f"/v1/candidates/{erased['id']}", headers=headers).status_code == 204
    user = ok(
        client.post(
            "/v1/users",
            headers=headers,
            json={
                "email": f"{tenant.id}-user@example.com",
                "name": "Admin",
                "password": "correct horse battery staple",
            },
        ),
        201,
    )
    # a number of the tenant's own, and only its
    unwanted = f"+1415555{1000 + sum(map(ord, tenant.id)) % 9000}"
    ok(client.post("/v1/do-not-call", headers=headers, json={"phone_no": unwanted}), 201)
    deliveries = ok(
        client.get(f"/v1/tenant-webhook/{webhook['id']}/deliveries?page=1&size=1", headers=headers)
    )
    assert deliveries["data"], "creating the application should have produced a webhook delivery"
    return {
        "job_id": job["id"],
        "number": job["number"],
        "question_id": question["id"],
        "candidate_id": candidate["id"],
        "application_id": application["id"],
        "call_id": call["id"],
        "tenant_webhook_id": webhook["id"],
        "delivery_id": deliveries["data"][0]["id"],
        "person_id": PERSON_ID,
        "source_id": job["source_id"],  # the by-source-id upserts' path value
        "erased_candidate_id": erased["id"],
        # no authorization exists: B must get 404 all the same
        "user_id": user["id"],
        "authorization_id": str(uuid.uuid4()),
        "consent_id": str(uuid.uuid4()),
        "phone_no": unwanted,  # on the tenant's do-not-call list
        # the candidate's page is opened by its signed link, never by a key
        "token": "not-a-page-link",
    }
