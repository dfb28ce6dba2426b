"""Application bodies (create, update), the application record with its candidate and job summaries,
list filters."""

import marshmallow as ma

from app.http.api import PageArgsSchema, RecordSchema
from app.http.fields import StrictSchema, Text, optional_text
from app.files.fields import ResumeBodyMixin, ResumeField
from plugins.applications.models import STAGES
from plugins.candidates.schemas import CandidateSchema
from plugins.jobs.schemas import JobSchema


class Stage(ma.fields.String):
    """application_stage: ACTIVE or PASSIVE in any case, answered and stored upper-case."""

    default_error_messages = {"stage": f"Must be one of: {', '.join(STAGES)} (any case)."}

    def __init__(self, **kwargs):
        super().__init__(
            metadata={
                "enum": list(STAGES),
                "description": "ACTIVE or PASSIVE, any case; stored upper-case",
            },
            **kwargs,
        )

    def _deserialize(self, value, attr, data, **kwargs):
        stage = super()._deserialize(value, attr, data, **kwargs).strip().upper()
        if stage not in STAGES:
            raise self.make_error("stage")
        return stage


class ApplicationCreateSchema(ResumeBodyMixin, StrictSchema):
    """The create body; the resume comes as `file` (a reference), `base64file` or a multipart file
    part."""

    candidate_source_id = Text(
        required=True,
        max_length=255,
        metadata={"description": "source_id of one of your candidates"},
    )
    job_source_id = Text(
        required=True, max_length=255, metadata={"description": "source_id of one of your jobs"}
    )
    candidate_id = ma.fields.UUID(
        load_default=None,
        allow_none=True,
        metadata={"description": "When given, must be the candidate candidate_source_id names"},
    )
    job_id = ma.fields.UUID(
        load_default=None,
        allow_none=True,
        metadata={"description": "When given, must be the job job_source_id names"},
    )
    source_application_status = Text(required=True, max_length=100, metadata={"example": "applied"})
    application_stage = Stage(required=True)
    source_id = optional_text(
        max_length=255,
        metadata={
            "description": "The application's id in your system (optional; unique per tenant). "
            "What the source_id list filter and the calls' application_source_id match"
        },
    )


class ApplicationUpdateSchema(ResumeBodyMixin, StrictSchema):
    """The update body: status and stage, and optionally a new resume."""

    source_application_status = Text(required=True, max_length=100)
    application_stage = Stage(required=True)


class CandidateSummarySchema(CandidateSchema):
    """The candidate an application answers with: who, and how to reach them."""

    class Meta:
        fields = ("id", "source_id", "first_name", "last_name", "email", "phone_no")


class JobSummarySchema(JobSchema):
    """The job an application answers with: which, and where."""

    class Meta:
        fields = ("id", "number", "source_id", "title", "status", "city", "state_name", "country")


class ApplicationSchema(RecordSchema):
    source_id = ma.fields.String(allow_none=True)
    candidate_id = ma.fields.UUID(attribute="candidate_id")
    job_id = ma.fields.UUID(attribute="job_id")
    candidate_source_id = ma.fields.String()
    job_source_id = ma.fields.String()
    source_application_status = ma.fields.String()
    status = ma.fields.String(
        attribute="source_application_status",
        dump_only=True,
        metadata={
            "description": "The application's current status in the source system "
            "(source_application_status), so a "
            "webhook's fields select `status` on both events"
        },
    )
    application_stage = ma.fields.String(metadata={"enum": list(STAGES)})
    resume = ResumeField(
        metadata={
            "description": "Resume metadata, or null; the bytes are at /v1/applications/{id}/resume"
        }
    )
    candidate = ma.fields.Nested(CandidateSummarySchema)
    job = ma.fields.Nested(JobSummarySchema)


class ApplicationListArgsSchema(PageArgsSchema):
    job_id = ma.fields.UUID(metadata={"description": "A job's id (a malformed UUID is 422)"})
    candidate_id = ma.fields.UUID(
        metadata={"description": "A candidate's id (a malformed UUID is 422)"}
    )
    source_id = ma.fields.String(metadata={"description": "The application's own source_id"})
    job_source_id = ma.fields.String()
    candidate_source_id = ma.fields.String()
