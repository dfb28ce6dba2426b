"""Delivery of one owed event to one webhook: claim, sign, send, log the attempt, then succeed,
retry later or give up."""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import random

from flask import current_app

from app.data.db import database, is_postgres, new_uuid, utcnow
from app.http.metrics import record_webhook_delivery
from plugins.webhooks import statements
from plugins.webhooks.egress import UnsafeTarget, pin_target
from plugins.webhooks.models import (
    DELIVERY_CANCELED,
    DELIVERY_FAILED,
    DELIVERY_PENDING,
    DELIVERY_SUCCEEDED,
    TenantWebhook,
    WebhookAttempt,
    WebhookDelivery,
)
from plugins.webhooks.payloads import encode_body, sample_payload
from plugins.webhooks.signing import signature_headers
from plugins.webhooks.transport import Outcome, send

log = logging.getLogger("hirekit.webhooks")

DUE_SLACK = dt.timedelta(seconds=1)
MAX_RETRY_AFTER_SECONDS = 24 * 3600


def retry_schedule() -> list[float]:
    return [float(seconds) for seconds in current_app.config["WEBHOOK_RETRY_SCHEDULE"]]


def retry_delay(
    failures: int, schedule: list[float], *, jitter: float, retry_after: float | None = None
) -> float | None:
    """Seconds until the next attempt after `failures` failures in a row, or None when the schedule
    is spent."""
    if failures > len(schedule):
        return None
    delay = schedule[failures - 1] * (1 + random.uniform(0, jitter))
    if retry_after is not None:
        delay = max(delay, min(retry_after, MAX_RETRY_AFTER_SECONDS))
    return delay


def lease_length() -> dt.timedelta:
    config = current_app.config
    return dt.timedelta(
        seconds=float(config["WEBHOOK_TIMEOUT"]) + float(config["WEBHOOK_LEASE_GRACE"])
    )


@contextlib.contextmanager
def relaxed_durability():
    """While sending, commits do not wait for the disk on PostgreSQL (4-5 ms each otherwise). Safe
    here: losing a lease or an attempt record in a database crash only means the delivery is sent
    again, which at-least-once allows."""
    postgres = is_postgres() and not database.in_transaction()
    if postgres:
        database.execute_sql("SET synchronous_commit TO OFF")
    try:
        yield
    finally:
        if postgres and not database.is_closed():
            database.execute_sql("RESET synchronous_commit")


WEBHOOK_COLUMNS = (
    TenantWebhook.id,
    TenantWebhook.tenant,
    TenantWebhook.url,
    TenantWebhook.http_method,
    TenantWebhook.content_type,
    TenantWebhook.secret,
    TenantWebhook.is_active,
    TenantWebhook.is_deleted,
    TenantWebhook.failing_since,
    TenantWebhook.previous_secret,
    TenantWebhook.previous_secret_until,
)


def claim_for_send(delivery_id: str, now: dt.datetime) -> WebhookDelivery | None:
    """Take the sender's lease on a pending, due, unheld delivery and read what sending it needs, in
    one statement."""
    return statements.claim(
        delivery_id, now, lease_until=now + lease_length(), due_by=now + DUE_SLACK
    )


def load_webhook(webhook_id) -> TenantWebhook | None:
    return TenantWebhook.select(*WEBHOOK_COLUMNS).where(TenantWebhook.id == webhook_id).first()


def _exists(delivery_id: str) -> bool:
    return WebhookDelivery.select().where(WebhookDelivery.id == delivery_id).exists()


def deliver(delivery_id: str, webhook: TenantWebhook | None = None) -> str:
    """Send the delivery once if it is still owed; returns what happened (for logs and tests)."""
    with relaxed_durability():
        return send_owed(delivery_id, webhook)


def send_owed(delivery_id: str, webhook: TenantWebhook | None) -> str:
    """Claim, send and record one delivery; `webhook` (already loaded by a drain) saves a query per
    send. A delivery is named to a sender only once its row has committed (app.background.queue), so
    it is read at once, never waited for."""
    now = utcnow()
    delivery = claim_for_send(delivery_id, now)
    if delivery is None:
        # skipped: sent already, not due, or held by another sender; missing: deleted since it was
        # named
        return "skipped" if _exists(delivery_id) else "missing"
    if webhook is None or webhook.id != delivery.webhook_id:
        webhook = load_webhook(delivery.webhook_id)
    if webhook.is_deleted or not webhook.is_active:
        reason = "webhook unsubscribed" if webhook.is_deleted else "webhook inactive"
        WebhookDelivery.update(
            status=DELIVERY_CANCELED,
            claimed_until=None,
            last_error=reason,
            next_attempt_at=None,
            updated_at=utcnow(),
        ).where(WebhookDelivery.id == delivery.id).execute()
        return DELIVERY_CANCELED
    outcome = attempt(delivery, webhook, now)
    return record(delivery, webhook, outcome, now)


def attempt(delivery: WebhookDelivery, webhook: TenantWebhook, now: dt.datetime) -> Outcome:
    """One HTTP request with the configured method, content type and a fresh signature timestamp."""
    # resolved and checked once; the request connects to the checked address, not to a second lookup
    try:
        target = pin_target(webhook.url, allow_private=current_app.config["WEBHOOK_ALLOW_PRIVATE"])
    except UnsafeTarget as exc:
        return Outcome(None, 0, error=f"refused: {exc}")
    body = encode_body(delivery.payload, webhook.content_type)
    headers = {
        "Content-Type": webhook.content_type,
        "X-Hirekit-Event": delivery.event_type,
        **signature_headers(
            webhook.secret, str(delivery.event_id), body, now, previous_secret(webhook, now)
        ),
    }
    return send(
        webhook.http_method,
        target,
        body,
        headers,
        timeout=float(current_app.config["WEBHOOK_TIMEOUT"]),
    )


def send_test(webhook: TenantWebhook) -> tuple[WebhookDelivery, WebhookAttempt]:
    """A signed test event of the webhook's event type, sent once now through attempt(), whatever
    the webhook's state (an inactive or unsubscribed webhook is when people debug), then logged as a
    delivery with its one attempt.

    Never retried, and never counted towards disabling the webhook: a test is the integrator's
    probe, not an event."""
    now = utcnow()
    delivery = WebhookDelivery(
        id=new_uuid(),
        tenant=webhook.tenant_id,
        webhook=webhook.id,
        event_id=new_uuid(),
        event_type=webhook.triggered_event,
        payload=sample_payload(webhook.triggered_event, webhook.fields, now),
    )
    outcome = attempt(delivery, webhook, now)
    delivery.status = DELIVERY_SUCCEEDED if outcome.succeeded else DELIVERY_FAILED
    delivery.attempt_count, delivery.failures_in_row = 1, 0 if outcome.succeeded else 1
    delivery.next_attempt_at = None
    delivery.last_status_code, delivery.last_error = outcome.status_code, outcome.error
    delivery.delivered_at = utcnow() if outcome.succeeded else None
    with database.atomic():
        delivery.save(force_insert=True)
        logged = WebhookAttempt.create(
            delivery=delivery.id,
            number=1,
            started_at=now,
            duration_ms=outcome.duration_ms,
            status_code=outcome.status_code,
            error=outcome.error,
            response_body=outcome.response_body,
            next_retry_at=None,
        )
    return delivery, logged


def previous_secret(webhook: TenantWebhook, now: dt.datetime) -> str | None:
    """The secret replaced by a rotation, while its overlap lasts."""
    until = webhook.previous_secret_until
    return webhook.previous_secret if until is not None and now < until else None


def record(
    delivery: WebhookDelivery, webhook: TenantWebhook, outcome: Outcome, started: dt.datetime
) -> str:
    """Log the attempt and move the delivery (and, after long failure or a 410, the webhook) to its
    next state."""
    now = utcnow()
    webhook_changes: dict = {}
    if outcome.succeeded:
        status, next_at, failures, delivered_at = DELIVERY_SUCCEEDED, None, 0, now
        if webhook.failing_since is not None:
            webhook_changes["failing_since"] = None
    else:
        failures, delivered_at = delivery.failures_in_row + 1, None
        gone = outcome.status_code == 410
        delay = (
            None
            if gone
            else retry_delay(
                failures,
                retry_schedule(),
                jitter=float(current_app.config["WEBHOOK_RETRY_JITTER"]),
                retry_after=outcome.retry_after,
            )
        )
        next_at = now + dt.timedelta(seconds=delay) if delay is not None else None
        status = DELIVERY_PENDING if next_at else DELIVERY_FAILED
        failing_since = webhook.failing_since or started
        if webhook.failing_since is None:
            webhook_changes["failing_since"] = failing_since
        disable_after = dt.timedelta(seconds=float(current_app.config["WEBHOOK_DISABLE_AFTER"]))
        if gone:
            webhook_changes.update(
                is_active=False, disabled_reason="the receiver answered 410 Gone"
            )
        elif now - failing_since >= disable_after:
            webhook_changes.update(
                is_active=False,
                disabled_reason=(
                    f"deliveries have failed since {failing_since.isoformat(timespec='seconds')}Z "
                    f"(last: {outcome.error or f'HTTP {outcome.status_code}'})"
                ),
            )

    def update_webhook():
        TenantWebhook.update(**webhook_changes, updated_at=now).where(
            TenantWebhook.id == webhook.id
        ).execute()

    statements.record_attempt(
        delivery.id,
        number=delivery.attempt_count + 1,
        started_at=started,
        duration_ms=outcome.duration_ms,
        status_code=outcome.status_code,
        error=outcome.error,
        response_body=outcome.response_body,
        next_retry_at=next_at,
        status=status,
        next_attempt_at=next_at,
        failures_in_row=failures,
        delivered_at=delivered_at,
        now=now,
        also=update_webhook if webhook_changes else None,
    )
    # a drain sends the webhook's next delivery with this same object
    for name, value in webhook_changes.items():
        setattr(webhook, name, value)
    record_webhook_delivery(
        "delivered" if outcome.succeeded else "retrying" if next_at else "failed"
    )
    if webhook_changes.get("is_active") is False:
        record_webhook_delivery("disabled")
        log.warning(
            "webhook %s of tenant %s disabled: %s",
            webhook.id,
            webhook.tenant_id,
            webhook_changes["disabled_reason"],
        )
    return status
