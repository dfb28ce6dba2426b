"""Scheduling bodies: the on/off switch and the schedule setting, times as HH:MM:SS and intervals in
minutes (docs/integrating.md, Jobs: Scheduling)."""

import re

import marshmallow as ma

from app.http.fields import MINUTES_MAX, BoundedInteger, StrictBoolean, StrictSchema, Text

TIME_PATTERN = re.compile(r"^([01]\d|2[0-3]):[0-5]\d:[0-5]\d$")
# 20 days of the most daily attempts (5): more is not a screening series any more
TOTAL_ATTEMPTS_MAX = 100


def minutes(description: str) -> BoundedInteger:
    """A count of minutes, 0 to 30 days (MINUTES_MAX); the field's description in /openapi.json
    states both bounds."""
    return BoundedInteger(
        0,
        MINUTES_MAX,
        metadata={"description": f"{description} (0-{MINUTES_MAX:,}, i.e. up to 30 days)"},
    )


class SchedulingToggleSchema(StrictSchema):
    scheduling = StrictBoolean(
        required=True, metadata={"description": "true enables interview scheduling for the job"}
    )


class SchedulingSchema(ma.Schema):
    job_id = ma.fields.UUID(required=True)
    scheduling = StrictBoolean(required=True)


class ClockTime(ma.fields.String):
    """HH:MM:SS, 24-hour."""

    default_error_messages = {
        "invalid_time": "Must be a time of day as HH:MM:SS (24-hour), e.g. 09:00:00."
    }

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs)
        if not TIME_PATTERN.match(text):
            raise self.make_error("invalid_time")
        return text


class ScheduleSettingSchema(StrictSchema):
    """PUT body: fields not sent take their defaults (PUT replaces the setting)."""

    window_start_time = ClockTime(
        required=True,
        metadata={
            "example": "09:00:00",
            "description": "Start of the daily calling window (HH:MM:SS, HIREKIT_TIMEZONE)",
        },
    )
    window_end_time = ClockTime(
        required=True,
        metadata={
            "example": "17:00:00",
            "description": "End of the window; after window_start_time (windows do not cross "
            "midnight)",
        },
    )
    daily_attempts = BoundedInteger(0, 5, metadata={"description": "Call attempts per day, 0-5"})
    total_attempts = BoundedInteger(
        0,
        TOTAL_ATTEMPTS_MAX,
        metadata={"description": f"Call attempts in all, 0-{TOTAL_ATTEMPTS_MAX}"},
    )
    retry_interval = minutes("Minutes between attempts")
    days_of_week = ma.fields.List(
        BoundedInteger(1, 7), metadata={"description": "ISO days: 1 Monday ... 7 Sunday"}
    )
    email_enabled = StrictBoolean()
    email_notify_minutes = minutes("Minutes before the call")
    email_repeat = StrictBoolean()
    sms_enabled = StrictBoolean()
    sms_notify_minutes = minutes("Minutes before the call")
    sms_repeat = StrictBoolean()
    voicemail_enabled = StrictBoolean()
    repeat_calling = StrictBoolean(
        metadata={
            "description": (
                "When an application re-enters ACTIVE after its candidate already completed a "
                "screening call for the job: "
                "true starts a new series of attempts, false (default) does not call again (one "
                "completed screening per "
                "application; instant calls are always allowed)"
            )
        }
    )
    call_schedule_minutes = minutes("Minutes after the trigger before the first call")
    default = StrictBoolean()
    name = Text(max_length=255, metadata={"description": "A label for this setting"})

    @ma.validates_schema
    def window_in_order(self, data, **kwargs):
        start, end = data.get("window_start_time"), data.get("window_end_time")
        if start and end and start >= end:
            raise ma.ValidationError(
                "Must be after window_start_time (windows cannot cross midnight).",
                field_name="window_end_time",
            )

    @ma.post_load
    def distinct_sorted_days(self, data, **kwargs):
        if "days_of_week" in data:
            data["days_of_week"] = sorted(set(data["days_of_week"]))
        return data


class ScheduleSettingRecordSchema(ma.Schema):
    job_id = ma.fields.UUID(required=True)
    scheduling = StrictBoolean(required=True)
    window_start_time = ma.fields.String(required=True)
    window_end_time = ma.fields.String(required=True)
    daily_attempts = ma.fields.Integer(required=True)
    total_attempts = ma.fields.Integer(required=True)
    retry_interval = ma.fields.Integer(required=True)
    days_of_week = ma.fields.List(ma.fields.Integer(), required=True)
    email_enabled = StrictBoolean(required=True)
    email_notify_minutes = ma.fields.Integer(required=True)
    email_repeat = StrictBoolean(required=True)
    sms_enabled = StrictBoolean(required=True)
    sms_notify_minutes = ma.fields.Integer(required=True)
    sms_repeat = StrictBoolean(required=True)
    voicemail_enabled = StrictBoolean(required=True)
    repeat_calling = StrictBoolean(required=True)
    call_schedule_minutes = ma.fields.Integer(required=True)
    default = StrictBoolean(required=True)
    name = ma.fields.String(required=True)
