"""Migration 017_candidate_page_and_replies (peewee-migrate; `flask --app wsgi db upgrade` applies
it)."""

import peewee as pw
from peewee_migrate import Migrator


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """A call's link to the candidate's page (the nonce its current link carries, replaced when a
    link is used) and when its one help text went to a reply not understood."""
    migrator.add_fields(
        'calls',
        page_nonce=pw.CharField(max_length=32, null=True),
        sms_help_sent_at=pw.DateTimeField(null=True),
    )


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    migrator.remove_fields('calls', 'page_nonce', 'sms_help_sent_at')
