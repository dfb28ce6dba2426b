"""An Idempotency-Key keeps at most IDEMPOTENCY_MAX_STORED_BYTES (64 KiB) of answer: a larger answer
is not stored, but a retry still runs nothing and gets the original status, the record's id and a
note saying the answer was too large."""

from __future__ import annotations

from app.http import idempotency
from app.data.db import database
from plugins.jobs.models import Job
from tests.factories import job_body

LIMIT = 64 * 1024
SMALL_LIMIT = 32 * 1024  # a job answer can reach it within the description's bound


def with_key(tenant, key: str) -> dict:
    return {**tenant.headers, "Idempotency-Key": key}


def stored_row(app, key: str) -> idempotency.IdempotencyKey:
    with app.app_context(), database.connection_context():
        return idempotency.IdempotencyKey.get(idempotency.IdempotencyKey.key == key)


def jobs(app, tenant) -> int:
    with app.app_context(), database.connection_context():
        return Job.select().where(Job.tenant == tenant.id).count()


def test_the_cap_is_64_kib_by_default(app):
    assert app.config["IDEMPOTENCY_MAX_STORED_BYTES"] == LIMIT


def test_an_answer_past_the_cap_is_not_stored_and_its_retry_runs_nothing(make_app, tenant_a):
    app = make_app(IDEMPOTENCY_MAX_STORED_BYTES=SMALL_LIMIT)
    client = app.test_client()
    # ~48 KB answered
    body = job_body(source_id="long-description", desc="A long job description. " * 2000)
    first = client.post("/v1/jobs", json=body, headers=with_key(tenant_a, "big-1"))
    assert first.status_code == 201 and len(first.get_data()) > SMALL_LIMIT

    assert len(bytes(stored_row(app, "big-1").body)) < 1024  # the note, not the answer

    again = client.post("/v1/jobs", json=body, headers=with_key(tenant_a, "big-1"))
    assert again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.headers["Idempotent-Answer-Omitted"] == "too-large"
    assert again.headers["Content-Type"] == "application/json"
    note = again.json
    assert (
        note["answer_omitted"] == "too-large" and note["status"] == 201 and note["replayed"] is True
    )
    assert note["id"] == first.json["id"]
    assert f"{SMALL_LIMIT:,} bytes" in note["message"]
    assert jobs(app, tenant_a) == 1  # the write did not run again
    fetched = client.get(f"/v1/jobs/{note['id']}", headers=tenant_a.headers)
    assert fetched.status_code == 200 and fetched.json["desc"] == body["desc"].strip()

    other = client.post(
        "/v1/jobs", json={**body, "title": "Another"}, headers=with_key(tenant_a, "big-1")
    )
    assert other.status_code == 422  # the key still names that request only


def test_answers_within_the_cap_replay_byte_identically(make_app, tenant_a):
    app = make_app(IDEMPOTENCY_MAX_STORED_BYTES=4096)
    client = app.test_client()
    small = job_body(source_id="small", desc="Short.")
    first = client.post("/v1/jobs", json=small, headers=with_key(tenant_a, "small-1"))
    again = client.post("/v1/jobs", json=small, headers=with_key(tenant_a, "small-1"))
    assert again.get_data() == first.get_data() and "Idempotent-Answer-Omitted" not in again.headers

    large = job_body(source_id="large", desc="x" * 5000)  # past this app's 4 KiB cap
    first = client.post("/v1/jobs", json=large, headers=with_key(tenant_a, "large-1"))
    again = client.post("/v1/jobs", json=large, headers=with_key(tenant_a, "large-1"))
    assert first.status_code == again.status_code == 201
    assert (
        again.headers["Idempotent-Answer-Omitted"] == "too-large"
        and again.json["id"] == first.json["id"]
    )
    assert jobs(app, tenant_a) == 2


def test_openapi_documents_the_cap_where_it_documents_the_key(client):
    spec = client.get("/openapi.json").json
    create_job = spec["paths"]["/v1/jobs"]["post"]
    parameter = next(p for p in create_job["parameters"] if p["name"] == "Idempotency-Key")
    assert "IDEMPOTENCY_MAX_STORED_BYTES (64 KiB" in parameter["description"]
    assert "Idempotent-Answer-Omitted" in create_job["responses"]["201"]["headers"]


def test_an_mcp_write_past_the_cap_answers_the_note_on_retry(make_app, tenant_a):
    from tests.test_mcp_protocol import tool_result

    app = make_app(IDEMPOTENCY_MAX_STORED_BYTES=4096)
    client = app.test_client()
    arguments = {
        **job_body(source_id="mcp-large", desc="y" * 5000),
        "idempotency_key": "mcp-large-1",
    }
    first = tool_result(client, tenant_a, "create_job", arguments)
    again = tool_result(client, tenant_a, "create_job", arguments)
    assert first["isError"] is False and again["isError"] is False
    assert (
        "too-large" in again["content"][0]["text"] and "y" * 5000 not in again["content"][0]["text"]
    )
    assert jobs(app, tenant_a) == 1


def test_a_batch_answer_past_the_cap_is_still_replayed_whole(client, tenant_a):
    from app.http.batch_upserts import MAX_BATCH_ITEMS

    headers = {**tenant_a.headers, "Idempotency-Key": "a-long-batch"}
    body = {
        "items": [
            job_body(source_id=f"{index:05d}-" + "s" * 249) for index in range(MAX_BATCH_ITEMS)
        ]
    }
    first = client.put("/v1/jobs/by-source-id", json=body, headers=headers)
    assert first.status_code == 200 and first.json["created"] == MAX_BATCH_ITEMS
    assert len(first.get_data()) > 64 * 1024  # past the cap other answers meet
    replay = client.put("/v1/jobs/by-source-id", json=body, headers=headers)
    assert (
        replay.headers["Idempotent-Replayed"] == "true"
        and "Idempotent-Answer-Omitted" not in replay.headers
    )
    assert replay.get_data() == first.get_data()
