"""Migration 022_held_text_replies (peewee-migrate; `flask --app wsgi db upgrade` applies it)."""

import peewee as pw
from peewee_migrate import Migrator


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """The text of an answer to a candidate's own text that waits for their calling hours, kept on
    the call's `reply` row of call_reminders (null for a reminder: its text is rendered when it is
    sent)."""
    migrator.add_fields("call_reminders", body=pw.TextField(null=True))


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    migrator.remove_fields("call_reminders", "body")
