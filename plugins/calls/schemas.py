"""The call record (DESIGN: status, assessment, summary, transcript, timing, attempt) and the list filters of SPEC 4.1."""

import marshmallow as ma

from app.http.api import PageArgsSchema, RecordSchema, UtcDateTime
from app.http.fields import StrictBoolean
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


class RecordingSchema(ma.Schema):
    """Where the tenant fetches a call's recording (both channels); the audio stays with the telephony provider."""

    url = ma.fields.String(metadata={"description": "GET it with the API key: /v1/calls/{id}/recording"})
    channels = ma.fields.Integer(metadata={"description": "2: the agent and the candidate on a channel each"})
    duration_seconds = ma.fields.Integer(allow_none=True)
    created_at = UtcDateTime()


class RecordingField(ma.fields.Nested):
    """The call's recording, read from the recordings table. Every change to a call's recording also writes the
    call's row (plugins.calls.recordings.keep_recording), so the dump stays a function of the row's version and
    answers built once per row (app.http.representations) stay right."""

    PURE_FUNCTION_OF_ROW = True

    def get_value(self, obj, attr, accessor=None, default=ma.missing):
        from plugins.calls.recordings import recording_record

        return recording_record(obj.id)


class CallSchema(RecordSchema):
    application_id = ma.fields.UUID()
    job_id = ma.fields.UUID()
    candidate_id = ma.fields.UUID()
    application_source_id = ma.fields.String(allow_none=True)
    job_source_id = ma.fields.String(allow_none=True)
    candidate_source_id = ma.fields.String(allow_none=True)
    status = ma.fields.String(metadata={"description": ", ".join(STATUSES)})
    attempt = ma.fields.Integer(metadata={"description": "1 for an instant call; n-th attempt of a scheduled series"})
    trigger = ma.fields.String(metadata={"description": "instant or scheduled"})
    scheduled_for = UtcDateTime(allow_none=True)
    phone_no = ma.fields.String()
    provider = ma.fields.String()
    summary = ma.fields.String(allow_none=True)
    assessment = ma.fields.Nested(AssessmentSchema, allow_none=True)
    transcript = ma.fields.List(ma.fields.Nested(TranscriptTurnSchema))
    voicemail_left = ma.fields.Boolean()
    error = ma.fields.String(allow_none=True)
    started_at = UtcDateTime(allow_none=True)
    ended_at = UtcDateTime(allow_none=True)
    recording = RecordingField(RecordingSchema, allow_none=True, dump_only=True, metadata={
        "description": "The call's recording when the tenant records its calls (GET /v1/call-settings), else null"})


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


class CallSettingsSchema(ma.Schema):
    """The tenant's call settings."""

    recording = StrictBoolean(required=True, metadata={
        "description": "Record both channels of every call placed from now on (the opening says so); default false"})
