"""Migration 013_event_retention (peewee-migrate; `flask --app wsgi db upgrade` applies it)."""

import peewee as pw
from peewee_migrate import Migrator


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """The worker purges events past HIREKIT_EVENT_RETENTION_DAYS oldest first: an index finds them
    without a scan."""
    migrator.sql('CREATE INDEX IF NOT EXISTS "events_created_at" ON "events" (created_at)')


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    migrator.sql('DROP INDEX IF EXISTS "events_created_at"')
