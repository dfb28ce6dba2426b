"""The call record (status, assessment, summary, transcript, timing, attempt;
docs/screening-calls.md, The record) and GET /v1/calls's list filters."""

import marshmallow as ma

from app.http.api import PageArgsSchema, RecordSchema, UtcDateTime
from app.http.fields import StrictBoolean, StrictSchema, Text
from plugins.calls.conversation.contract import END_REASONS
from plugins.calls.models import (
    ANSWER_TYPES,
    REMINDER_CHANNELS,
    REMINDER_REPLY,
    REMINDER_STATUSES,
    STATUSES,
)


FAQ_MAX_ENTRIES, FAQ_QUESTION_CHARS, FAQ_ANSWER_CHARS = 100, 500, 2000
RUBRIC_MAX_CHOICES, RUBRIC_CHOICE_CHARS = 20, 200


def about(text: str) -> dict:
    """A field's metadata: its description in the OpenAPI document."""
    return {"description": text}


# A typed answer: a boolean (yes_no), a number, the chosen option or the text; null when unanswered
TYPED_VALUE = {
    "anyOf": [
        {"type": "boolean"},
        {"type": "number"},
        {"type": "string"},
        {"type": "string", "nullable": True, "enum": [None]},
    ],
    "description": "The typed answer: boolean for yes_no, number, the chosen option for "
    "choice, the words for text; null when unanswered",
}


class AnswerSchema(ma.Schema):
    question = ma.fields.String()
    answer = ma.fields.String(allow_none=True, metadata=about("What the candidate said to it"))
    meets_requirement = ma.fields.Boolean()
    note = ma.fields.String(allow_none=True)
    answer_type = ma.fields.String(allow_none=True, metadata=about(", ".join(ANSWER_TYPES)))
    value = ma.fields.Raw(allow_none=True, metadata=TYPED_VALUE)
    score = ma.fields.Integer(allow_none=True, metadata=about("0-5 against the question's rubric"))
    evidence = ma.fields.String(allow_none=True, metadata=about("The candidate's own words"))
    follow_ups = ma.fields.List(ma.fields.String(), metadata=about("Follow-ups the agent asked"))
    knockout = ma.fields.Boolean(metadata=about("Failing it makes the recommendation reject"))
    weight = ma.fields.Float(metadata=about("Its weight in the assessment's score"))


class AssessmentSchema(ma.Schema):
    score = ma.fields.Integer(metadata={"description": "0-100"})
    recommendation = ma.fields.String(metadata={"description": "advance, hold or reject"})
    answers = ma.fields.List(ma.fields.Nested(AnswerSchema))
    analyzer = ma.fields.String(metadata={"description": "rules, or llm:<model>"})
    knockouts_failed = ma.fields.List(
        ma.fields.String(),
        metadata=about(
            "The knockout questions whose answers did not meet them (then the recommendation is "
            "reject)"
        ),
    )


class TranscriptTurnSchema(ma.Schema):
    speaker = ma.fields.String(metadata={"description": "agent or candidate"})
    text = ma.fields.String(
        metadata=about(
            "What was said; for an interrupted agent turn, only what was spoken before the barge-in"
        )
    )
    question_index = ma.fields.Integer(allow_none=True)
    at_ms = ma.fields.Integer(allow_none=True, metadata=about("Milliseconds after the answer"))
    interrupted = ma.fields.Boolean(metadata=about("The candidate barged in on this agent turn"))


class QuestionResultSchema(AnswerSchema):
    """One screening question's outcome on a call, kept as the conversation goes."""

    index = ma.fields.Integer(metadata=about("The question's position on the call, from 0"))
    question_id = ma.fields.String()
    status = ma.fields.String(metadata=about("pending, answered or unanswered (after follow-ups)"))
    from_call_id = ma.fields.String(
        allow_none=True, metadata=about("The earlier, interrupted attempt the answer was given on")
    )


class CandidateQuestionSchema(ma.Schema):
    """A question the candidate asked on the call and what they were told."""

    question = ma.fields.String()
    answer = ma.fields.String(allow_none=True, metadata=about("The answer; null when passed on"))
    source = ma.fields.String(
        allow_none=True,
        metadata=about(
            "Where the answer came from: a job field (pay, workplace, location, ...) or faq:<n>"
        ),
    )
    passed_to_recruiter = ma.fields.Boolean()
    at_ms = ma.fields.Integer(allow_none=True)


class RecordingSchema(ma.Schema):
    """Where the tenant fetches a call's recording (both channels); the audio stays with the
    telephony provider."""

    url = ma.fields.String(
        metadata={"description": "GET it with the API key: /v1/calls/{id}/recording"}
    )
    channels = ma.fields.Integer(
        metadata={"description": "2: the agent and the candidate on a channel each"}
    )
    duration_seconds = ma.fields.Integer(allow_none=True)
    created_at = UtcDateTime()


class RecordingField(ma.fields.Nested):
    """The call's recording, read from the recordings table. Every change to a call's recording
    also writes the call's row (plugins.calls.recordings.keep_recording), so the dump stays a
    function of the row's version and answers built once per row (app.http.representations) stay
    right."""

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
    attempt = ma.fields.Integer(
        metadata={"description": "1 for an instant call; n-th attempt of a scheduled series"}
    )
    trigger = ma.fields.String(
        metadata={
            "description": "instant, scheduled, or callback (a time the client or the candidate "
            "chose)"
        }
    )
    scheduled_for = UtcDateTime(
        allow_none=True,
        metadata={
            "description": "When a queued call is to be placed; null for an instant call placed at "
            "once"
        },
    )
    booked_by = ma.fields.String(
        allow_none=True,
        metadata={
            "description": "Who chose scheduled_for by a reschedule or callback: api, "
            "candidate_page, candidate_sms, candidate_call; null otherwise"
        },
    )
    phone_no = ma.fields.String()
    provider = ma.fields.String()
    summary = ma.fields.String(allow_none=True)
    assessment = ma.fields.Nested(AssessmentSchema, allow_none=True)
    transcript = ma.fields.List(ma.fields.Nested(TranscriptTurnSchema))
    voicemail_left = ma.fields.Boolean()
    error = ma.fields.String(allow_none=True)
    started_at = UtcDateTime(allow_none=True)
    ended_at = UtcDateTime(allow_none=True)
    answers = ma.fields.List(
        ma.fields.Nested(QuestionResultSchema),
        metadata=about(
            "Per screening question: the answer, typed value, 0-5 score, evidence and follow-ups"
        ),
    )
    candidate_questions = ma.fields.List(ma.fields.Nested(CandidateQuestionSchema))
    end_reason = ma.fields.String(allow_none=True, metadata=about(", ".join(END_REASONS)))
    duration_seconds = ma.fields.Integer(allow_none=True)
    language = ma.fields.String(allow_none=True, metadata=about("The conversation's language"))
    analyzer = ma.fields.String(
        allow_none=True, metadata=about("Who led the conversation: rules, or llm:<model>")
    )
    recording = RecordingField(
        RecordingSchema,
        allow_none=True,
        dump_only=True,
        metadata={
            "description": "The call's recording when the tenant records its calls "
            "(GET /v1/call-settings), else null"
        },
    )


class ReminderSchema(ma.Schema):
    """One reminder of a scheduled call, as stored: where it goes, when, and what came of it."""

    id = ma.fields.UUID()
    channel = ma.fields.String(
        metadata={
            "description": ", ".join(REMINDER_CHANNELS)
            + f", or {REMINDER_REPLY}: the answer to the candidate's own text, sent by SMS once "
            "their calling hours allow"
        }
    )
    address = ma.fields.String(
        allow_none=True,
        metadata={
            "description": "The email address or phone number it was (or is to be) sent to, "
            "unmasked: the same the candidate record shows"
        },
    )
    due_at = UtcDateTime(
        metadata={"description": "When it is (or was last) due; later than planned after a retry"}
    )
    sent_at = UtcDateTime(allow_none=True)
    status = ma.fields.String(metadata={"description": ", ".join(REMINDER_STATUSES)})
    attempts = ma.fields.Integer(metadata={"description": "Sends tried so far"})
    error = ma.fields.String(
        allow_none=True,
        metadata={
            "description": "Why it failed, was skipped or canceled, or why a send is being retried"
        },
    )
    text = ma.fields.String(
        attribute="body",
        allow_none=True,
        metadata={"description": "A reply's text; null for a reminder (written when it is sent)"},
    )


class CallWithRemindersSchema(CallSchema):
    """A call read by its id: the record, with its reminders."""

    reminders = ma.fields.List(
        ma.fields.Nested(ReminderSchema),
        metadata={
            "description": "The scheduled call's email and SMS reminders, by due time (none for an "
            "instant call), and the answer to the candidate's last text when it had to wait for "
            "their calling hours"
        },
    )


class FaqEntrySchema(ma.Schema):
    question = ma.fields.String(
        required=True, validate=ma.validate.Length(min=1, max=FAQ_QUESTION_CHARS)
    )
    answer = ma.fields.String(
        required=True, validate=ma.validate.Length(min=1, max=FAQ_ANSWER_CHARS)
    )


class FaqBodySchema(ma.Schema):
    """The job's FAQ, replaced whole: what the call's agent may answer beyond the job record."""

    entries = ma.fields.List(
        ma.fields.Nested(FaqEntrySchema),
        required=True,
        validate=ma.validate.Length(max=FAQ_MAX_ENTRIES),
        metadata=about(f"At most {FAQ_MAX_ENTRIES}"),
    )


class FaqSchema(FaqBodySchema):
    job_id = ma.fields.UUID()
    updated_at = UtcDateTime(allow_none=True)


OPTION = ma.fields.String(validate=ma.validate.Length(min=1, max=RUBRIC_CHOICE_CHARS))


class RubricBodySchema(ma.Schema):
    """How a question's answer is judged. Unset, the type is inferred from the wording (how many:
    number, a closed question: yes_no, else text), yes is expected, and 'N years' in the question
    is the minimum."""

    answer_type = ma.fields.String(
        allow_none=True, load_default=None, validate=ma.validate.OneOf(ANSWER_TYPES)
    )
    expected = ma.fields.String(
        allow_none=True,
        load_default=None,
        validate=ma.validate.OneOf(("yes", "no")),
        metadata=about("yes_no: the answer that meets it (default yes)"),
    )
    minimum = ma.fields.Float(
        allow_none=True,
        load_default=None,
        validate=ma.validate.Range(min=0, max=1_000_000),
        metadata=about("number: the least that meets it"),
    )
    choices = ma.fields.List(
        OPTION,
        load_default=list,
        validate=ma.validate.Length(max=RUBRIC_MAX_CHOICES),
        metadata=about("choice: the options"),
    )
    accepted = ma.fields.List(
        OPTION,
        load_default=list,
        validate=ma.validate.Length(max=RUBRIC_MAX_CHOICES),
        metadata=about("choice: the options that meet it (empty: any)"),
    )
    knockout = ma.fields.Boolean(
        load_default=False,
        metadata=about("An answer that does not meet it makes the recommendation reject"),
    )
    weight = ma.fields.Float(
        load_default=1.0,
        validate=ma.validate.Range(min=0, max=100),
        metadata=about("Its weight in the score (default 1)"),
    )

    @ma.validates_schema
    def consistent(self, data, **kwargs):
        answer_type = data.get("answer_type")
        if answer_type == "choice" and not data.get("choices"):
            raise ma.ValidationError("A choice question needs its choices.", "choices")
        if answer_type != "choice" and (data.get("choices") or data.get("accepted")):
            raise ma.ValidationError("Only a choice question has choices.", "choices")
        if set(data.get("accepted") or ()) - set(data.get("choices") or ()):
            raise ma.ValidationError(
                "Every accepted option must be one of the choices.", "accepted"
            )
        if data.get("minimum") is not None and answer_type not in ("number", None):
            raise ma.ValidationError("Only a number question has a minimum.", "minimum")
        if data.get("expected") is not None and answer_type not in ("yes_no", None):
            raise ma.ValidationError("Only a yes_no question has an expected answer.", "expected")


class RubricSchema(RubricBodySchema):
    question_id = ma.fields.UUID()
    inferred_answer_type = ma.fields.String(
        metadata=about("The type calls use: answer_type, or the one inferred from the wording")
    )


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

    recording = StrictBoolean(
        required=True,
        metadata={
            "description": "Record both channels of every call placed from now on (the opening "
            "says so); default false"
        },
    )


class InstantCallArgsSchema(ma.Schema):
    outside_calling_hours = ma.fields.String(
        load_default="refuse",
        validate=ma.validate.OneOf(("refuse", "queue")),
        metadata={
            "description": (
                "When the candidate may not be called now (outside the calling hours in their "
                "zone, or past the daily cap per number): `refuse` (default) answers 409 naming "
                "the next allowed moment; `queue` queues the call for that moment (202, with "
                "scheduled_for)"
            )
        },
    )


class RescheduleBodySchema(StrictSchema):
    """POST /v1/calls/{id}/reschedule."""

    scheduled_for = ma.fields.DateTime(
        required=True,
        metadata={
            "description": "The new time, ISO 8601. With an offset or Z it is that instant; "
            "without one it is read in the candidate's own zone (the candidate record's "
            "`timezone`). It must fall in the job's window and days and the calling hours, in the "
            "candidate's zone",
            "example": "2026-12-01T10:30:00-05:00",
        },
    )


class CancelBodySchema(StrictSchema):
    """POST /v1/calls/{id}/cancel (the body is optional)."""

    reason = Text(
        load_default=None,
        allow_none=True,
        max_length=500,
        metadata={
            "description": "Why, kept as the call's `error`; default 'canceled by the client'"
        },
    )
