"""Migration 002_jobs (peewee-migrate; `flask --app wsgi db upgrade` applies it)."""

from contextlib import suppress

import peewee as pw
from peewee_migrate import Migrator


with suppress(ImportError):
    import playhouse.postgres_ext as pw_pext


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """Write your migrations here."""

    @migrator.create_model
    class Job(pw.Model):
        id = pw.UUIDField(primary_key=True)
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()
        tenant = pw.ForeignKeyField(
            column_name='tenant_id', field='id', model=migrator.orm['tenants'], on_delete='CASCADE'
        )
        number = pw.IntegerField()
        source_id = pw.CharField(max_length=255)
        title = pw.CharField(max_length=500)
        client_name = pw.CharField(max_length=255, null=True)
        industry = pw.CharField(max_length=255, null=True)
        job_code = pw.CharField(max_length=255, null=True)
        address = pw.CharField(max_length=500, null=True)
        workplace_type = pw.CharField(max_length=100, null=True)
        city = pw.CharField(max_length=255, null=True)
        state_name = pw.CharField(max_length=255, null=True)
        zip_code = pw.CharField(max_length=50, null=True)
        country = pw.CharField(max_length=255, null=True)
        employment_type = pw.CharField(max_length=100, null=True)
        duration = pw.CharField(max_length=255, null=True)
        start_date = pw.CharField(max_length=64, null=True)
        end_date = pw.CharField(max_length=64, null=True)
        posting_date = pw.CharField(max_length=64, null=True)
        pay_frequency = pw.CharField(max_length=100, null=True)
        min_pay_rate = pw.DoubleField(null=True)
        max_pay_rate = pw.DoubleField(null=True)
        pay_rate_currency = pw.CharField(max_length=16, null=True)
        recruiter_name = pw.CharField(max_length=255, null=True)
        recruiter_email = pw.CharField(max_length=320, null=True)
        recruiter_work_phone_no = pw.CharField(max_length=64, null=True)
        status = pw.CharField(max_length=100, null=True)
        description = pw.TextField(null=True)

        class Meta:
            table_name = "jobs"
            indexes = [
                (('tenant', 'source_id'), True),
                (('tenant', 'number'), True),
                (('tenant', 'created_at'), False),
            ]


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Write your rollback migrations here."""

    migrator.remove_model('jobs')
