"""Migration 009_webhook_replay_lock_and_secrets (peewee-migrate; `flask --app wsgi db upgrade`
applies it)."""

import peewee as pw
from peewee_migrate import Migrator


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """A webhook's replay lock (one replay at a time, expiring on its own), and secrets of up to 255
    characters (any string of 16 or more besides Standard Webhooks' whsec_ form)."""
    migrator.add_fields('tenant_webhooks', replay_until=pw.DateTimeField(null=True))
    migrator.change_fields(
        'tenant_webhooks',
        secret=pw.CharField(max_length=255, null=True),
        previous_secret=pw.CharField(max_length=255, null=True),
    )


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    migrator.remove_fields('tenant_webhooks', 'replay_until')
    migrator.change_fields(
        'tenant_webhooks',
        secret=pw.CharField(max_length=128, null=True),
        previous_secret=pw.CharField(max_length=128, null=True),
    )
