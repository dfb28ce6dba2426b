"""Per-job interview scheduling: the on/off switch and the schedule setting (window, attempts,
reminders)."""

import peewee as pw

from app.data.db import JSONField, TimestampedModel
from plugins.jobs.models import Job

DEFAULT_SETTING = {
    "window_start_time": "09:00:00",
    "window_end_time": "17:00:00",
    "daily_attempts": 2,
    "total_attempts": 5,
    "retry_interval": 60,
    "days_of_week": [1, 2, 3, 4, 5],
    "email_enabled": False,
    "email_notify_minutes": 30,
    "email_repeat": False,
    "sms_enabled": False,
    "sms_notify_minutes": 15,
    "sms_repeat": False,
    "voicemail_enabled": False,
    "repeat_calling": False,
    "call_schedule_minutes": 0,
    "default": False,
    "name": "Default",
}


class JobSchedule(TimestampedModel):
    """One row per job once scheduling was toggled or set; absent means disabled with
    DEFAULT_SETTING."""

    job = pw.ForeignKeyField(Job, primary_key=True, on_delete="CASCADE", column_name="job_id")
    scheduling = pw.BooleanField(default=False)
    window_start_time = pw.CharField(max_length=8, default=DEFAULT_SETTING["window_start_time"])
    window_end_time = pw.CharField(max_length=8, default=DEFAULT_SETTING["window_end_time"])
    daily_attempts = pw.IntegerField(default=DEFAULT_SETTING["daily_attempts"])
    total_attempts = pw.IntegerField(default=DEFAULT_SETTING["total_attempts"])
    retry_interval = pw.IntegerField(default=DEFAULT_SETTING["retry_interval"])
    days_of_week = JSONField(default=lambda: list(DEFAULT_SETTING["days_of_week"]))
    email_enabled = pw.BooleanField(default=False)
    email_notify_minutes = pw.IntegerField(default=DEFAULT_SETTING["email_notify_minutes"])
    email_repeat = pw.BooleanField(default=False)
    sms_enabled = pw.BooleanField(default=False)
    sms_notify_minutes = pw.IntegerField(default=DEFAULT_SETTING["sms_notify_minutes"])
    sms_repeat = pw.BooleanField(default=False)
    voicemail_enabled = pw.BooleanField(default=False)
    repeat_calling = pw.BooleanField(default=False)
    call_schedule_minutes = pw.IntegerField(default=0)
    default = pw.BooleanField(default=False)
    name = pw.CharField(max_length=255, default=DEFAULT_SETTING["name"])

    class Meta:
        table_name = "job_schedules"

    def setting(self) -> dict:
        return {name: getattr(self, name) for name in DEFAULT_SETTING}
