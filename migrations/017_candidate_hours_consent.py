"""Migration 017_candidate_hours_consent (peewee-migrate; `flask --app wsgi db upgrade` applies
it)."""

import json

import peewee as pw
from peewee_migrate import Migrator

CHANNELS = ("voice", "sms", "email")


def consent(granted: bool, source: str) -> str:
    """A candidate's consent column: every channel granted or revoked by `source`, the time
    unknown."""
    return json.dumps(
        {
            channel: {"granted": granted, "source": source, "changed_at": None}
            for channel in CHANNELS
        },
        separators=(",", ":"),
    )


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """Candidates' own hours and consent: each candidate's zone and its source and per-channel
    consent; who booked a call's time, and the index the daily cap of calls per number counts with;
    the tenant's contact policy (default zone, calling hours, daily call cap) and do-not-call list.
    Candidates stored before keep every channel granted by their ATS (revoked through the API when
    they had opted out), the time unknown."""
    migrator.add_fields(
        'candidates',
        timezone=pw.CharField(max_length=64, null=True),
        timezone_source=pw.CharField(max_length=16, null=True),
        consent=pw.TextField(null=True),
    )

    migrator.add_fields('calls', booked_by=pw.CharField(max_length=16, null=True))

    migrator.sql(
        f"UPDATE candidates SET consent = '{consent(True, 'ats')}' WHERE consent IS NULL "
        "AND NOT contact_opt_out"
    )
    migrator.sql(
        f"UPDATE candidates SET consent = '{consent(False, 'api')}' WHERE consent IS NULL "
        "AND contact_opt_out"
    )

    migrator.add_index('calls', 'tenant', 'phone_no', 'dialled_at', unique=False)

    @migrator.create_model
    class ContactPolicy(pw.Model):
        tenant = pw.ForeignKeyField(
            column_name='tenant_id',
            field='id',
            model=migrator.orm['tenants'],
            on_delete='CASCADE',
            primary_key=True,
        )
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()
        timezone = pw.CharField(max_length=64, null=True)
        calling_hours_start = pw.CharField(max_length=5, null=True)
        calling_hours_end = pw.CharField(max_length=5, null=True)
        daily_call_limit = pw.IntegerField(null=True)

        class Meta:
            table_name = "contact_policies"

    @migrator.create_model
    class DoNotCallNumber(pw.Model):
        id = pw.AutoField()
        tenant = pw.ForeignKeyField(
            column_name='tenant_id', field='id', model=migrator.orm['tenants'], on_delete='CASCADE'
        )
        phone_no = pw.CharField(max_length=32)
        note = pw.CharField(max_length=500, null=True)
        created_at = pw.DateTimeField()

        class Meta:
            table_name = "do_not_call_numbers"
            indexes = [(('tenant', 'phone_no'), True)]


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):

    migrator.remove_fields('calls', 'booked_by')

    migrator.drop_index('calls', 'tenant', 'phone_no', 'dialled_at')

    migrator.remove_fields('candidates', 'timezone', 'timezone_source', 'consent')

    migrator.remove_model('do_not_call_numbers')

    migrator.remove_model('contact_policies')
