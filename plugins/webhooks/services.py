"""Tenant webhook operations: configure, subscribe/unsubscribe, fan events out to deliveries, read
the log, redeliver, send a test event, replay a span of events."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

from flask import current_app

from app.http import listing
from app.data.db import database, utcnow
from app.errors import ApiError, Conflict, ValidationFailed
from app.data.events import Event, retention
from app.security.limits import hit_tenant_limit
from app.background.queue import enqueue
from app.data.records import get_or_404, get_owned, select_rows
from plugins.webhooks import delivery as sending
from plugins.webhooks import replay
from plugins.webhooks.dispatch import send_soon
from plugins.webhooks.egress import UnsafeTarget, check_target
from plugins.webhooks.models import (
    DELIVERY_PENDING,
    DELIVERY_SUCCEEDED,
    TenantWebhook,
    WebhookAttempt,
    WebhookDelivery,
)
from plugins.webhooks.payloads import select_fields
from plugins.webhooks.signing import generate_secret
from plugins.webhooks.wakeups import QUEUE


def list_webhooks(tenant_id: str, **args) -> dict:
    """The tenant's webhooks, oldest first, or cursor pages of them
    (app.http.listing.WholeListArgsSchema)."""
    return listing.answer_whole(
        TenantWebhook.owned_by(tenant_id),
        args,
        tenant_id=tenant_id,
        list_name="tenant-webhooks",
        filters={},
        order_by=(TenantWebhook.created_at, TenantWebhook.id),
    )


def get_webhook(tenant_id: str, webhook_id) -> TenantWebhook:
    return get_owned(TenantWebhook, tenant_id, webhook_id)


def save_webhook(tenant_id: str, values: dict) -> tuple[TenantWebhook, bool]:
    """Create the tenant's webhook for the event, or update it (one per event); returns (webhook,
    created)."""
    if values.pop("tenant_id") != tenant_id:
        raise ApiError(403, "tenant_id must be your own tenant's id.")
    check_url(values["url"])
    secret = values.pop("secret")
    is_active = values.pop("is_active")
    with database.atomic():
        webhook = (
            TenantWebhook.owned_by(tenant_id)
            .where(TenantWebhook.triggered_event == values["triggered_event"])
            .first()
        )
        created = webhook is None
        if created:
            webhook = TenantWebhook(tenant=tenant_id, secret=secret or generate_secret())
            revealed = webhook.secret
        else:
            revealed = secret
            if secret is not None and secret != webhook.secret:
                rotate_secret(webhook, secret)
        for name, value in values.items():
            setattr(webhook, name, value)
        if is_active is not None:
            webhook.is_active = is_active
        if webhook.is_active:
            webhook.disabled_reason = None
            webhook.failing_since = None
        webhook.save(force_insert=created)
    if revealed:
        webhook.revealed_secret = revealed
    return webhook, created


def check_url(url: str) -> None:
    """422 on `url` unless webhooks may be sent there (egress checks it again before every send)."""
    try:
        check_target(url, allow_private=current_app.config["WEBHOOK_ALLOW_PRIVATE"])
    except UnsafeTarget as exc:
        raise ValidationFailed({"url": [str(exc)[0].upper() + str(exc)[1:] + "."]}) from None


def rotate_secret(webhook: TenantWebhook, secret: str) -> None:
    """A new secret signs from now on; the old one keeps signing too for WEBHOOK_SECRET_OVERLAP
    seconds."""
    if webhook.secret:
        webhook.previous_secret = webhook.secret
        webhook.previous_secret_until = utcnow() + dt.timedelta(
            seconds=float(current_app.config["WEBHOOK_SECRET_OVERLAP"])
        )
    webhook.secret = secret


def set_subscribed(tenant_id: str, webhook_id, subscribed: bool) -> TenantWebhook:
    """subscribe: is_deleted false; unsubscribe: is_deleted true. Events in between are never
    replayed."""
    webhook = get_webhook(tenant_id, webhook_id)
    if subscribed:
        # configured before the rules tightened, or its name now points somewhere private
        check_url(webhook.url)
    if webhook.is_deleted == subscribed:
        webhook.is_deleted = not subscribed
        webhook.save()
    return webhook


def fan_out(event: Event) -> None:
    """events listener: a delivery row per active webhook for the event, in the emitting
    transaction, then a send job."""
    # what a delivery takes of its webhook
    webhooks = select_rows(
        TenantWebhook,
        {
            TenantWebhook.tenant: event.tenant_id,
            TenantWebhook.triggered_event: event.type,
            TenantWebhook.is_active: True,
            TenantWebhook.is_deleted: False,
        },
        (TenantWebhook.id, TenantWebhook.fields),
    )
    created = [
        WebhookDelivery.create(
            tenant=event.tenant_id,
            webhook=webhook.id,
            event_id=event.event_id,
            event_type=event.type,
            payload=select_fields(event.payload, webhook.fields),
        )
        for webhook in webhooks
    ]
    for delivery in created:
        send_soon(str(delivery.webhook_id), [str(delivery.id)])


def list_deliveries(tenant_id: str, webhook_id, **args) -> dict:
    """The webhook's deliveries, newest first (or by cursor), each with its attempts; filtered by
    status, event and creation time."""
    window, filters = listing.split_window(args)
    status, event_id, since = filters.get("status"), filters.get("event_id"), filters.get("since")
    webhook = get_webhook(tenant_id, webhook_id)
    query = WebhookDelivery.select().where(WebhookDelivery.webhook == webhook.id)
    if status:
        query = query.where(WebhookDelivery.status == status)
    if event_id is not None:
        query = query.where(WebhookDelivery.event_id == event_id)
    if since is not None:
        query = query.where(WebhookDelivery.created_at >= since)
    result = listing.answer(
        query,
        window,
        tenant_id=tenant_id,
        list_name=f"deliveries/{webhook.id}",
        filters=filters,
        order_by=(WebhookDelivery.created_at.desc(), WebhookDelivery.id.desc()),
    )
    attach_attempts(result["data"])
    return result


def attach_attempts(deliveries: list[WebhookDelivery]) -> None:
    by_delivery = defaultdict(list)
    if deliveries:
        attempts = (
            WebhookAttempt.select()
            .where(WebhookAttempt.delivery.in_([d.id for d in deliveries]))
            .order_by(WebhookAttempt.number)
        )
        for attempt in attempts:
            by_delivery[attempt.delivery_id].append(attempt)
    for delivery in deliveries:
        delivery.attempt_log = by_delivery[delivery.id]


def get_delivery(tenant_id: str, delivery_id) -> WebhookDelivery:
    return get_or_404(
        WebhookDelivery, delivery_id, WebhookDelivery.tenant == tenant_id, label="webhook delivery"
    )


def redeliver(tenant_id: str, delivery_id) -> WebhookDelivery:
    """Send a delivery again now with the same webhook-id, starting the retry schedule afresh."""
    delivery = get_delivery(tenant_id, delivery_id)
    webhook = delivery.webhook
    require_deliverable(webhook, "redelivering")
    now = utcnow()
    reset = (
        WebhookDelivery.update(
            status=DELIVERY_PENDING, failures_in_row=0, next_attempt_at=now, updated_at=now
        )
        .where(
            (WebhookDelivery.id == delivery.id)
            & (WebhookDelivery.claimed_until.is_null() | (WebhookDelivery.claimed_until < now))
        )
        .execute()
    )
    if not reset:
        raise Conflict("The delivery is being sent right now; read the log again in a moment.")
    send_soon(str(webhook.id), [str(delivery.id)])
    delivery = get_delivery(tenant_id, delivery.id)
    attach_attempts([delivery])
    return delivery


def require_deliverable(webhook: TenantWebhook, action: str) -> None:
    """409 unless the webhook is subscribed and active: what it is sent would only be canceled."""
    if webhook.is_deleted or not webhook.is_active:
        raise Conflict(
            f"The webhook is unsubscribed or inactive; subscribe or re-activate it before {action}."
        )


def send_test_event(tenant_id: str, webhook_id) -> dict:
    """Send a signed test event now, whatever the webhook's state, and answer the attempt it got."""
    webhook = get_webhook(tenant_id, webhook_id)
    delivery, attempt = sending.send_test(webhook)
    return {
        "succeeded": delivery.status == DELIVERY_SUCCEEDED,
        "delivery_id": delivery.id,
        "event_id": delivery.event_id,
        "event_type": delivery.event_type,
        "payload": delivery.payload,
        "number": attempt.number,
        "started_at": attempt.started_at,
        "duration_ms": attempt.duration_ms,
        "status_code": attempt.status_code,
        "error": attempt.error,
        "response_body": attempt.response_body,
        "next_retry_at": None,
    }


def start_replay(tenant_id: str, webhook_id, since: dt.datetime, until: dt.datetime | None) -> dict:
    """Queue the webhook's events of [since, until) again as new deliveries (their own ids as
    webhook-id), in a job; answers how many. 422 before the event retention, 409 while another
    replay of the webhook runs, 429 past the tenant's replay limit."""
    webhook = get_webhook(tenant_id, webhook_id)
    require_deliverable(webhook, "replaying")
    now = utcnow()
    earliest = replay.earliest_replayable(now)
    if since < earliest:
        days = retention().total_seconds() / 86400
        raise ValidationFailed(
            {
                "since": [
                    f"Events are replayable for {days:g} days: since must be "
                    f"{earliest.isoformat(timespec='seconds')}Z or later."
                ]
            }
        )
    until = now if until is None or until > now else until
    if until <= since:
        raise ValidationFailed({"since": ["Must be in the past."]})
    hit_tenant_limit(tenant_id, "webhook_replay", "WEBHOOK_REPLAY_RATE_LIMIT")
    with database.atomic():
        count = replay.events_in_span(webhook, since, until).count()
        if count:
            if not replay.take_lock(webhook.id, now):
                raise Conflict(
                    "A replay of this webhook is running; wait for it to finish (its deliveries "
                    "are in "
                    "the log) before starting another."
                )
            enqueue(
                "plugins.webhooks.tasks.replay_webhook",
                str(webhook.id),
                since.isoformat(),
                until.isoformat(),
                queue=QUEUE,
            )
    return {"webhook_id": webhook.id, "since": since, "until": until, "count": count}
