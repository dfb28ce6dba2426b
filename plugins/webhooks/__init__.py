"""The webhooks family: /v1/tenant-webhook, and delivery of every emitted event to the tenant's subscribed webhooks."""

from app import events
from app.periodic import PeriodicJob
from app.plugins import Plugin
from plugins.webhooks import services, tasks
from plugins.webhooks.cli import webhooks_cli
from plugins.webhooks.models import TenantWebhook, WebhookAttempt, WebhookDelivery
from plugins.webhooks.routes import blp


def init_app(app) -> None:
    events.add_listener(app, services.fan_out)


PLUGIN = Plugin(name="webhooks", blueprints=(blp,), models=(TenantWebhook, WebhookDelivery, WebhookAttempt),
                tasks=(tasks.drain_webhook, tasks.deliver_webhook, tasks.replay_webhook,
                       tasks.reap_stalled_deliveries),
                periodic=(PeriodicJob(tasks.reap_stalled_deliveries, tasks.QUEUE, "WEBHOOK_REAPER_INTERVAL"),),
                init_app=init_app, cli=(webhooks_cli,))
