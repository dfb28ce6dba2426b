"""`flask webhooks reap`: send stalled and due deliveries (the cron job of deployments without a Redis scheduler)."""

import click
from flask.cli import AppGroup

from app.db import database
from plugins.webhooks.dispatch import reap

webhooks_cli = AppGroup("webhooks", help="Webhook deliveries.")


@webhooks_cli.command("reap")
def reap_command():
    """Send (or, with Redis, re-enqueue) deliveries that are due and held by nobody."""
    with database.connection_context():
        count = reap()
    click.echo(f"{count} delivery(ies) picked up")
