"""Delivery of one owed event to one webhook: claim, sign, send, log the attempt, then succeed, retry later or give up."""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import random
import time

import peewee as pw
from flask import current_app

from app.db import database, utcnow
from plugins.webhooks.egress import UnsafeTarget, check_target
from plugins.webhooks.models import (
    DELIVERY_CANCELED,
    DELIVERY_FAILED,
    DELIVERY_PENDING,
    DELIVERY_SUCCEEDED,
    TenantWebhook,
    WebhookAttempt,
    WebhookDelivery,
)
from plugins.webhooks.payloads import encode_body
from plugins.webhooks.signing import signature_headers
from plugins.webhooks.transport import Outcome, send

log = logging.getLogger("hirekit.webhooks")

VISIBILITY_WAIT_SECONDS = 1.0  # a job can start before the emitting transaction commits its delivery row
DUE_SLACK = dt.timedelta(seconds=1)
MAX_RETRY_AFTER_SECONDS = 24 * 3600


def retry_schedule() -> list[float]:
    return [float(seconds) for seconds in current_app.config["WEBHOOK_RETRY_SCHEDULE"]]


def retry_delay(failures: int, schedule: list[float], *, jitter: float, retry_after: float | None = None) -> float | None:
    """Seconds until the next attempt after `failures` failures in a row, or None when the schedule is spent."""
    if failures > len(schedule):
        return None
    delay = schedule[failures - 1] * (1 + random.uniform(0, jitter))
    if retry_after is not None:
        delay = max(delay, min(retry_after, MAX_RETRY_AFTER_SECONDS))
    return delay


def lease_length() -> dt.timedelta:
    config = current_app.config
    return dt.timedelta(seconds=float(config["WEBHOOK_TIMEOUT"]) + float(config["WEBHOOK_LEASE_GRACE"]))


@contextlib.contextmanager
def relaxed_durability():
    """While sending, commits do not wait for the disk on PostgreSQL (4-5 ms each otherwise). Safe here: losing a lease
    or an attempt record in a database crash only means the delivery is sent again, which at-least-once allows."""
    postgres = isinstance(database.obj, pw.PostgresqlDatabase) and not database.in_transaction()
    if postgres:
        database.execute_sql("SET synchronous_commit TO OFF")
    try:
        yield
    finally:
        if postgres and not database.is_closed():
            database.execute_sql("RESET synchronous_commit")


def claim(delivery_id: str, now: dt.datetime) -> bool:
    """Take the sender's lease on a pending, due delivery; False when it is done, not due, or being sent elsewhere."""
    claimed = (WebhookDelivery.update(claimed_until=now + lease_length())
               .where((WebhookDelivery.id == delivery_id) & (WebhookDelivery.status == DELIVERY_PENDING)
                      & (WebhookDelivery.next_attempt_at <= now + DUE_SLACK)
                      & (WebhookDelivery.claimed_until.is_null() | (WebhookDelivery.claimed_until < now)))
               .execute())
    return claimed == 1


# Only what a send needs: the hot path of every delivery
SEND_COLUMNS = (WebhookDelivery.id, WebhookDelivery.event_id, WebhookDelivery.event_type, WebhookDelivery.payload,
                WebhookDelivery.attempt_count, WebhookDelivery.failures_in_row, TenantWebhook.id, TenantWebhook.tenant,
                TenantWebhook.url, TenantWebhook.http_method, TenantWebhook.content_type, TenantWebhook.secret,
                TenantWebhook.is_active, TenantWebhook.is_deleted, TenantWebhook.failing_since)


def _exists(delivery_id: str) -> bool:
    return WebhookDelivery.select().where(WebhookDelivery.id == delivery_id).exists()


def deliver(delivery_id: str) -> str:
    """Send the delivery once if it is still owed; returns what happened (for logs and tests)."""
    with relaxed_durability():
        return _deliver(delivery_id)


def _deliver(delivery_id: str) -> str:
    now = utcnow()
    if not claim(delivery_id, now):
        deadline = time.monotonic() + VISIBILITY_WAIT_SECONDS
        while not _exists(delivery_id):
            if time.monotonic() > deadline:
                return "missing"  # rolled back, or committed later: then the reaper sends it
            time.sleep(0.02)
        now = utcnow()
        if not claim(delivery_id, now):
            return "skipped"
    delivery = (WebhookDelivery.select(*SEND_COLUMNS).join(TenantWebhook).where(WebhookDelivery.id == delivery_id).get())
    webhook = delivery.webhook
    if webhook.is_deleted or not webhook.is_active:
        reason = "webhook unsubscribed" if webhook.is_deleted else "webhook inactive"
        WebhookDelivery.update(status=DELIVERY_CANCELED, claimed_until=None, last_error=reason, next_attempt_at=None,
                               updated_at=utcnow()).where(WebhookDelivery.id == delivery.id).execute()
        return DELIVERY_CANCELED
    outcome = attempt(delivery, webhook, now)
    return record(delivery, webhook, outcome, now)


def attempt(delivery: WebhookDelivery, webhook: TenantWebhook, now: dt.datetime) -> Outcome:
    """One HTTP request with the configured method, content type and a fresh signature timestamp."""
    try:
        check_target(webhook.url, allow_private=current_app.config["WEBHOOK_ALLOW_PRIVATE"])
    except UnsafeTarget as exc:
        return Outcome(None, 0, error=f"refused: {exc}")
    body = encode_body(delivery.payload, webhook.content_type)
    headers = {"Content-Type": webhook.content_type, "X-Hirekit-Event": delivery.event_type,
               **signature_headers(webhook.secret, str(delivery.event_id), body, now)}
    return send(webhook.http_method, webhook.url, body, headers, timeout=float(current_app.config["WEBHOOK_TIMEOUT"]))


def record(delivery: WebhookDelivery, webhook: TenantWebhook, outcome: Outcome, started: dt.datetime) -> str:
    """Log the attempt and move the delivery (and, after long failure or a 410, the webhook) to its next state."""
    now = utcnow()
    number = delivery.attempt_count + 1
    changes = {"attempt_count": number, "claimed_until": None, "last_status_code": outcome.status_code,
               "last_error": outcome.error, "updated_at": now}
    webhook_changes: dict = {}
    delay = None
    if outcome.succeeded:
        changes.update(status=DELIVERY_SUCCEEDED, delivered_at=now, next_attempt_at=None, failures_in_row=0)
        if webhook.failing_since is not None:
            webhook_changes["failing_since"] = None
    else:
        failures = delivery.failures_in_row + 1
        gone = outcome.status_code == 410
        if not gone:
            delay = retry_delay(failures, retry_schedule(), jitter=float(current_app.config["WEBHOOK_RETRY_JITTER"]),
                                retry_after=outcome.retry_after)
        next_at = now + dt.timedelta(seconds=delay) if delay is not None else None
        changes.update(failures_in_row=failures, next_attempt_at=next_at,
                       status=DELIVERY_PENDING if next_at else DELIVERY_FAILED)
        failing_since = webhook.failing_since or started
        webhook_changes["failing_since"] = failing_since
        disable_after = dt.timedelta(seconds=float(current_app.config["WEBHOOK_DISABLE_AFTER"]))
        if gone:
            webhook_changes.update(is_active=False, disabled_reason="the receiver answered 410 Gone")
        elif now - failing_since >= disable_after:
            webhook_changes.update(is_active=False, disabled_reason=(
                f"deliveries have failed since {failing_since.isoformat(timespec='seconds')}Z "
                f"(last: {outcome.error or f'HTTP {outcome.status_code}'})"))
    with database.atomic():
        WebhookAttempt.insert(delivery=delivery.id, number=number, started_at=started, duration_ms=outcome.duration_ms,
                              status_code=outcome.status_code, error=outcome.error, response_body=outcome.response_body,
                              next_retry_at=changes.get("next_attempt_at") if not outcome.succeeded else None).execute()
        WebhookDelivery.update(**changes).where(WebhookDelivery.id == delivery.id).execute()
        if webhook_changes:
            webhook_changes["updated_at"] = now
            TenantWebhook.update(**webhook_changes).where(TenantWebhook.id == webhook.id).execute()
    if webhook_changes.get("is_active") is False:
        log.warning("webhook %s of tenant %s disabled: %s", webhook.id, webhook.tenant_id, webhook_changes["disabled_reason"])
    if delay is not None:
        schedule_retry(str(delivery.id), delay)
    return changes["status"]


def schedule_retry(delivery_id: str, delay: float) -> None:
    """RQ's scheduler sends it again after `delay`; without Redis, `flask webhooks reap` sends due retries."""
    from app.queue import get_queue
    from plugins.webhooks.tasks import enqueue_delivery

    if get_queue().is_inline:
        return
    enqueue_delivery(delivery_id, delay=dt.timedelta(seconds=delay))


def due_for_reaping(now: dt.datetime, grace: dt.timedelta):
    """Pending deliveries that should have been sent by now and that nobody holds: lost enqueues, dead workers."""
    return (WebhookDelivery.select(WebhookDelivery.id, WebhookDelivery.next_attempt_at)
            .where((WebhookDelivery.status == DELIVERY_PENDING) & (WebhookDelivery.next_attempt_at <= now - grace)
                   & (WebhookDelivery.claimed_until.is_null() | (WebhookDelivery.claimed_until < now)))
            .order_by(WebhookDelivery.next_attempt_at).limit(1000))


def reap(now: dt.datetime | None = None) -> int:
    """Enqueue every stalled delivery again (sending them now when there is no Redis); returns how many."""
    from app.queue import get_queue
    from plugins.webhooks.tasks import enqueue_delivery

    now = now or utcnow()
    inline = get_queue().is_inline
    grace = dt.timedelta(0) if inline else dt.timedelta(seconds=float(current_app.config["WEBHOOK_LEASE_GRACE"]))
    count = 0
    for row in list(due_for_reaping(now, grace)):
        bumped = (WebhookDelivery.update(next_attempt_at=now)
                  .where((WebhookDelivery.id == row.id) & (WebhookDelivery.next_attempt_at == row.next_attempt_at)
                         & (WebhookDelivery.status == DELIVERY_PENDING)).execute())
        if bumped:
            enqueue_delivery(str(row.id))
            count += 1
    if count:
        log.info("re-enqueued %d stalled webhook deliveries", count)
    return count

