"""Migration 006_calls (peewee-migrate; `flask --app wsgi db upgrade` applies it)."""

from contextlib import suppress

import peewee as pw
from peewee_migrate import Migrator


with suppress(ImportError):
    import playhouse.postgres_ext as pw_pext


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """Write your migrations here."""

    @migrator.create_model
    class Call(pw.Model):
        id = pw.UUIDField(primary_key=True)
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()
        tenant = pw.ForeignKeyField(
            column_name='tenant_id', field='id', model=migrator.orm['tenants'], on_delete='CASCADE'
        )
        application = pw.ForeignKeyField(
            column_name='application_id',
            field='id',
            model=migrator.orm['applications'],
            on_delete='CASCADE',
        )
        job = pw.ForeignKeyField(
            column_name='job_id', field='id', model=migrator.orm['jobs'], on_delete='CASCADE'
        )
        candidate = pw.ForeignKeyField(
            column_name='candidate_id',
            field='id',
            model=migrator.orm['candidates'],
            on_delete='CASCADE',
        )
        application_source_id = pw.CharField(max_length=255, null=True)
        job_source_id = pw.CharField(max_length=255, null=True)
        candidate_source_id = pw.CharField(max_length=255, null=True)
        status = pw.CharField(default='queued', max_length=16)
        attempt = pw.IntegerField(default=1)
        trigger = pw.CharField(default='instant', max_length=16)
        series = pw.UUIDField(null=True)
        scheduled_for = pw.DateTimeField(null=True)
        phone_no = pw.CharField(max_length=32)
        provider = pw.CharField(max_length=32)
        provider_call_id = pw.CharField(max_length=64, null=True)
        transcript = pw.TextField()
        summary = pw.TextField(null=True)
        assessment = pw.TextField(null=True)
        voicemail_left = pw.BooleanField(default=False)
        error = pw.TextField(null=True)
        started_at = pw.DateTimeField(null=True)
        ended_at = pw.DateTimeField(null=True)

        class Meta:
            table_name = "calls"
            indexes = [
                (('tenant', 'created_at'), False),
                (('application', 'status'), False),
                (('job', 'status'), False),
                (('provider', 'provider_call_id'), False),
                (('series',), False),
            ]

    @migrator.create_model
    class CallPlan(pw.Model):
        application = pw.ForeignKeyField(
            column_name='application_id',
            field='id',
            model=migrator.orm['applications'],
            on_delete='CASCADE',
            primary_key=True,
        )
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()
        tenant = pw.ForeignKeyField(
            column_name='tenant_id', field='id', model=migrator.orm['tenants'], on_delete='CASCADE'
        )
        job = pw.ForeignKeyField(
            column_name='job_id', field='id', model=migrator.orm['jobs'], on_delete='CASCADE'
        )
        last_stage = pw.CharField(max_length=16, null=True)
        series = pw.UUIDField(null=True)
        triggered_at = pw.DateTimeField(null=True)

        class Meta:
            table_name = "call_plans"


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Write your rollback migrations here."""

    migrator.remove_model('call_plans')

    migrator.remove_model('calls')
