"""Migration 004_candidates_applications_questions (peewee-migrate; `flask --app wsgi db upgrade`
applies it)."""

from contextlib import suppress

import peewee as pw
from peewee_migrate import Migrator


with suppress(ImportError):
    import playhouse.postgres_ext as pw_pext


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """Write your migrations here."""

    @migrator.create_model
    class Candidate(pw.Model):
        id = pw.UUIDField(primary_key=True)
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()
        tenant = pw.ForeignKeyField(
            column_name='tenant_id', field='id', model=migrator.orm['tenants'], on_delete='CASCADE'
        )
        resume_file_name = pw.CharField(max_length=255, null=True)
        resume_content_type = pw.CharField(max_length=128, null=True)
        resume_size = pw.IntegerField(null=True)
        resume_sha256 = pw.CharField(max_length=64, null=True)
        resume_reference = pw.TextField(null=True)
        source_id = pw.CharField(max_length=255)
        source = pw.CharField(max_length=255)
        first_name = pw.CharField(max_length=255)
        last_name = pw.CharField(max_length=255, null=True)
        email = pw.CharField(max_length=320)
        phone_no = pw.CharField(max_length=32, null=True)
        city = pw.CharField(max_length=255, null=True)
        state_name = pw.CharField(max_length=255, null=True)
        country = pw.CharField(max_length=255, null=True)
        recruiter_name = pw.CharField(max_length=255, null=True)
        recruiter_email = pw.CharField(max_length=320, null=True)
        recruiter_work_phone_no = pw.CharField(max_length=64, null=True)
        status = pw.CharField(max_length=100, null=True)

        class Meta:
            table_name = "candidates"
            indexes = [
                (('tenant', 'source_id'), True),
                (('tenant', 'email'), False),
                (('tenant', 'created_at'), False),
            ]

    @migrator.create_model
    class Application(pw.Model):
        id = pw.UUIDField(primary_key=True)
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()
        tenant = pw.ForeignKeyField(
            column_name='tenant_id', field='id', model=migrator.orm['tenants'], on_delete='CASCADE'
        )
        resume_file_name = pw.CharField(max_length=255, null=True)
        resume_content_type = pw.CharField(max_length=128, null=True)
        resume_size = pw.IntegerField(null=True)
        resume_sha256 = pw.CharField(max_length=64, null=True)
        resume_reference = pw.TextField(null=True)
        candidate = pw.ForeignKeyField(
            column_name='candidate_id',
            field='id',
            model=migrator.orm['candidates'],
            on_delete='CASCADE',
        )
        job = pw.ForeignKeyField(
            column_name='job_id', field='id', model=migrator.orm['jobs'], on_delete='CASCADE'
        )
        source_id = pw.CharField(max_length=255, null=True)
        candidate_source_id = pw.CharField(max_length=255)
        job_source_id = pw.CharField(max_length=255)
        source_application_status = pw.CharField(max_length=100)
        application_stage = pw.CharField(max_length=16)

        class Meta:
            table_name = "applications"
            indexes = [
                (('candidate', 'job'), True),
                (('tenant', 'created_at'), False),
                (('tenant', 'job_source_id'), False),
                (('tenant', 'candidate_source_id'), False),
            ]

    @migrator.create_model
    class Question(pw.Model):
        id = pw.UUIDField(primary_key=True)
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()
        tenant = pw.ForeignKeyField(
            column_name='tenant_id', field='id', model=migrator.orm['tenants'], on_delete='CASCADE'
        )
        job = pw.ForeignKeyField(
            column_name='job_id', field='id', model=migrator.orm['jobs'], on_delete='CASCADE'
        )
        application = pw.ForeignKeyField(
            column_name='application_id',
            field='id',
            model=migrator.orm['applications'],
            null=True,
            on_delete='CASCADE',
        )
        question_text = pw.TextField()
        source_id = pw.CharField(max_length=255)
        position = pw.IntegerField(default=0)
        generated = pw.BooleanField(default=False)

        class Meta:
            table_name = "questions"
            indexes = [(('job', 'position', 'created_at'), False), (('job', 'source_id'), False)]


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Write your rollback migrations here."""

    migrator.remove_model('questions')

    migrator.remove_model('applications')

    migrator.remove_model('candidates')
