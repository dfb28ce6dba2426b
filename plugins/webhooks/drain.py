"""One sender pass over a webhook: its due deliveries from the table, then new ones from the
mailbox, until both are empty or the pass has run its time budget; then a wake-up for the earliest
retry.

One RQ job per delivery costs more in Redis round trips than the HTTP request itself; a pass sends
hundreds of deliveries for one job. Each send still claims its own row (a lease as long as one
request may take), so a worker killed mid-pass leaves at most one delivery held, which the reaper
re-sends when the lease runs out (at least once).
"""

from __future__ import annotations

import datetime as dt
import logging
import time

from app.data.db import utcnow
from plugins.webhooks import wakeups
from plugins.webhooks.delivery import load_webhook, relaxed_durability, send_owed
from plugins.webhooks.models import DELIVERY_PENDING, WebhookDelivery

log = logging.getLogger("hirekit.webhooks")

DUE_BATCH = 500


def due_ids(webhook_id: str, now: dt.datetime, limit: int = DUE_BATCH) -> list[str]:
    """The webhook's deliveries that are due and held by nobody, oldest due first (retries keep
    their order)."""
    rows = (
        WebhookDelivery.select(WebhookDelivery.id)
        .where(
            (WebhookDelivery.webhook == webhook_id)
            & (WebhookDelivery.status == DELIVERY_PENDING)
            & (WebhookDelivery.next_attempt_at <= now)
            & (WebhookDelivery.claimed_until.is_null() | (WebhookDelivery.claimed_until < now))
        )
        .order_by(WebhookDelivery.next_attempt_at, WebhookDelivery.created_at)
        .limit(limit)
        .tuples()
    )
    return [str(delivery_id) for (delivery_id,) in rows]


def next_retry_at(webhook_id: str, after: dt.datetime) -> dt.datetime | None:
    """When the webhook's earliest delivery due later than `after` falls due (naive UTC), or
    None."""
    return (
        WebhookDelivery.select(WebhookDelivery.next_attempt_at)
        .where(
            (WebhookDelivery.webhook == webhook_id)
            & (WebhookDelivery.status == DELIVERY_PENDING)
            & (WebhookDelivery.next_attempt_at > after)
        )
        .order_by(WebhookDelivery.next_attempt_at)
        .limit(1)
        .scalar()
    )


def drain(webhook_id: str, *, wakeup: str | None = None) -> int:
    """Send what the webhook is owed; returns how many sends were made. Runs in a worker, on Redis
    only."""
    if wakeup is not None:
        wakeups.woke_up(webhook_id, wakeup)
    try:
        with relaxed_durability():
            sent, finished_at = send_pass(webhook_id)
    except BaseException:
        # the next emitter rings again; the reaper finds whatever was taken and not sent
        wakeups.release(webhook_id)
        raise
    if finished_at is not None:
        schedule_next_retry(webhook_id, finished_at)
    return sent


def send_pass(webhook_id: str) -> tuple[int, dt.datetime | None]:
    """(sends made, when the pass found nothing due) - None when it handed over to a fresh job
    instead.

    Nothing due at that moment and the retries due after it (schedule_next_retry) cover every unheld
    pending delivery: a retry falling due while the pass ends is in one set or the other, never lost
    between them."""
    deadline = time.monotonic() + wakeups.DRAIN_BUDGET_SECONDS
    sent = 0
    pending = due_ids(webhook_id, utcnow())
    while True:
        taken = set(pending)
        pending += [i for i in wakeups.take_mail(webhook_id) if i not in taken]
        if not pending:
            now = utcnow()
            pending = due_ids(webhook_id, now)
            if not pending and wakeups.may_leave(webhook_id):
                return sent, now
            continue
        webhook = load_webhook(webhook_id)
        if webhook is None:  # deleted with its deliveries
            wakeups.release(webhook_id)
            return sent, None
        for position, delivery_id in enumerate(pending):
            if send_owed(delivery_id, webhook) not in ("skipped", "missing"):
                sent += 1
            if time.monotonic() > deadline:
                hand_over(webhook_id, pending[position + 1 :])
                return sent, None
        pending = []


def hand_over(webhook_id: str, remaining: list[str]) -> None:
    """Out of time: leave the remaining ids for a fresh drain job (this pass still holds the
    doorbell for it)."""
    if remaining:
        wakeups.post(webhook_id, remaining)
    wakeups.enqueue_drain(webhook_id)


def schedule_next_retry(webhook_id: str, after: dt.datetime) -> None:
    at = next_retry_at(webhook_id, after)
    if at is not None:
        wakeups.schedule_wakeup(webhook_id, at)
