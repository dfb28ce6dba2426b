"""Migration 014_call_reminders (peewee-migrate; `flask --app wsgi db upgrade` applies it)."""

from contextlib import suppress

import peewee as pw
from peewee_migrate import Migrator


with suppress(ImportError):
    import playhouse.postgres_ext as pw_pext


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """A candidate's contact opt-out (and the phone number index an SMS STOP looks up), and one row
    per reminder of a scheduled call, deleted with its call (ON DELETE CASCADE), so that erasing a
    call erases its reminders."""

    # NOT NULL DEFAULT FALSE in one ALTER TABLE: SQLite adds the column in place, where peewee's
    # add-then-set-NOT-NULL rebuilds the table and drops migration 012's row-count triggers on it
    migrator.add_fields(
        'candidates',
        allow_not_null=True,
        contact_opt_out=pw.BooleanField(default=False, constraints=[pw.SQL('DEFAULT FALSE')]),
        contact_opted_out_at=pw.DateTimeField(null=True),
    )

    migrator.add_index('candidates', 'phone_no', unique=False)

    @migrator.create_model
    class CallReminder(pw.Model):
        id = pw.UUIDField(primary_key=True)
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()
        tenant = pw.ForeignKeyField(
            column_name='tenant_id', field='id', model=migrator.orm['tenants'], on_delete='CASCADE'
        )
        call = pw.ForeignKeyField(
            column_name='call_id', field='id', model=migrator.orm['calls'], on_delete='CASCADE'
        )
        channel = pw.CharField(max_length=8)
        address = pw.CharField(max_length=320, null=True)
        due_at = pw.DateTimeField()
        status = pw.CharField(default='pending', max_length=16)
        attempts = pw.IntegerField(default=0)
        claimed_at = pw.DateTimeField(null=True)
        sent_at = pw.DateTimeField(null=True)
        provider_message_id = pw.CharField(max_length=64, null=True)
        error = pw.TextField(null=True)

        class Meta:
            table_name = "call_reminders"
            indexes = [(('call', 'channel'), True), (('status', 'due_at'), False)]


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    migrator.remove_fields('candidates', 'contact_opt_out', 'contact_opted_out_at')

    migrator.drop_index('candidates', 'phone_no')

    migrator.remove_model('call_reminders')
