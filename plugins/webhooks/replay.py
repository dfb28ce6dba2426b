"""Replay after an outage: a span of the webhook's past events queued again as new deliveries, each
carrying the event's own id as webhook-id so receivers de-duplicate.

One replay per webhook at a time. The lock is a column of the webhook's row (`replay_until`), taken
by one conditional UPDATE (atomic on SQLite and PostgreSQL alike, whoever runs the job: a worker or
the request itself), extended while the replay queues its deliveries, cleared when it is done, and
expiring on its own if the replay dies.
"""

from __future__ import annotations

import datetime as dt

from flask import current_app

from app.data.db import database, new_uuid, utcnow
from app.data.events import Event, retained_since
from plugins.webhooks.dispatch import send_soon
from plugins.webhooks.models import TenantWebhook, WebhookDelivery
from plugins.webhooks.payloads import select_fields

BATCH = 100  # deliveries made (and their sends started) per transaction


def lock_length() -> dt.timedelta:
    return dt.timedelta(seconds=float(current_app.config["WEBHOOK_REPLAY_LOCK_SECONDS"]))


def earliest_replayable(now: dt.datetime) -> dt.datetime:
    """Events older than the retention are not replayed."""
    return retained_since(now)


def take_lock(webhook_id, now: dt.datetime) -> bool:
    """Hold the webhook's replay lock for lock_length(); False when another replay holds it (and has
    not let it lapse)."""
    return bool(
        TenantWebhook.update(replay_until=now + lock_length())
        .where(
            (TenantWebhook.id == webhook_id)
            & (TenantWebhook.replay_until.is_null() | (TenantWebhook.replay_until < now))
        )
        .execute()
    )


def extend_lock(webhook_id) -> None:
    TenantWebhook.update(replay_until=utcnow() + lock_length()).where(
        TenantWebhook.id == webhook_id
    ).execute()


def release_lock(webhook_id) -> None:
    TenantWebhook.update(replay_until=None).where(TenantWebhook.id == webhook_id).execute()


def events_in_span(webhook: TenantWebhook, since: dt.datetime, until: dt.datetime):
    """The tenant's events of the webhook's type created in [since, until), in the order they
    happened."""
    return (
        Event.select(Event.sequence, Event.event_id, Event.payload)
        .where(
            (Event.tenant == webhook.tenant_id)
            & (Event.type == webhook.triggered_event)
            & (Event.created_at >= since)
            & (Event.created_at < until)
        )
        .order_by(Event.sequence)
    )


def replay(webhook_id: str, since: dt.datetime, until: dt.datetime) -> int:
    """Queue every event of the span as a new delivery, a batch per transaction whose sends start
    once it commits; returns how many. Runs as the replay job, holding the lock its request took,
    and lets it go at the end."""
    webhook = TenantWebhook.get_or_none(TenantWebhook.id == webhook_id)
    if webhook is None:  # deleted meanwhile, with its deliveries
        return 0
    queued, after = 0, 0
    try:
        while True:
            events = list(
                events_in_span(webhook, since, until).where(Event.sequence > after).limit(BATCH)
            )
            if not events:
                return queued
            rows = [
                {
                    "id": new_uuid(),
                    "tenant": webhook.tenant_id,
                    "webhook": webhook.id,
                    "event_id": event.event_id,
                    "event_type": webhook.triggered_event,
                    "payload": select_fields(event.payload, webhook.fields),
                }
                for event in events
            ]
            with database.atomic():
                extend_lock(webhook.id)
                WebhookDelivery.insert_many(rows).execute()
                send_soon(str(webhook.id), [str(row["id"]) for row in rows])
            queued += len(rows)
            after = events[-1].sequence
    finally:
        release_lock(webhook.id)
