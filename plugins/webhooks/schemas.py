"""Tenant webhook body (docs/integrating.md, Webhooks), the webhook record, the delivery log and its
filters, test events and replays."""

import datetime as dt

import marshmallow as ma

from app.http.api import PageArgsSchema, RecordSchema, UtcDateTime, WholeListMetaSchema
from app.data.events import DeclaredEventType, declared_types
from app.http.fields import StrictSchema, Text
from plugins.webhooks.payloads import CONTENT_TYPES, record_fields
from plugins.webhooks.signing import secret_problem

WEBHOOK_TYPES = ("post_call_screening",)
HTTP_METHODS = ("POST", "PUT", "PATCH")


class TenantWebhookBodySchema(StrictSchema):
    """POST /v1/tenant-webhook's body (docs/integrating.md, Webhooks); no other field is
    accepted."""

    tenant_id = Text(
        required=True,
        max_length=64,
        metadata={"description": "Must be your own tenant id (GET /v1/tenant)"},
    )
    triggered_event = ma.fields.String(
        required=True,
        validate=DeclaredEventType(),
        metadata={
            "description": "call_activity, application_activty (spelled so), "
            "candidate.deleted or candidate.consent"
        },
    )
    type = ma.fields.String(required=True, validate=ma.validate.OneOf(WEBHOOK_TYPES))
    fields = ma.fields.List(
        Text(max_length=64),
        required=True,
        validate=ma.validate.Length(min=1, max=50),
        metadata={
            "description": "Record fields to send, e.g. id, status, candidate_id, job_id",
            "example": ["id", "status", "candidate_id", "job_id"],
        },
    )
    url = Text(
        required=True,
        max_length=2048,
        metadata={"example": "https://ats.example.com/hooks/hirekit"},
    )
    http_method = ma.fields.String(required=True, validate=ma.validate.OneOf(HTTP_METHODS))
    content_type = ma.fields.String(required=True, validate=ma.validate.OneOf(CONTENT_TYPES))
    secret = ma.fields.String(
        load_default=None,
        allow_none=True,
        metadata={
            "description": "whsec_ + base64 of 24-64 bytes (Standard Webhooks: the decoded bytes "
            "are the key), or any other "
            "string of 16-255 characters (its UTF-8 bytes are the key); generated in the whsec_ "
            "form (and "
            "shown once, in this answer) when omitted. A new "
            "secret for an existing webhook rotates it: the old one keeps signing too for "
            "HIREKIT_WEBHOOK_SECRET_OVERLAP seconds (default a day)"
        },
    )
    is_active = ma.fields.Boolean(
        load_default=None,
        allow_none=True,
        metadata={"description": "Default true; true also re-enables an auto-disabled webhook"},
    )

    @ma.validates_schema
    def known_fields_and_usable_secret(self, data, **kwargs):
        errors = {}
        event = data.get("triggered_event")
        if event in declared_types() and data.get("fields"):
            available = record_fields(event)
            unknown = [name for name in data["fields"] if name not in available]
            if unknown:
                errors["fields"] = [
                    f"Unknown field(s) for {event}: {', '.join(unknown)}. "
                    f"Available: {', '.join(sorted(available))}."
                ]
            elif len(set(data["fields"])) != len(data["fields"]):
                errors["fields"] = ["Each field may be listed once."]
        if data.get("secret") is not None:
            problem = secret_problem(data["secret"])
            if problem:
                errors["secret"] = [problem]
        if errors:
            raise ma.ValidationError(errors)


class TenantWebhookSchema(RecordSchema):
    OPTIONAL_IN_ANSWERS = ("secret",)  # only in the answer to the POST that set or generated it

    tenant_id = ma.fields.String()
    triggered_event = ma.fields.String()
    type = ma.fields.String()
    fields = ma.fields.List(ma.fields.String())
    url = ma.fields.String()
    http_method = ma.fields.String()
    content_type = ma.fields.String()
    is_active = ma.fields.Boolean()
    is_deleted = ma.fields.Boolean(
        metadata={"description": "true after unsubscribe, false after subscribe"}
    )
    disabled_reason = ma.fields.String(
        allow_none=True, metadata={"description": "Why deliveries disabled the webhook"}
    )
    previous_secret_until = UtcDateTime(
        allow_none=True,
        metadata={
            "description": "After a secret rotation (a POST with a new secret), deliveries also "
            "carry a signature with the "
            "previous secret until then, so receivers can switch without rejecting any"
        },
    )
    has_secret = ma.fields.Function(
        lambda webhook: bool(webhook.secret), metadata={"description": "Deliveries are signed"}
    )
    secret = ma.fields.String(
        attribute="revealed_secret",
        metadata={"description": "Only in the answer to the POST that set or generated it"},
    )


class TenantWebhookListSchema(WholeListMetaSchema):
    data = ma.fields.List(ma.fields.Nested(TenantWebhookSchema), required=True)


class WebhookAttemptSchema(ma.Schema):
    number = ma.fields.Integer()
    started_at = UtcDateTime()
    duration_ms = ma.fields.Integer()
    status_code = ma.fields.Integer(allow_none=True)
    error = ma.fields.String(allow_none=True)
    response_body = ma.fields.String(
        allow_none=True, metadata={"description": "First 2 KB of the receiver's answer"}
    )
    next_retry_at = UtcDateTime(allow_none=True)


class WebhookDeliverySchema(RecordSchema):
    webhook_id = ma.fields.UUID()
    event_id = ma.fields.UUID(
        metadata={"description": "The webhook-id header: the same on every attempt"}
    )
    event_type = ma.fields.String()
    status = ma.fields.String(metadata={"description": "pending, succeeded, failed or canceled"})
    payload = ma.fields.Dict()
    attempt_count = ma.fields.Integer(metadata={"description": "Attempts made so far"})
    next_attempt_at = UtcDateTime(allow_none=True)
    next_retry_at = UtcDateTime(
        allow_none=True,
        metadata={
            "description": "When the next retry is due, for a pending delivery that has failed; "
            "null otherwise"
        },
    )
    last_status_code = ma.fields.Integer(allow_none=True)
    last_error = ma.fields.String(allow_none=True)
    delivered_at = UtcDateTime(allow_none=True)
    attempts = ma.fields.List(ma.fields.Nested(WebhookAttemptSchema), attribute="attempt_log")


class UtcInstant(ma.fields.AwareDateTime):
    """An ISO 8601 instant in a request (UTC when it has no offset), loaded as naive UTC like every
    stored timestamp."""

    def __init__(self, **kwargs):
        super().__init__(default_timezone=dt.timezone.utc, **kwargs)

    def _deserialize(self, value, attr, data, **kwargs):
        try:
            return (
                super()
                ._deserialize(value, attr, data, **kwargs)
                .astimezone(dt.timezone.utc)
                .replace(tzinfo=None)
            )
        except OverflowError:  # year 1 east of UTC, year 9999 west of it
            raise self.make_error("invalid", input=value, obj_type=self.OBJ_TYPE) from None


class DeliveryListArgsSchema(PageArgsSchema):
    status = ma.fields.String(
        validate=ma.validate.OneOf(("pending", "succeeded", "failed", "canceled"))
    )
    event_id = ma.fields.UUID(
        metadata={"description": "Only the deliveries of this event (its webhook-id)"}
    )
    since = UtcInstant(
        metadata={
            "description": "Only deliveries created at or after this instant (ISO 8601)",
            "example": "2026-11-23T08:00:00Z",
        }
    )


class WebhookTestResultSchema(WebhookAttemptSchema):
    """The one attempt a test event got, with what was sent; the delivery is in the log too."""

    succeeded = ma.fields.Boolean(metadata={"description": "The receiver answered 2xx"})
    delivery_id = ma.fields.UUID()
    event_id = ma.fields.UUID(metadata={"description": "The webhook-id header the test carried"})
    event_type = ma.fields.String()
    payload = ma.fields.Dict(
        metadata={"description": "The configured fields with sample values, and \"test\": true"}
    )


class ReplayBodySchema(StrictSchema):
    since = UtcInstant(
        required=True,
        metadata={
            "description": "Replay events from this instant on (ISO 8601); at most "
            "HIREKIT_EVENT_RETENTION_DAYS (30) days ago",
            "example": "2026-11-23T08:00:00Z",
        },
    )
    until = UtcInstant(
        load_default=None,
        allow_none=True,
        metadata={
            "description": "Up to (not including) this instant; default now",
            "example": "2026-11-23T09:30:00Z",
        },
    )

    @ma.validates_schema
    def since_before_until(self, data, **kwargs):
        if (
            data.get("until") is not None
            and data.get("since") is not None
            and data["until"] <= data["since"]
        ):
            raise ma.ValidationError({"until": ["Must be after since."]})


class ReplaySchema(ma.Schema):
    webhook_id = ma.fields.UUID()
    since = UtcDateTime()
    until = UtcDateTime()
    count = ma.fields.Integer(metadata={"description": "Events queued again as new deliveries"})
