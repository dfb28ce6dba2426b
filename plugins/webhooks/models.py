"""Tenant webhooks and their delivery log: one configuration per (tenant, event), one delivery per
(event, webhook), one row per attempt."""

import peewee as pw

from app.data.db import BaseModel, JSONField, TimestampedModel, new_uuid, utcnow
from app.data.records import TenantRecord
from app.data.tenancy import Tenant

DELIVERY_PENDING = "pending"
DELIVERY_SUCCEEDED = "succeeded"
DELIVERY_FAILED = "failed"  # every scheduled retry failed, or the receiver answered 410
# the webhook was unsubscribed or deactivated before it could be sent
DELIVERY_CANCELED = "canceled"
DELIVERY_STATUSES = (DELIVERY_PENDING, DELIVERY_SUCCEEDED, DELIVERY_FAILED, DELIVERY_CANCELED)


class TenantWebhook(TenantRecord):
    """Where and how a tenant wants one event type delivered (docs/integrating.md, Webhooks)."""

    label = "tenant webhook"

    triggered_event = pw.CharField(max_length=64)
    type = pw.CharField(max_length=64)
    fields = JSONField()
    url = pw.TextField()
    http_method = pw.CharField(max_length=8)
    content_type = pw.CharField(max_length=64)
    secret = pw.CharField(max_length=255, null=True)
    # after a rotation, also signed with this one ...
    previous_secret = pw.CharField(max_length=255, null=True)
    # ... until then, so receivers can switch without a gap
    previous_secret_until = pw.DateTimeField(null=True)
    is_active = pw.BooleanField(default=True)
    is_deleted = pw.BooleanField(default=False)
    disabled_reason = pw.TextField(null=True)
    failing_since = pw.DateTimeField(null=True)
    # a replay holds this lock while it queues; it expires by itself
    replay_until = pw.DateTimeField(null=True)

    class Meta:
        table_name = "tenant_webhooks"
        indexes = ((("tenant", "triggered_event"), True),)


class WebhookDelivery(TimestampedModel):
    """One event owed to one webhook: the outbox row that makes delivery at-least-once."""

    id = pw.UUIDField(primary_key=True, default=new_uuid)
    tenant = pw.ForeignKeyField(Tenant, on_delete="CASCADE", column_name="tenant_id")
    webhook = pw.ForeignKeyField(
        TenantWebhook, on_delete="CASCADE", column_name="webhook_id", backref="deliveries"
    )
    # the webhook-id header: the same on every attempt, the receiver's dedupe key
    event_id = pw.UUIDField()
    event_type = pw.CharField(max_length=64)
    payload = JSONField()  # the selected fields, as they were when the event happened
    status = pw.CharField(max_length=16, default=DELIVERY_PENDING)
    attempt_count = pw.IntegerField(default=0)
    # position in the retry schedule; reset by a manual redeliver
    failures_in_row = pw.IntegerField(default=0)
    next_attempt_at = pw.DateTimeField(null=True, default=utcnow)
    # a sender's lease: a delivery is sent by one worker at a time
    claimed_until = pw.DateTimeField(null=True)
    last_status_code = pw.IntegerField(null=True)
    last_error = pw.TextField(null=True)
    delivered_at = pw.DateTimeField(null=True)

    @property
    def next_retry_at(self):
        """When a delivery that failed is tried again: None unless it is pending after at least one
        attempt."""
        return (
            self.next_attempt_at if self.status == DELIVERY_PENDING and self.attempt_count else None
        )

    class Meta:
        table_name = "webhook_deliveries"
        indexes = (
            (("webhook", "created_at"), False),
            (("status", "next_attempt_at"), False),
        )


class WebhookAttempt(BaseModel):
    """What happened when a delivery was sent once: the log an integrator debugs from."""

    delivery = pw.ForeignKeyField(
        WebhookDelivery, on_delete="CASCADE", column_name="delivery_id", backref="attempts"
    )
    number = pw.IntegerField()
    started_at = pw.DateTimeField(default=utcnow)
    duration_ms = pw.IntegerField()
    status_code = pw.IntegerField(null=True)
    error = pw.TextField(null=True)
    response_body = pw.TextField(null=True)  # the first 2 KB the receiver answered
    next_retry_at = pw.DateTimeField(null=True)

    class Meta:
        table_name = "webhook_attempts"
        indexes = ((("delivery", "number"), True),)
