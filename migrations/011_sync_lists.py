"""Migration 011_sync_lists (peewee-migrate; `flask --app wsgi db upgrade` applies it)."""

import peewee as pw
from peewee_migrate import Migrator

# (index, table, columns): the (tenant, updated_at, id) order of cursor walks and updated_after
# windows, the case-insensitive status filter of job lists in their page order, and the tenant's
# event feed
INDEXES = (
    ("jobs_sync", "jobs", "tenant_id, updated_at, id"),
    ("jobs_status_ci", "jobs", "tenant_id, lower(status), created_at, id"),
    ("candidates_sync", "candidates", "tenant_id, updated_at, id"),
    ("applications_sync", "applications", "tenant_id, updated_at, id"),
    ("calls_sync", "calls", "tenant_id, updated_at, id"),
    ("questions_sync", "questions", "tenant_id, job_id, updated_at, id"),
    ("webhook_deliveries_sync", "webhook_deliveries", "webhook_id, updated_at, id"),
    ("tenant_webhooks_sync", "tenant_webhooks", "tenant_id, updated_at, id"),
    ("events_feed", "events", "tenant_id, sequence"),
)


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """Deleted questions become tombstones (deleted_at) that sync lists can show; indexes for sync
    walks and filters."""
    migrator.add_fields('questions', deleted_at=pw.DateTimeField(null=True))
    for name, table, columns in INDEXES:
        migrator.sql(f'CREATE INDEX IF NOT EXISTS "{name}" ON "{table}" ({columns})')


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    for name, _table, _columns in INDEXES:
        migrator.sql(f'DROP INDEX IF EXISTS "{name}"')
    migrator.sql('DELETE FROM "questions" WHERE "deleted_at" IS NOT NULL')
    migrator.remove_fields('questions', 'deleted_at')
