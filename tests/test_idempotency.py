"""Idempotency-Key on /v1 writes: replays are byte-identical and make nothing, mismatches are 422,
duplicates in flight 409, 5xx not kept."""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import io

import pytest
import requests

from app.data import events
from app.http import idempotency
from app.data.db import database, utcnow
from plugins.calls.models import Call
from plugins.jobs.models import Job
from plugins.webhooks.models import WebhookDelivery
from tests import call_factories
from tests.factories import create_application, job_body
from tests.test_fault_drills import gunicorn_server  # noqa: F401 - the fixture
from tests.webhook_helpers import create_webhook

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT


def counts(app, tenant) -> dict:
    with app.app_context(), database.connection_context():
        return {
            "jobs": Job.select().where(Job.tenant == tenant.id).count(),
            "calls": Call.select().where(Call.tenant == tenant.id).count(),
            "events": events.Event.select().where(events.Event.tenant == tenant.id).count(),
            "deliveries": WebhookDelivery.select().count(),
        }


def with_key(tenant, key: str) -> dict:
    return {**tenant.headers, "Idempotency-Key": key}


def assert_replayed(first, again) -> None:
    assert again.status_code == first.status_code
    assert again.get_data() == first.get_data()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert again.headers["Content-Type"] == first.headers["Content-Type"]


def test_create_replays_byte_identically_and_creates_nothing(app, client, tenant_a):
    body = job_body(source_id="idem-create")
    first = client.post("/v1/jobs", json=body, headers=with_key(tenant_a, "create-1"))
    assert first.status_code == 201
    before = counts(app, tenant_a)
    again = client.post("/v1/jobs", json=body, headers=with_key(tenant_a, "create-1"))
    assert_replayed(first, again)
    assert counts(app, tenant_a) == before == {**before, "jobs": 1}
    # without the key the duplicate create is still the 409 it always was
    assert client.post("/v1/jobs", json=body, headers=tenant_a.headers).status_code == 409


def test_instant_call_replays_and_places_no_second_call(app, client, tenant_a):
    application = call_factories.application_for(client, tenant_a)
    path = f"/v1/applications/{application['id']}/instant-call"
    first = client.post(path, headers=with_key(tenant_a, "call-1"))
    assert first.status_code == 202, first.json
    before = counts(app, tenant_a)
    again = client.post(path, headers=with_key(tenant_a, "call-1"))
    assert_replayed(first, again)
    assert counts(app, tenant_a) == before and before["calls"] == 1


def test_patch_replays_and_emits_no_second_event_or_delivery(app, client, tenant_a):
    create_webhook(client, tenant_a, "http://127.0.0.1:9/hook")
    application = create_application(client, tenant_a)
    body = {"source_application_status": "interviewing", "application_stage": "ACTIVE"}
    first = client.patch(
        f"/v1/applications/{application['id']}", json=body, headers=with_key(tenant_a, "patch-1")
    )
    assert first.status_code == 200, first.json
    before = counts(app, tenant_a)
    assert before["deliveries"] >= 1
    again = client.patch(
        f"/v1/applications/{application['id']}", json=body, headers=with_key(tenant_a, "patch-1")
    )
    assert_replayed(first, again)
    assert counts(app, tenant_a) == before


def test_same_key_for_another_request_is_422_in_the_one_error_body(client, tenant_a):
    assert (
        client.post(
            "/v1/jobs", json=job_body(source_id="idem-a"), headers=with_key(tenant_a, "k")
        ).status_code
        == 201
    )
    for method, path, body in [
        ("post", "/v1/jobs", job_body(source_id="idem-b")),  # another body
        # another path
        ("post", "/v1/candidates", job_body(source_id="idem-a")),
    ]:
        response = getattr(client, method)(path, json=body, headers=with_key(tenant_a, "k"))
        assert response.status_code == 422
        assert response.json["error"]["type"] == "validation_error"
        assert "another request" in response.json["error"]["message"]
        assert set(response.json) == {"status", "error"}


@pytest.mark.parametrize("key", ["", " ", "x" * 256, "tab\there", "caf\u00e9"])
def test_malformed_keys_are_422(client, tenant_a, key):
    headers = {**tenant_a.headers, "Idempotency-Key": key}
    response = client.post("/v1/jobs", json=job_body(), headers=headers)
    assert response.status_code == 422
    assert response.json["error"]["fields"] == {
        "Idempotency-Key": ["Must be 1-255 printable ASCII characters."]
    }


def test_keys_are_scoped_per_tenant(app, client, tenant_a, tenant_b):
    body = job_body(source_id="same-in-both")
    assert (
        client.post("/v1/jobs", json=body, headers=with_key(tenant_a, "shared")).status_code == 201
    )
    second = client.post("/v1/jobs", json=body, headers=with_key(tenant_b, "shared"))
    assert second.status_code == 201 and "Idempotent-Replayed" not in second.headers
    assert counts(app, tenant_b)["jobs"] == 1


def test_4xx_answers_are_kept_and_5xx_answers_are_not(app, client, tenant_a, monkeypatch):
    invalid = client.post("/v1/jobs", json={"title": "x"}, headers=with_key(tenant_a, "bad-body"))
    assert invalid.status_code == 422
    assert_replayed(
        invalid,
        client.post("/v1/jobs", json={"title": "x"}, headers=with_key(tenant_a, "bad-body")),
    )

    from plugins.jobs import services

    real_create = services.create_with_source_id
    monkeypatch.setattr(services, "create_with_source_id", lambda *args, **kwargs: 1 / 0)
    body = job_body(source_id="after-500")
    assert (
        client.post("/v1/jobs", json=body, headers=with_key(tenant_a, "flaky")).status_code == 500
    )
    monkeypatch.setattr(services, "create_with_source_id", real_create)
    retried = client.post("/v1/jobs", json=body, headers=with_key(tenant_a, "flaky"))
    assert retried.status_code == 201 and "Idempotent-Replayed" not in retried.headers


def test_in_flight_duplicate_is_409_until_its_lock_expires(app, client, tenant_a):
    body = job_body(source_id="in-flight")
    request_fingerprint = idempotency.fingerprint("POST", "/v1/jobs", b"another body")
    with app.test_request_context(), database.connection_context():
        # a request with this key is running
        idempotency.claim(tenant_a.id, "busy", request_fingerprint)
    duplicate = client.post("/v1/jobs", json=body, headers=with_key(tenant_a, "busy"))
    # another fingerprint: the body differs from the claimed one
    assert duplicate.status_code == 422

    with app.test_request_context(), database.connection_context():
        token, _ = idempotency.claim(
            tenant_a.id, "busy-2", idempotency.fingerprint("POST", "/v1/jobs", _json(body))
        )
        assert token
    duplicate = client.post(
        "/v1/jobs",
        data=_json(body),
        content_type="application/json",
        headers=with_key(tenant_a, "busy-2"),
    )
    assert duplicate.status_code == 409 and duplicate.headers["Retry-After"] == "1"
    assert duplicate.json["error"]["type"] == "conflict"

    # the process holding it died: its lock runs out
    with app.app_context(), database.connection_context():
        idempotency.IdempotencyKey.update(locked_until=utcnow() - dt.timedelta(seconds=1)).where(
            idempotency.IdempotencyKey.key == "busy-2"
        ).execute()
    taken_over = client.post(
        "/v1/jobs",
        data=_json(body),
        content_type="application/json",
        headers=with_key(tenant_a, "busy-2"),
    )
    assert taken_over.status_code == 201
    assert counts(app, tenant_a)["jobs"] == 1


def _json(body: dict) -> bytes:
    import json

    return json.dumps(body).encode()


def test_expired_keys_run_again_and_are_purged(app, client, tenant_a):
    body = job_body(source_id="expiring")
    assert client.post("/v1/jobs", json=body, headers=with_key(tenant_a, "old")).status_code == 201
    with app.app_context(), database.connection_context():
        assert idempotency.purge_expired() == 0
        assert idempotency.purge_expired(utcnow() + dt.timedelta(hours=24, seconds=1)) == 1
        assert idempotency.IdempotencyKey.select().count() == 0
    # ran again
    assert client.post("/v1/jobs", json=body, headers=with_key(tenant_a, "old")).status_code == 409


def test_ttl_comes_from_the_configuration(make_app, tenant_a):
    app = make_app(IDEMPOTENCY_TTL=60)
    client = app.test_client()
    assert (
        client.post("/v1/jobs", json=job_body(), headers=with_key(tenant_a, "short")).status_code
        == 201
    )
    with app.app_context(), database.connection_context():
        row = idempotency.IdempotencyKey.get(idempotency.IdempotencyKey.key == "short")
        assert (
            dt.timedelta(seconds=55) < row.expires_at - row.created_at <= dt.timedelta(seconds=60)
        )


def test_the_worker_starts_the_purge_pass(app):
    from app.background import periodic

    started = periodic.declared(app)
    assert any(
        job.func is idempotency.purge_expired_keys and job.queue == "default" for job in started
    )


@pytest.mark.slow
def test_concurrent_duplicates_on_gunicorn_make_one_record(gunicorn_server, app, tenant_a):  # noqa: F811
    base, _ = gunicorn_server()
    body = job_body(source_id="concurrent-idem")
    for round_number in range(5):
        key = f"race-{round_number}"
        body = job_body(source_id=f"concurrent-idem-{round_number}")

        def send(_):
            return requests.post(
                f"{base}/v1/jobs", json=body, headers=with_key(tenant_a, key), timeout=30
            )

        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            answers = list(pool.map(send, range(2)))
        statuses = sorted(answer.status_code for answer in answers)
        assert statuses in ([201, 201], [201, 409]), [a.text for a in answers]
        if statuses == [201, 201]:
            assert answers[0].content == answers[1].content
            assert sorted(a.headers.get("Idempotent-Replayed", "") for a in answers) == ["", "true"]
    assert counts(app, tenant_a)["jobs"] == 5


def test_openapi_documents_the_key_on_every_authenticated_v1_write_and_the_replayed_header(client):
    spec = client.get("/openapi.json").json
    writes = [
        (path, method, operation)
        for path, operations in spec["paths"].items()
        if path.startswith("/v1/")
        # read-only POSTs: tests/person/test_person_posts_ignore_idempotency_key.py
        and "/person/" not in path
        for method, operation in operations.items()
        if method in ("post", "put", "patch") and operation.get("security")
    ]
    assert len(writes) > 20
    for path, method, operation in writes:
        parameter = next(p for p in operation["parameters"] if p["name"] == "Idempotency-Key")
        assert parameter["in"] == "header" and parameter["required"] is False
        assert parameter["schema"]["maxLength"] == 255
        successes = [
            response
            for status, response in operation["responses"].items()
            if status.startswith("2")
        ]
        assert successes and all(
            "Idempotent-Replayed" in response["headers"] for response in successes
        ), (method, path)


# ---- MCP write tools: the optional idempotency_key argument
# ------------------------------------------------------


def test_mcp_write_tools_take_an_optional_idempotency_key(client, tenant_a):
    from tests.test_mcp_jobs import listed_tools

    tools = listed_tools(client, tenant_a)
    for name in ("create_job", "update_job", "start_instant_call"):
        schema = tools[name]["inputSchema"]
        assert schema["properties"]["idempotency_key"]["maxLength"] == 255
        assert "idempotency_key" not in schema.get("required", ())
    assert "idempotency_key" not in tools["get_job"]["inputSchema"]["properties"]


def test_mcp_create_job_with_a_key_runs_once(app, client, tenant_a):
    from tests.test_mcp_protocol import tool_result

    arguments = {**job_body(source_id="mcp-idem"), "idempotency_key": "agent-1"}
    first = tool_result(client, tenant_a, "create_job", arguments)
    again = tool_result(client, tenant_a, "create_job", arguments)
    assert first["isError"] is False and again == first
    assert counts(app, tenant_a)["jobs"] == 1
    other = tool_result(client, tenant_a, "create_job", {**arguments, "title": "Another"})
    assert other["isError"] is True and "another request" in other["content"][0]["text"]
    unkeyed = tool_result(
        client,
        tenant_a,
        "create_job",
        {k: v for k, v in arguments.items() if k != "idempotency_key"},
    )
    assert unkeyed["isError"] is True  # without the key it is a second create: the source_id's 409
    assert counts(app, tenant_a)["jobs"] == 1


def test_mcp_update_job_and_instant_call_with_a_key_run_once(app, client, tenant_a):
    from tests.test_mcp_protocol import tool_result

    application = call_factories.application_for(client, tenant_a)
    arguments = {"application_id": application["id"], "idempotency_key": "call-agent-1"}
    first = tool_result(client, tenant_a, "start_instant_call", arguments)
    assert first["isError"] is False, first
    before = counts(app, tenant_a)
    assert tool_result(client, tenant_a, "start_instant_call", arguments) == first
    assert counts(app, tenant_a) == before and before["calls"] == 1

    job_id = application["job"]["id"]
    update = {"job_id": job_id, "title": "Night Nurse", "idempotency_key": "update-1"}
    assert tool_result(client, tenant_a, "update_job", update) == tool_result(
        client, tenant_a, "update_job", update
    )
    bad_key = tool_result(client, tenant_a, "update_job", {**update, "idempotency_key": "x" * 256})
    assert bad_key["isError"] is True


def test_multipart_bodies_are_fingerprinted_by_their_fields_and_files(app, client, tenant_a):
    from tests.factories import candidate_body, pdf_bytes

    fields = candidate_body(source_id="mp-1")

    def form(text: str) -> dict:
        return {**fields, "file": (io.BytesIO(pdf_bytes(text)), "cv.pdf")}

    headers = with_key(tenant_a, "multipart-1")
    first = client.post(
        "/v1/candidates", data=form("Jane"), headers=headers, content_type="multipart/form-data"
    )
    assert first.status_code == 201, first.json
    again = client.post(
        "/v1/candidates", data=form("Jane"), headers=headers, content_type="multipart/form-data"
    )
    assert_replayed(first, again)
    other_file = client.post(
        "/v1/candidates", data=form("Joan"), headers=headers, content_type="multipart/form-data"
    )
    assert (
        other_file.status_code == 422 and "another request" in other_file.json["error"]["message"]
    )


def test_chunked_and_sized_framings_of_one_body_are_one_request(app, live_url, tenant_a):
    body = _json(job_body(source_id="chunked-idem"))
    headers = {**with_key(tenant_a, "chunked-1"), "Content-Type": "application/json"}
    chunked = requests.post(
        f"{live_url}/v1/jobs", data=iter([body[:10], body[10:]]), headers=headers, timeout=10
    )
    assert chunked.status_code == 201, chunked.text
    sized = requests.post(f"{live_url}/v1/jobs", data=body, headers=headers, timeout=10)
    assert sized.status_code == 201 and sized.headers["Idempotent-Replayed"] == "true"
    assert sized.content == chunked.content
    assert counts(app, tenant_a)["jobs"] == 1
