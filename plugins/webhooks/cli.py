"""`flask webhooks reap`: send stalled and due deliveries (the cron job of deployments without a
Redis scheduler)."""

from flask.cli import AppGroup

from app.cli import run_sweep
from plugins.webhooks.dispatch import reap

webhooks_cli = AppGroup("webhooks", help="Webhook deliveries.")


@webhooks_cli.command("reap")
def reap_command():
    """Send (or, with Redis, re-enqueue) deliveries that are due and held by nobody."""
    run_sweep(reap, "delivery(ies) picked up")
