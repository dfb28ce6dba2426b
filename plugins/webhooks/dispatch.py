"""Who sends a webhook's deliveries, decided in one place: new ones soon after their transaction
commits, stalled ones again (the reaper). Jobs are named, never imported: this module sits below
plugins.webhooks.tasks."""

from __future__ import annotations

import datetime as dt
import logging

from flask import current_app

from app.data.db import utcnow
from app.background.queue import enqueue_each, get_queue
from plugins.webhooks import wakeups
from plugins.webhooks.models import DELIVERY_PENDING, WebhookDelivery

log = logging.getLogger("hirekit.webhooks")

DELIVER_JOB = "plugins.webhooks.tasks.deliver_webhook"


def send_soon(webhook_id: str, delivery_ids: list[str]) -> None:
    """New or replayed deliveries of a webhook, sent once the transaction that made them commits
    (never when it rolls back): inline one at a time; on Redis through the webhook's mailbox, which
    one drain job empties (the mailbox must not name deliveries that roll back, so it is written
    after the commit too)."""
    enqueue_each(
        DELIVER_JOB,
        [(delivery_id,) for delivery_id in delivery_ids],
        queue=wakeups.QUEUE,
        batched=lambda: wakeups.post(webhook_id, delivery_ids),
    )


def due_for_reaping(now: dt.datetime, grace: dt.timedelta):
    """Pending deliveries that should have been sent by now and that nobody holds: lost wake-ups,
    dead workers."""
    return (
        WebhookDelivery.select(
            WebhookDelivery.id, WebhookDelivery.webhook, WebhookDelivery.next_attempt_at
        )
        .where(
            (WebhookDelivery.status == DELIVERY_PENDING)
            & (WebhookDelivery.next_attempt_at <= now - grace)
            & (WebhookDelivery.claimed_until.is_null() | (WebhookDelivery.claimed_until < now))
        )
        .order_by(WebhookDelivery.next_attempt_at)
        .limit(1000)
    )


def reap(now: dt.datetime | None = None) -> int:
    """Send every stalled delivery again: one at a time inline, a drain per webhook on Redis;
    returns how many."""
    now = now or utcnow()
    grace = get_queue().grace(float(current_app.config["WEBHOOK_LEASE_GRACE"]))
    stalled: dict[str, list[str]] = {}
    for row in list(due_for_reaping(now, grace)):
        bumped = (
            WebhookDelivery.update(next_attempt_at=now)
            .where(
                (WebhookDelivery.id == row.id)
                & (WebhookDelivery.next_attempt_at == row.next_attempt_at)
                & (WebhookDelivery.status == DELIVERY_PENDING)
            )
            .execute()
        )
        if bumped:
            stalled.setdefault(str(row.webhook_id), []).append(str(row.id))

    def drain_each_webhook():
        for webhook_id in stalled:
            wakeups.enqueue_drain(webhook_id)

    enqueue_each(
        DELIVER_JOB,
        [(delivery_id,) for ids in stalled.values() for delivery_id in ids],
        queue=wakeups.QUEUE,
        batched=drain_each_webhook,
    )
    count = sum(len(ids) for ids in stalled.values())
    if count:
        log.info("picked up %d stalled webhook deliveries of %d webhook(s)", count, len(stalled))
    return count
