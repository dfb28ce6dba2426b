"""The privacy routes' bodies and answers: the export document, the anonymize body, the erasure
log."""

import marshmallow as ma

from app.http.api import PageArgsSchema, RecordSchema
from app.http.fields import StrictSchema
from plugins.privacy.anonymize import CALL_CONTENT, FIELDS, MARKER, RESUME


class ExportSchema(ma.Schema):
    """Everything held about one candidate (each list in its records' answer form)."""

    exported_at = ma.fields.String(
        required=True, metadata={"description": "When the document was assembled (UTC)"}
    )
    candidate = ma.fields.Dict(
        required=True, metadata={"description": "The candidate record, as GET /v1/candidates/{id}"}
    )
    consent = ma.fields.Dict(
        required=True,
        metadata={
            "description": "Their consent to calls, texts and emails: `current` per channel "
            "(granted, source, changed_at), "
            "`changes` (each grant or revocation still kept as a candidate.consent event), and the "
            "time "
            "zone their calls follow (`timezone`, `timezone_source`)"
        },
    )
    applications = ma.fields.List(
        ma.fields.Dict(), required=True, metadata={"description": "Their applications"}
    )
    questions = ma.fields.List(
        ma.fields.Dict(),
        required=True,
        metadata={"description": "Screening questions asked on their applications only"},
    )
    calls = ma.fields.List(
        ma.fields.Dict(),
        required=True,
        metadata={"description": "Their calls: status, transcript, summary, assessment, timing"},
    )
    reminders = ma.fields.List(
        ma.fields.Dict(),
        required=True,
        metadata={
            "description": "Their calls' email and SMS reminders (call_id, channel, address, "
            "due_at, sent_at, status, error)"
        },
    )
    answers = ma.fields.List(
        ma.fields.Dict(),
        required=True,
        metadata={
            "description": "Their answers to screening questions, per call (call_id, question, "
            "answer, ...)"
        },
    )
    events = ma.fields.List(
        ma.fields.Dict(),
        required=True,
        metadata={
            "description": "Stored events about the candidate, their applications and calls, as "
            "GET /v1/events"
        },
    )
    webhook_deliveries = ma.fields.List(
        ma.fields.Dict(),
        required=True,
        metadata={
            "description": "Deliveries of those events to your webhooks, with their attempts"
        },
    )
    resumes = ma.fields.List(
        ma.fields.Dict(),
        required=True,
        metadata={
            "description": "Stored resumes (of: candidate or application, record_id, file_name, "
            "content_type, size, "
            "sha256, reference) and `download`, the route answering the bytes"
        },
    )
    recordings = ma.fields.List(
        ma.fields.Dict(),
        required=True,
        metadata={
            "description": "Recordings of their calls (call_id, channels, duration_seconds, "
            "created_at) and `download`, the route answering the audio"
        },
    )


class CandidateDeletedSchema(ma.Schema):
    """The record of a candidate.deleted event (and what its webhooks may select): ids and time,
    nothing personal."""

    id = ma.fields.UUID(metadata={"description": "The erased candidate's id: delete your copy"})
    deleted = ma.fields.Boolean(metadata={"description": "Always true"})
    deleted_at = ma.fields.String(metadata={"description": "When it was erased (ISO 8601 UTC)"})
    application_ids = ma.fields.List(
        ma.fields.UUID(), metadata={"description": "Their applications, erased with them"}
    )


class AnonymizeBodySchema(StrictSchema):
    fields = ma.fields.List(
        ma.fields.String(validate=ma.validate.OneOf(FIELDS)),
        required=True,
        validate=ma.validate.Length(min=1, max=len(FIELDS)),
        metadata={
            "description": f"What to replace by {MARKER!r}: any of {', '.join(FIELDS)}. "
            f"`{RESUME}` removes the resume files and their metadata (candidate and "
            f"applications); `{CALL_CONTENT}` empties each call's transcript, "
            "summary and assessment; `phone_no` also replaces the number on their "
            "calls. Events and deliveries about the candidate carry the marker "
            "instead of the replaced values.",
            "example": ["first_name", "last_name", "email", "phone_no"],
        },
    )


class ErasureSchema(RecordSchema):
    """An erasure: ids and counts, no personal data."""

    candidate_id = ma.fields.UUID(
        metadata={"description": "The erased candidate's id (now a tombstone)"}
    )
    reason = ma.fields.String(
        metadata={"description": "request (DELETE or `flask privacy erase`) or retention"}
    )
    key_id = ma.fields.Integer(
        allow_none=True,
        metadata={
            "description": "Id of the API key that asked (null for the operator's CLI and the "
            "retention pass)"
        },
    )
    record_ids = ma.fields.Dict(
        metadata={
            "description": "Ids of the erased applications and calls, and of the "
            "events whose payload was removed"
        }
    )
    counts = ma.fields.Dict(
        metadata={
            "description": "How many applications, calls, questions, events, "
            "webhook_deliveries, stored_answers, resume_files and recordings it touched"
        }
    )


class ErasureListArgsSchema(PageArgsSchema):
    """Page or cursor mode, like every /v1 list."""
