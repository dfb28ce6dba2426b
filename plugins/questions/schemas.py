"""Question bodies, the PATCH query, the question record, and the with-questions application
bodies."""

import marshmallow as ma

from app.http.api import RecordSchema, UtcDateTime, WholeListMetaSchema
from app.http.fields import StrictSchema, Text
from app.http.listing import WholeListArgsSchema
from plugins.applications.schemas import ApplicationCreateSchema, ApplicationSchema


class QuestionBodySchema(StrictSchema):
    """Without application_id the question belongs to the job, with one to that application of the
    job."""

    question_text = Text(required=True, max_length=2000)
    source_id = Text(
        required=True, max_length=255, metadata={"description": "The question's id in your system"}
    )
    application_id = ma.fields.UUID(
        load_default=None,
        allow_none=True,
        metadata={"description": "An application of this job; omit for a job-wide question"},
    )


class QuestionUpdateSchema(QuestionBodySchema):
    """PATCH body: text and source_id as on create; application_id changes only when sent (null
    moves it to the job)."""

    application_id = ma.fields.UUID(
        allow_none=True,
        metadata={
            "description": "Sent: move the question to this application "
            "(null: to the job). Omitted: unchanged"
        },
    )


class QuestionLocatorSchema(ma.Schema):
    """PATCH query: the question's current source_id (required) and, for an application's question,
    its application_id."""

    source_id = ma.fields.String(
        required=True, metadata={"description": "The question's current source_id"}
    )
    application_id = ma.fields.UUID(
        metadata={"description": "The application the question currently belongs to"}
    )


class QuestionListArgsSchema(WholeListArgsSchema):
    application_id = ma.fields.UUID(
        metadata={"description": "Also list this application's own questions"}
    )
    include_deleted = ma.fields.Boolean(
        load_default=False,
        metadata={
            "description": "Also list deleted questions, as tombstones (deleted: true, "
            "deleted_at), for sync"
        },
    )


class QuestionSchema(RecordSchema):
    job_id = ma.fields.UUID(attribute="job_id")
    application_id = ma.fields.UUID(attribute="application_id", allow_none=True)
    question_text = ma.fields.String()
    source_id = ma.fields.String()
    position = ma.fields.Integer(
        metadata={"description": "Order within the job; lists sort by position, then created_at"}
    )
    generated = ma.fields.Boolean(metadata={"description": "Made by POST /questions/generate"})
    deleted = ma.fields.Boolean(
        dump_only=True,
        metadata={"description": "A tombstone: only listed with include_deleted=true"},
    )
    deleted_at = UtcDateTime(
        dump_only=True,
        allow_none=True,
        metadata={"description": "When it was deleted; null if not"},
    )


class QuestionListSchema(WholeListMetaSchema):
    data = ma.fields.List(ma.fields.Nested(QuestionSchema), required=True)


class AttachedQuestionSchema(StrictSchema):
    question_text = Text(required=True, max_length=2000)
    source_id = Text(required=True, max_length=255)


class ApplicationWithQuestionsCreateSchema(ApplicationCreateSchema):
    """The application create body plus `questions` (each question_text and source_id), attached to
    the new application."""

    questions = ma.fields.List(
        ma.fields.Nested(AttachedQuestionSchema),
        load_default=list,
        validate=ma.validate.Length(max=100),
    )

    @ma.validates("questions")
    def source_ids_unique(self, questions, **kwargs):
        seen = set()
        for item in questions:
            if "source_id" not in item:  # an invalid item: its own error is reported
                continue
            if item["source_id"] in seen:
                raise ma.ValidationError(f"source_id {item['source_id']!r} appears more than once.")
            seen.add(item["source_id"])


class ApplicationWithQuestionsSchema(ApplicationSchema):
    questions = ma.fields.List(
        ma.fields.Nested(QuestionSchema), metadata={"description": "The questions attached"}
    )
