"""PUT /v1/<family>/by-source-id/{source_id}: 201 creates, 200 replaces, one record under concurrent
pushes; POST's 409 stays."""

from __future__ import annotations

import concurrent.futures

import pytest
import requests

from app.data import events
from app.data.db import database
from plugins.applications.models import Application
from plugins.candidates.models import Candidate
from plugins.jobs.models import Job
from tests.factories import candidate_body, create_candidate, create_job, job_body
from tests.test_fault_drills import gunicorn_server  # noqa: F401 - the fixture

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT


def without_source_id(body: dict) -> dict:
    return {name: value for name, value in body.items() if name != "source_id"}


def count(app, model, tenant) -> int:
    with app.app_context(), database.connection_context():
        return model.select().where(model.tenant == tenant.id).count()


def test_job_upsert_creates_then_replaces_the_whole_job(app, client, tenant_a):
    body = without_source_id(job_body(city="Oakland", min_pay_rate=40))
    created = client.put("/v1/jobs/by-source-id/ats-job-1", json=body, headers=tenant_a.headers)
    assert created.status_code == 201, created.json
    assert created.json["source_id"] == "ats-job-1" and created.json["city"] == "Oakland"

    replacement = without_source_id(job_body(title="Charge Nurse"))
    replacement.pop("city")
    replaced = client.put(
        "/v1/jobs/by-source-id/ats-job-1", json=replacement, headers=tenant_a.headers
    )
    assert replaced.status_code == 200, replaced.json
    assert (
        replaced.json["id"] == created.json["id"]
        and replaced.json["number"] == created.json["number"]
    )
    assert replaced.json["title"] == "Charge Nurse"
    # replaced, not merged
    assert replaced.json["city"] is None and replaced.json["min_pay_rate"] is None
    assert count(app, Job, tenant_a) == 1

    duplicate = client.post(
        "/v1/jobs", json={**body, "source_id": "ats-job-1"}, headers=tenant_a.headers
    )
    assert (
        duplicate.status_code == 409
        and duplicate.json["error"]["existing_id"] == created.json["id"]
    )


def test_job_upsert_refuses_a_body_source_id_and_an_invalid_body(client, tenant_a):
    with_source = client.put("/v1/jobs/by-source-id/x", json=job_body(), headers=tenant_a.headers)
    assert with_source.status_code == 422 and "source_id" in with_source.json["error"]["fields"]
    missing = client.put(
        "/v1/jobs/by-source-id/x", json={"title": "Nurse"}, headers=tenant_a.headers
    )
    assert missing.status_code == 422 and "industry" in missing.json["error"]["fields"]
    too_long = client.put(
        f"/v1/jobs/by-source-id/{'x' * 256}",
        json=without_source_id(job_body()),
        headers=tenant_a.headers,
    )
    assert too_long.status_code == 422 and "source_id" in too_long.json["error"]["fields"]


def test_upserts_are_per_tenant(app, client, tenant_a, tenant_b):
    body = without_source_id(job_body())
    first = client.put("/v1/jobs/by-source-id/shared", json=body, headers=tenant_a.headers)
    second = client.put("/v1/jobs/by-source-id/shared", json=body, headers=tenant_b.headers)
    assert (first.status_code, second.status_code) == (201, 201)
    assert first.json["id"] != second.json["id"]
    assert count(app, Job, tenant_a) == count(app, Job, tenant_b) == 1


def test_candidate_upsert_creates_then_replaces(app, client, tenant_a):
    body = without_source_id(candidate_body(city="Fresno"))
    created = client.put(
        "/v1/candidates/by-source-id/ats-cand-1", json=body, headers=tenant_a.headers
    )
    assert created.status_code == 201, created.json
    replaced = client.put(
        "/v1/candidates/by-source-id/ats-cand-1",
        json={**body, "first_name": "Janet", "city": None},
        headers=tenant_a.headers,
    )
    assert replaced.status_code == 200, replaced.json
    assert replaced.json["id"] == created.json["id"]
    assert (replaced.json["first_name"], replaced.json["city"], replaced.json["source_id"]) == (
        "Janet",
        None,
        "ats-cand-1",
    )
    assert count(app, Candidate, tenant_a) == 1


def test_application_upsert_creates_replaces_announces_and_never_moves(app, client, tenant_a):
    job, candidate, other = (
        create_job(client, tenant_a),
        create_candidate(client, tenant_a),
        create_candidate(client, tenant_a),
    )
    body = {
        "candidate_source_id": candidate["source_id"],
        "job_source_id": job["source_id"],
        "source_application_status": "applied",
        "application_stage": "ACTIVE",
    }
    created = client.put(
        "/v1/applications/by-source-id/ats-app-1", json=body, headers=tenant_a.headers
    )
    assert created.status_code == 201, created.json
    assert created.json["source_id"] == "ats-app-1"
    replaced = client.put(
        "/v1/applications/by-source-id/ats-app-1",
        json={**body, "source_application_status": "hired"},
        headers=tenant_a.headers,
    )
    assert replaced.status_code == 200, replaced.json
    assert replaced.json["id"] == created.json["id"] and replaced.json["status"] == "hired"
    with app.app_context(), database.connection_context():
        statuses = [
            e.payload["status"]
            for e in events.Event.select()
            .where(events.Event.tenant == tenant_a.id)
            .order_by(events.Event.sequence)
        ]
    assert statuses == ["applied", "hired"]
    moved = client.put(
        "/v1/applications/by-source-id/ats-app-1",
        json={**body, "candidate_source_id": other["source_id"]},
        headers=tenant_a.headers,
    )
    assert moved.status_code == 422 and "candidate_source_id" in moved.json["error"]["fields"]
    assert count(app, Application, tenant_a) == 1


def slashed_bodies(client, tenant) -> dict:
    candidate, job = create_candidate(client, tenant), create_job(client, tenant)
    return {
        "jobs": without_source_id(job_body()),
        "candidates": without_source_id(candidate_body()),
        "applications": {
            "candidate_source_id": candidate["source_id"],
            "job_source_id": job["source_id"],
            "source_application_status": "applied",
            "application_stage": "ACTIVE",
        },
    }


@pytest.mark.parametrize("family", ["jobs", "candidates", "applications"])
def test_a_source_id_holding_slashes_is_upserted_sent_as_is_or_percent_encoded(
    client, tenant_a, tenant_b, family
):
    body = slashed_bodies(client, tenant_a)[family]
    created = client.put(
        f"/v1/{family}/by-source-id/greenhouse/{family}/42", json=body, headers=tenant_a.headers
    )
    assert created.status_code == 201, created.json
    assert created.json["source_id"] == f"greenhouse/{family}/42"
    replaced = client.put(
        f"/v1/{family}/by-source-id/greenhouse%2F{family}%2F42", json=body, headers=tenant_a.headers
    )
    assert replaced.status_code == 200 and replaced.json["id"] == created.json["id"]
    listed = client.get(
        f"/v1/{family}",
        query_string={"page": 1, "size": 10, "source_id": f"greenhouse/{family}/42"},
        headers=tenant_a.headers,
    )
    assert [item["id"] for item in listed.json["data"]] == [created.json["id"]]
    others = client.put(
        f"/v1/{family}/by-source-id/greenhouse/{family}/42",
        json=slashed_bodies(client, tenant_b)[family],
        headers=tenant_b.headers,
    )
    # each tenant's own record
    assert others.status_code == 201 and others.json["id"] != created.json["id"]
    blank_end = client.put(
        f"/v1/{family}/by-source-id/greenhouse/%20", json=body, headers=tenant_a.headers
    )
    assert blank_end.status_code == 422 and "source_id" in blank_end.json["error"]["fields"]
    bad_bytes = client.put(f"/v1/{family}/by-source-id/a/%FF", json=body, headers=tenant_a.headers)
    assert bad_bytes.status_code == 422 and "source_id" in bad_bytes.json["error"]["fields"]


@pytest.mark.slow
def test_a_source_id_holding_slashes_reaches_the_upsert_through_gunicorn(gunicorn_server, tenant_a):  # noqa: F811
    base, _ = gunicorn_server()
    body = without_source_id(job_body())
    created = requests.put(
        f"{base}/v1/jobs/by-source-id/lever/postings/7",
        json=body,
        headers=tenant_a.headers,
        timeout=30,
    )
    assert created.status_code == 201 and created.json()["source_id"] == "lever/postings/7"
    again = requests.put(
        f"{base}/v1/jobs/by-source-id/lever%2Fpostings%2F7",
        json=body,
        headers=tenant_a.headers,
        timeout=30,
    )
    assert again.status_code == 200 and again.json()["id"] == created.json()["id"]


def test_upsert_with_an_idempotency_key_replays(app, client, tenant_a):
    headers = {**tenant_a.headers, "Idempotency-Key": "push-1"}
    body = without_source_id(job_body())
    first = client.put("/v1/jobs/by-source-id/keyed", json=body, headers=headers)
    again = client.put("/v1/jobs/by-source-id/keyed", json=body, headers=headers)
    # the stored answer, not the 200 of a replace
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.get_data() == first.get_data() and again.headers["Idempotent-Replayed"] == "true"


@pytest.mark.slow
@pytest.mark.parametrize(
    "family, body",
    [
        ("jobs", lambda: without_source_id(job_body())),
        ("candidates", lambda: without_source_id(candidate_body())),
    ],
)
def test_concurrent_upserts_of_one_new_source_id_on_gunicorn_make_one_record(
    gunicorn_server,  # noqa: F811
    app,
    tenant_a,
    family,
    body,
):
    base, _ = gunicorn_server()
    rounds = 6
    for round_number in range(rounds):
        url = f"{base}/v1/{family}/by-source-id/race-{round_number}"
        payload = body()

        def push(_):
            return requests.put(url, json=payload, headers=tenant_a.headers, timeout=30)

        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            answers = list(pool.map(push, range(2)))
        assert sorted(answer.status_code for answer in answers) == [200, 201], [
            a.text for a in answers
        ]
        assert answers[0].json()["id"] == answers[1].json()["id"]
    model = {"jobs": Job, "candidates": Candidate}[family]
    assert count(app, model, tenant_a) == rounds
