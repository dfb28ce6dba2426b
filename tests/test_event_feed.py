"""GET /v1/events: every event a webhook delivered can be pulled again, with the same id and
payload, tenant-scoped."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from app.data.db import database, utcnow
from app.data.tenancy import create_tenant
from plugins.applications.services import APPLICATION_ACTIVITY
from plugins.calls.lifecycle import CALL_ACTIVITY
from plugins.webhooks.payloads import record_fields
from tests.conftest import TenantKeys
from tests.factories import candidate_body, create_job
from tests.tenant_records import ok


def pull_feed(client, tenant, size=2, **filters) -> list[dict]:
    """Every event of the feed, page by page through next_after."""
    events, after = [], None
    while True:
        query = {"size": size, **filters, **({"after": after} if after else {})}
        body = ok(client.get("/v1/events", query_string=query, headers=tenant.headers))
        if not body["data"]:
            return events
        events += body["data"]
        after = body["next_after"]


@pytest.fixture
def receiver(httpserver):
    httpserver.expect_request("/hook").respond_with_data("received")
    return httpserver


def make_activity(client, tenant) -> None:
    """Application and call activity: a create, a change and an instant call."""
    job = create_job(client, tenant)
    candidate = ok(
        client.post("/v1/candidates", json=candidate_body(), headers=tenant.headers), 201
    )
    application = ok(
        client.post(
            "/v1/applications",
            headers=tenant.headers,
            json={
                "candidate_source_id": candidate["source_id"],
                "job_source_id": job["source_id"],
                "source_application_status": "applied",
                "application_stage": "ACTIVE",
            },
        ),
        201,
    )
    ok(
        client.patch(
            f"/v1/applications/{application['id']}",
            headers=tenant.headers,
            json={"source_application_status": "screening", "application_stage": "ACTIVE"},
        )
    )
    ok(
        client.post(f"/v1/applications/{application['id']}/instant-call", headers=tenant.headers),
        202,
    )


def test_every_delivered_event_is_in_the_feed_with_its_id_and_payload(
    client, tenant_a, tenant_b, receiver
):
    for event_type in (APPLICATION_ACTIVITY, CALL_ACTIVITY):
        with client.application.app_context():  # the event types are the app's families'
            fields = sorted(record_fields(event_type))
        ok(
            client.post(
                "/v1/tenant-webhook",
                headers=tenant_a.headers,
                json={
                    "tenant_id": tenant_a.id,
                    "triggered_event": event_type,
                    "type": "post_call_screening",
                    "fields": fields,
                    "url": receiver.url_for("/hook"),
                    "http_method": "POST",
                    "content_type": "application/json",
                },
            ),
            201,
        )
    make_activity(client, tenant_a)
    make_activity(client, tenant_b)
    delivered = {
        request.headers["webhook-id"]: json.loads(request.get_data(as_text=True))
        for request, _ in receiver.log
    }
    assert len(delivered) >= 3
    feed = pull_feed(client, tenant_a)
    by_id = {event["id"]: event for event in feed}
    assert len(by_id) == len(feed)
    for event_id, payload in delivered.items():
        assert event_id in by_id, event_id
        assert by_id[event_id]["payload"] == payload
    assert {event["type"] for event in feed} == {APPLICATION_ACTIVITY, CALL_ACTIVITY}
    assert [event["created_at"] for event in feed] == sorted(event["created_at"] for event in feed)
    calls_only = pull_feed(client, tenant_a, size=100, type=CALL_ACTIVITY)
    assert calls_only and [e["id"] for e in calls_only] == [
        e["id"] for e in feed if e["type"] == CALL_ACTIVITY
    ]
    assert not set(by_id) & {event["id"] for event in pull_feed(client, tenant_b)}


def test_the_feed_refuses_another_tenants_or_a_tampered_position(client, tenant_a, tenant_b):
    make_activity(client, tenant_a)
    after = ok(client.get("/v1/events?size=1", headers=tenant_a.headers))["next_after"]
    for tenant, position in ((tenant_b, after), (tenant_a, after[:-3] + "AAA"), (tenant_a, "17")):
        response = client.get(
            "/v1/events", query_string={"after": position}, headers=tenant.headers
        )
        assert response.status_code == 400 and response.json["error"]["type"] == "invalid_cursor"
    for query in ({"size": 0}, {"size": 101}, {"type": "job.updated"}):
        assert (
            client.get("/v1/events", query_string=query, headers=tenant_a.headers).status_code
            == 422
        )


def test_events_older_than_the_retention_are_not_served(make_app):
    app = make_app(EVENT_RETENTION=0)
    with app.app_context(), database.connection_context():
        _, key = create_tenant("tenant-r")
    tenant = TenantKeys("tenant-r", key)
    client = app.test_client()
    make_activity(client, tenant)
    assert ok(client.get("/v1/events", headers=tenant.headers))["data"] == []


def test_retention_is_days_and_the_worker_purges_older_events_oldest_first(make_app, monkeypatch):
    from app.data import events
    from app.background import periodic
    from app.config import load_config
    from app.data.events import Event

    assert load_config(environ={"HIREKIT_EVENT_RETENTION_DAYS": "7"})["EVENT_RETENTION_DAYS"] == 7.0
    app = make_app(EVENT_RETENTION_DAYS=2)
    with app.app_context(), database.connection_context():
        assert events.retention() == dt.timedelta(days=2)
        _, key = create_tenant("tenant-p")
    tenant = TenantKeys("tenant-p", key)
    client = app.test_client()
    for _ in range(3):
        make_activity(client, tenant)
    with app.app_context(), database.connection_context():
        stored = list(Event.select().where(Event.tenant == "tenant-p").order_by(Event.sequence))
        old, kept = stored[:7], stored[7:]
        Event.update(created_at=utcnow() - dt.timedelta(days=2, minutes=1)).where(
            Event.sequence.in_([event.sequence for event in old])
        ).execute()
        monkeypatch.setattr(events, "PURGE_BATCH", 3)  # several batches
        assert events.purge_expired() == 7
        assert events.purge_expired() == 0
        left = [
            event.event_id
            for event in Event.select().where(Event.tenant == "tenant-p").order_by(Event.sequence)
        ]
        assert left == [event.event_id for event in kept]
        assert any(
            job.func is events.purge_expired_events
            and job.interval_setting == "EVENT_PURGE_INTERVAL"
            for job in periodic.declared(app)
        )
    assert [event["id"] for event in pull_feed(client, tenant, size=50)] == [
        str(event.event_id) for event in kept
    ]


def test_a_negative_retention_stops_start_up(make_app):
    with pytest.raises(ValueError, match="EVENT_RETENTION_DAYS"):
        make_app(EVENT_RETENTION_DAYS=-1)
