"""Helpers for webhook tests: configure a webhook through the API, emit events, verify what a
receiver got, drive RQ."""

from __future__ import annotations

import json
import time
from urllib.parse import parse_qsl

from standardwebhooks import Webhook

from app.data import events
from app.data.db import database

APPLICATION_RECORD = {
    "id": "4b0c0d5e-0000-4000-8000-000000000001",
    "application_stage": "ACTIVE",
    "source_application_status": "new",
    "job_id": "4b0c0d5e-0000-4000-8000-0000000000aa",
}


def webhook_body(tenant, url, **overrides) -> dict:
    body = {
        "tenant_id": tenant.id,
        "triggered_event": "application_activty",
        "type": "post_call_screening",
        "fields": ["id", "application_stage"],
        "url": url,
        "http_method": "POST",
        "content_type": "application/json",
    }
    body.update(overrides)
    return body


def create_webhook(client, tenant, url, **overrides) -> dict:
    response = client.post(
        "/v1/tenant-webhook", json=webhook_body(tenant, url, **overrides), headers=tenant.headers
    )
    assert response.status_code == 201, response.json
    return response.json


def emit(app, tenant, event_type="application_activty", record=None):
    """Emit an event as a family's service would, committed before returning."""
    with app.app_context(), database.connection_context():
        return events.emit(tenant.id, event_type, record or dict(APPLICATION_RECORD))


def verified_payload(request, secret: str) -> dict:
    """The body a receiver got, after checking its Standard Webhooks signature (raises when it does
    not verify)."""
    body = request.get_data(as_text=True)
    Webhook(secret).verify(body, dict(request.headers), json_parse=False)
    if request.headers["Content-Type"] == "application/x-www-form-urlencoded":
        return dict(parse_qsl(body, keep_blank_values=True))
    return json.loads(body)


def work_until(
    app, done, *, timeout: float = 10.0, queues=("webhooks", "calls", "default")
) -> None:
    """Run RQ's SimpleWorker in burst mode (its scheduler included) until done() or timeout."""
    from rq import Queue, SimpleWorker

    queue = app.extensions["hirekit_queue"]
    deadline = time.monotonic() + timeout
    with app.app_context():
        while True:
            worker = SimpleWorker(
                [Queue(name, connection=queue.connection) for name in queues],
                connection=queue.connection,
            )
            worker.work(burst=True, with_scheduler=True)
            with database.connection_context():
                if done():
                    return
            if time.monotonic() > deadline:
                raise AssertionError("the worker did not get there in time")
            time.sleep(0.05)
