"""/v1/tenant-webhook: configure, subscribe and unsubscribe the tenant's webhooks; send a test
event; read, redeliver and replay deliveries (docs/integrating.md, Webhooks)."""

from flask.views import MethodView

from app.http import idempotency
from app.http.api import Blueprint, page_schema
from app.security.auth import current_tenant_id
from app.http.listing import WholeListArgsSchema
from plugins.webhooks import services
from plugins.webhooks.schemas import (
    DeliveryListArgsSchema,
    ReplayBodySchema,
    ReplaySchema,
    TenantWebhookBodySchema,
    TenantWebhookListSchema,
    TenantWebhookSchema,
    WebhookDeliverySchema,
    WebhookTestResultSchema,
)

blp = Blueprint(
    "webhooks",
    __name__,
    url_prefix="/v1/tenant-webhook",
    description="Signed (Standard Webhooks), retried and logged notifications of call and "
    "application activity",
)


@blp.route("")
class TenantWebhooks(MethodView):
    @blp.arguments(WholeListArgsSchema, location="query")
    @blp.response(200, TenantWebhookListSchema)
    def get(self, args):
        """The tenant's webhook configurations (one per triggered_event)"""
        return services.list_webhooks(current_tenant_id(), **args)

    @blp.arguments(TenantWebhookBodySchema)
    @blp.response(201, TenantWebhookSchema)
    @blp.alt_response(
        200, schema=TenantWebhookSchema, description="An existing webhook for the event was updated"
    )
    @blp.errors(403)
    def post(self, values):
        """Create the webhook for an event (201), or update it (200); a generated secret is shown in this answer only
        (a retry with the same Idempotency-Key replays the answer without it)"""  # noqa: E501
        idempotency.withhold_from_stored_answer("secret")
        webhook, created = services.save_webhook(current_tenant_id(), values)
        return webhook, 201 if created else 200


@blp.route("/subscribe/<tenant_webhook_id>")
class Subscribe(MethodView):
    @blp.response(200, TenantWebhookSchema)
    @blp.doc(operationId="subscribe_tenant_webhook")
    def post(self, tenant_webhook_id):
        """Subscribe (is_deleted false): new events are delivered again; missed ones are not replayed"""  # noqa: E501
        return services.set_subscribed(current_tenant_id(), tenant_webhook_id, True)


@blp.route("/unsubscribe/<tenant_webhook_id>")
class Unsubscribe(MethodView):
    @blp.response(200, TenantWebhookSchema)
    @blp.doc(operationId="unsubscribe_tenant_webhook")
    def post(self, tenant_webhook_id):
        """Unsubscribe (is_deleted true): nothing is delivered, pending retries are dropped"""
        return services.set_subscribed(current_tenant_id(), tenant_webhook_id, False)


@blp.route("/<tenant_webhook_id>/deliveries")
class Deliveries(MethodView):
    @blp.arguments(DeliveryListArgsSchema, location="query")
    @blp.response(200, page_schema(WebhookDeliverySchema))
    @blp.doc(operationId="list_webhook_deliveries")
    def get(self, args, tenant_webhook_id):
        """The delivery log, newest first, filtered by status, event_id and since: each delivery with its attempt count,
        next retry time and every attempt (status code, duration, error, response excerpt)"""  # noqa: E501
        return services.list_deliveries(current_tenant_id(), tenant_webhook_id, **args)


@blp.route("/deliveries/<delivery_id>/redeliver")
class Redeliver(MethodView):
    @blp.response(202, WebhookDeliverySchema)
    @blp.errors(409)
    @blp.doc(operationId="redeliver_webhook_delivery")
    def post(self, delivery_id):
        """Send a delivery again now (same webhook-id, fresh signature), restarting its retry schedule"""  # noqa: E501
        return services.redeliver(current_tenant_id(), delivery_id)


@blp.route("/<tenant_webhook_id>/test")
class TestEvent(MethodView):
    @blp.response(200, WebhookTestResultSchema)
    @blp.doc(operationId="send_webhook_test_event")
    def post(self, tenant_webhook_id):
        """Send a signed test event now and answer its attempt

        The event has the webhook's triggered_event, its configured fields with sample values and
        `"test": true`, a fresh webhook-id, and goes through the normal signing and sending path,
        also when the webhook is inactive or unsubscribed. The answer is the attempt (200 whatever
        the receiver said): status code, duration, error and the first 2 KB of the response. It is
        logged with the deliveries and never retried.

        The send runs while this request waits and keeps to the deadline of every delivery: connect,
        request and the whole (capped) response within HIREKIT_WEBHOOK_TIMEOUT seconds (10 by
        default). A receiver slower than that, however it trickles its answer, is an attempt with
        `status_code` null and `error` "timed out after 10 s".
        """
        return services.send_test_event(current_tenant_id(), tenant_webhook_id)


@blp.route("/<tenant_webhook_id>/replay")
class Replay(MethodView):
    @blp.arguments(ReplayBodySchema)
    @blp.response(202, ReplaySchema)
    @blp.errors(409, 422, 429)
    @blp.doc(operationId="replay_webhook_events")
    def post(self, values, tenant_webhook_id):
        """Replay the events of [since, until) to the webhook, after an outage

        Every event of the webhook's triggered_event in the span (at most
        HIREKIT_EVENT_RETENTION_DAYS back) is queued again as a new delivery carrying the event's
        original id as webhook-id, so receivers de-duplicate; answers 202 with the count. One replay
        per webhook at a time (409 while one is queueing), a limited number per organisation
        (HIREKIT_WEBHOOK_REPLAY_RATE_LIMIT, 429), and only to a subscribed, active webhook (409).
        """
        return services.start_replay(current_tenant_id(), tenant_webhook_id, **values)
