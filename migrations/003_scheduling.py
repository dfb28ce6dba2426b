"""Migration 003_scheduling (peewee-migrate; `flask --app wsgi db upgrade` applies it)."""

from contextlib import suppress

import peewee as pw
from peewee_migrate import Migrator


with suppress(ImportError):
    import playhouse.postgres_ext as pw_pext


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """Write your migrations here."""

    @migrator.create_model
    class JobSchedule(pw.Model):
        job = pw.ForeignKeyField(
            column_name='job_id',
            field='id',
            model=migrator.orm['jobs'],
            on_delete='CASCADE',
            primary_key=True,
        )
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()
        scheduling = pw.BooleanField(default=False)
        window_start_time = pw.CharField(default='09:00:00', max_length=8)
        window_end_time = pw.CharField(default='17:00:00', max_length=8)
        daily_attempts = pw.IntegerField(default=2)
        total_attempts = pw.IntegerField(default=5)
        retry_interval = pw.IntegerField(default=60)
        days_of_week = pw.TextField()
        email_enabled = pw.BooleanField(default=False)
        email_notify_minutes = pw.IntegerField(default=30)
        email_repeat = pw.BooleanField(default=False)
        sms_enabled = pw.BooleanField(default=False)
        sms_notify_minutes = pw.IntegerField(default=15)
        sms_repeat = pw.BooleanField(default=False)
        voicemail_enabled = pw.BooleanField(default=False)
        repeat_calling = pw.BooleanField(default=False)
        call_schedule_minutes = pw.IntegerField(default=0)
        default = pw.BooleanField(default=False)
        name = pw.CharField(default='Default', max_length=255)

        class Meta:
            table_name = "job_schedules"


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Write your rollback migrations here."""

    migrator.remove_model('job_schedules')
