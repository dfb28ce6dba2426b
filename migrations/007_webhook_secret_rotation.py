"""Migration 007_webhook_secret_rotation (peewee-migrate; `flask --app wsgi db upgrade` applies
it)."""

from contextlib import suppress

import peewee as pw
from peewee_migrate import Migrator


with suppress(ImportError):
    import playhouse.postgres_ext as pw_pext


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """Webhook secret rotation: the previous secret and until when deliveries are also signed with
    it."""
    migrator.add_fields(
        'tenant_webhooks',
        previous_secret=pw.CharField(max_length=128, null=True),
        previous_secret_until=pw.DateTimeField(null=True),
    )


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Write your rollback migrations here."""
    migrator.remove_fields('tenant_webhooks', 'previous_secret', 'previous_secret_until')
