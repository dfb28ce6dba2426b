"""The webhooks family: /v1/tenant-webhook, and delivery of every emitted event to the tenant's
subscribed webhooks."""

from app.data import events
from app.background.periodic import PeriodicJob
from app.plugins import Plugin, Tasks
from plugins.webhooks import services
from plugins.webhooks.cli import webhooks_cli
from plugins.webhooks.models import TenantWebhook, WebhookAttempt, WebhookDelivery
from plugins.webhooks.routes import blp
from plugins.webhooks.wakeups import QUEUE


def init_app(app) -> None:
    events.add_listener(app, services.fan_out)


PLUGIN = Plugin(
    name="webhooks",
    blueprints=(blp,),
    models=(TenantWebhook, WebhookDelivery, WebhookAttempt),
    tasks=Tasks(
        queues=(QUEUE,),
        periodic=(
            PeriodicJob(
                "plugins.webhooks.tasks.reap_stalled_deliveries", QUEUE, "WEBHOOK_REAPER_INTERVAL"
            ),
        ),
    ),
    init_app=init_app,
    cli=(webhooks_cli,),
)
