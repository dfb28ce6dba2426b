"""Migration 008_call_dial_claim (peewee-migrate; `flask --app wsgi db upgrade` applies it)."""

import peewee as pw
from peewee_migrate import Migrator


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """When a job claimed the call to dial it: only one job ever dials a call, however often RQ runs
    it."""
    migrator.add_fields('calls', dialled_at=pw.DateTimeField(null=True))


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    migrator.remove_fields('calls', 'dialled_at')
