"""The call record (DESIGN: status, assessment, summary, transcript, timing, attempt) and the list filters of SPEC 4.1."""

import marshmallow as ma

from app.http.api import PageArgsSchema, RecordSchema, UtcDateTime
from app.http.fields import StrictSchema, Text
from plugins.calls.models import REMINDER_CHANNELS, REMINDER_STATUSES, STATUSES


class AnswerSchema(ma.Schema):
    question = ma.fields.String()
    answer = ma.fields.String(allow_none=True)
    meets_requirement = ma.fields.Boolean()
    note = ma.fields.String(allow_none=True)


class AssessmentSchema(ma.Schema):
    score = ma.fields.Integer(metadata={"description": "0-100"})
    recommendation = ma.fields.String(metadata={"description": "advance, hold or reject"})
    answers = ma.fields.List(ma.fields.Nested(AnswerSchema))
    analyzer = ma.fields.String(metadata={"description": "rules, or llm:<model>"})


class TranscriptTurnSchema(ma.Schema):
    speaker = ma.fields.String(metadata={"description": "agent or candidate"})
    text = ma.fields.String()
    question_index = ma.fields.Integer(allow_none=True)


class CallSchema(RecordSchema):
    application_id = ma.fields.UUID()
    job_id = ma.fields.UUID()
    candidate_id = ma.fields.UUID()
    application_source_id = ma.fields.String(allow_none=True)
    job_source_id = ma.fields.String(allow_none=True)
    candidate_source_id = ma.fields.String(allow_none=True)
    status = ma.fields.String(metadata={"description": ", ".join(STATUSES)})
    attempt = ma.fields.Integer(metadata={"description": "1 for an instant call; n-th attempt of a scheduled series"})
    trigger = ma.fields.String(metadata={
        "description": "instant, scheduled, or callback (a time the client or the candidate chose)"})
    scheduled_for = UtcDateTime(allow_none=True, metadata={
        "description": "When a queued call is to be placed; null for an instant call placed at once"})
    booked_by = ma.fields.String(allow_none=True, metadata={
        "description": "Who chose scheduled_for by a reschedule or callback: api, candidate_page, candidate_sms, "
                       "candidate_call; null otherwise"})
    phone_no = ma.fields.String()
    provider = ma.fields.String()
    summary = ma.fields.String(allow_none=True)
    assessment = ma.fields.Nested(AssessmentSchema, allow_none=True)
    transcript = ma.fields.List(ma.fields.Nested(TranscriptTurnSchema))
    voicemail_left = ma.fields.Boolean()
    error = ma.fields.String(allow_none=True)
    started_at = UtcDateTime(allow_none=True)
    ended_at = UtcDateTime(allow_none=True)


class ReminderSchema(ma.Schema):
    """One reminder of a scheduled call, as stored: where it goes, when, and what came of it."""

    id = ma.fields.UUID()
    channel = ma.fields.String(metadata={"description": ", ".join(REMINDER_CHANNELS)})
    address = ma.fields.String(allow_none=True, metadata={
        "description": "The email address or phone number it was (or is to be) sent to, unmasked: the same the "
                       "candidate record shows"})
    due_at = UtcDateTime(metadata={"description": "When it is (or was last) due; later than planned after a retry"})
    sent_at = UtcDateTime(allow_none=True)
    status = ma.fields.String(metadata={"description": ", ".join(REMINDER_STATUSES)})
    attempts = ma.fields.Integer(metadata={"description": "Sends tried so far"})
    error = ma.fields.String(allow_none=True, metadata={
        "description": "Why it failed, was skipped or canceled, or why a send is being retried"})


class CallWithRemindersSchema(CallSchema):
    """A call read by its id: the record, with its reminders."""

    reminders = ma.fields.List(ma.fields.Nested(ReminderSchema), metadata={
        "description": "The scheduled call's email and SMS reminders, by due time (none for an instant call)"})


class CallListArgsSchema(PageArgsSchema):
    job_id = ma.fields.UUID()
    candidate_id = ma.fields.UUID()
    application_id = ma.fields.UUID()
    application_source_id = ma.fields.String()
    job_source_id = ma.fields.String()
    candidate_source_id = ma.fields.String()
    status = ma.fields.String(validate=ma.validate.OneOf(STATUSES))


class InstantCallArgsSchema(ma.Schema):
    outside_calling_hours = ma.fields.String(load_default="refuse", validate=ma.validate.OneOf(("refuse", "queue")),
                                             metadata={"description": (
        "When the candidate may not be called now (outside the calling hours in their zone, or past the daily cap "
        "per number): `refuse` (default) answers 409 naming the next allowed moment; `queue` queues the call for "
        "that moment (202, with scheduled_for)")})


class RescheduleBodySchema(StrictSchema):
    """POST /v1/calls/{id}/reschedule."""

    scheduled_for = ma.fields.DateTime(required=True, metadata={
        "description": "The new time, ISO 8601. With an offset or Z it is that instant; without one it is read in the "
                       "candidate's own zone (the candidate record's `timezone`). It must fall in the job's window and "
                       "days and the calling hours, in the candidate's zone", "example": "2026-12-01T10:30:00-05:00"})


class CancelBodySchema(StrictSchema):
    """POST /v1/calls/{id}/cancel (the body is optional)."""

    reason = Text(load_default=None, allow_none=True, max_length=500, metadata={
        "description": "Why, kept as the call's `error`; default 'canceled by the client'"})
