"""/v1/tenant-webhook: configure, subscribe and unsubscribe the tenant's webhooks; read and replay deliveries (SPEC 2.8, 3, 4.1)."""

from flask.views import MethodView

from app.api import Blueprint, page_schema
from app.auth import current_tenant_id
from plugins.webhooks import services
from plugins.webhooks.schemas import (
    DeliveryListArgsSchema,
    TenantWebhookBodySchema,
    TenantWebhookListSchema,
    TenantWebhookSchema,
    WebhookDeliverySchema,
)

blp = Blueprint("webhooks", __name__, url_prefix="/v1/tenant-webhook",
                description="Signed (Standard Webhooks), retried and logged notifications of call and application activity")


@blp.route("")
class TenantWebhooks(MethodView):
    @blp.response(200, TenantWebhookListSchema)
    def get(self):
        """The tenant's webhook configurations (one per triggered_event)"""
        return services.list_webhooks(current_tenant_id())

    @blp.arguments(TenantWebhookBodySchema)
    @blp.response(201, TenantWebhookSchema)
    @blp.alt_response(200, schema=TenantWebhookSchema, description="An existing webhook for the event was updated")
    @blp.errors(403)
    def post(self, values):
        """Create the webhook for an event (201), or update it (200); a generated secret is shown in this answer only"""
        webhook, created = services.save_webhook(current_tenant_id(), values)
        return webhook, 201 if created else 200


@blp.route("/subscribe/<tenant_webhook_id>")
class Subscribe(MethodView):
    @blp.response(200, TenantWebhookSchema)
    @blp.errors(404)
    def post(self, tenant_webhook_id):
        """Subscribe (is_deleted false): new events are delivered again; missed ones are not replayed"""
        return services.set_subscribed(current_tenant_id(), tenant_webhook_id, True)


@blp.route("/unsubscribe/<tenant_webhook_id>")
class Unsubscribe(MethodView):
    @blp.response(200, TenantWebhookSchema)
    @blp.errors(404)
    def post(self, tenant_webhook_id):
        """Unsubscribe (is_deleted true): nothing is delivered, pending retries are dropped"""
        return services.set_subscribed(current_tenant_id(), tenant_webhook_id, False)


@blp.route("/<tenant_webhook_id>/deliveries")
class Deliveries(MethodView):
    @blp.arguments(DeliveryListArgsSchema, location="query")
    @blp.response(200, page_schema(WebhookDeliverySchema))
    @blp.errors(404)
    def get(self, args, tenant_webhook_id):
        """The delivery log, newest first: each delivery with every attempt (status code, duration, error, next retry)"""
        return services.list_deliveries(current_tenant_id(), tenant_webhook_id, **args)


@blp.route("/deliveries/<delivery_id>/redeliver")
class Redeliver(MethodView):
    @blp.response(202, WebhookDeliverySchema)
    @blp.errors(404, 409)
    def post(self, delivery_id):
        """Send a delivery again now (same webhook-id, fresh signature), restarting its retry schedule"""
        return services.redeliver(current_tenant_id(), delivery_id)
