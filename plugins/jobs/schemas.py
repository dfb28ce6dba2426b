"""Job bodies (create, update) and the job record."""

import marshmallow as ma

from app.http.api import PageArgsSchema, RecordSchema
from app.http.fields import IsoDateString, OnlySentFields, StrictSchema, Text, optional_text

MONEY = ma.validate.Range(min=0)
# The longest job description (characters): several times the longest postings ATSs carry, HTML
# included; it bounds what a job costs to store, list, show on the board and generate questions
# from.
MAX_DESCRIPTION_LENGTH = 50_000
DESCRIPTION = {"description": f"Job description (at most {MAX_DESCRIPTION_LENGTH:,} characters)"}


def pay_range_problems(low: float | None, high: float | None) -> dict:
    """The job's pay range rule, for a body alone and for a change merged with the stored job: the
    field messages when max_pay_rate is below min_pay_rate, else none."""
    if low is not None and high is not None and low > high:
        return {"max_pay_rate": ["Must not be less than min_pay_rate."]}
    return {}


class JobFieldsSchema(StrictSchema):
    """Every job field once, all optional; the create and update bodies redeclare the fields each
    requires."""

    title = optional_text(max_length=500)
    client_name = optional_text(max_length=255)
    industry = optional_text(max_length=255)
    job_code = optional_text(max_length=255)
    address = optional_text(max_length=500)
    workplace_type = optional_text(max_length=100, metadata={"example": "remote"})
    city = optional_text(max_length=255)
    state_name = optional_text(max_length=255)
    zip_code = optional_text(max_length=50)
    country = optional_text(max_length=255)
    employment_type = optional_text(max_length=100, metadata={"example": "full_time"})
    duration = optional_text(max_length=255)
    start_date = IsoDateString(
        load_default=None, allow_none=True, metadata={"example": "2026-01-05T00:00:00Z"}
    )
    end_date = IsoDateString(load_default=None, allow_none=True)
    posting_date = IsoDateString(load_default=None, allow_none=True)
    pay_frequency = optional_text(max_length=100, metadata={"example": "hourly"})
    min_pay_rate = ma.fields.Float(
        load_default=None, allow_none=True, allow_nan=False, validate=MONEY
    )
    max_pay_rate = ma.fields.Float(
        load_default=None, allow_none=True, allow_nan=False, validate=MONEY
    )
    pay_rate_currency = optional_text(max_length=16, metadata={"example": "USD"})
    recruiter_name = optional_text(max_length=255)
    recruiter_email = ma.fields.Email(load_default=None, allow_none=True)
    recruiter_work_phone_no = optional_text(max_length=64)
    status = optional_text(
        max_length=100, metadata={"description": "Free text; open, closed and draft are suggested"}
    )
    desc = optional_text(
        attribute="description",
        data_key="desc",
        max_length=MAX_DESCRIPTION_LENGTH,
        metadata=DESCRIPTION,
    )

    @ma.validates_schema
    def pay_range_in_order(self, data, **kwargs):
        problems = pay_range_problems(data.get("min_pay_rate"), data.get("max_pay_rate"))
        if problems:
            raise ma.ValidationError(problems)


class JobCreateSchema(JobFieldsSchema):
    title = Text(required=True, max_length=500)
    industry = Text(required=True, max_length=255)
    state_name = Text(required=True, max_length=255)
    country = Text(required=True, max_length=255)
    recruiter_name = Text(required=True, max_length=255)
    recruiter_email = ma.fields.Email(required=True)
    recruiter_work_phone_no = Text(required=True, max_length=64)
    status = Text(
        required=True,
        max_length=100,
        metadata={"description": "Free text; open, closed and draft are suggested"},
    )
    desc = Text(
        required=True,
        attribute="description",
        data_key="desc",
        max_length=MAX_DESCRIPTION_LENGTH,
        metadata=DESCRIPTION,
    )
    source_id = Text(
        required=True,
        max_length=255,
        metadata={"description": "The job's id in your system; unique per tenant"},
    )


class JobUpdateSchema(OnlySentFields, JobFieldsSchema):
    """PATCH: title is required, every other field optional and only changed when present; source_id
    is not accepted."""

    title = Text(required=True, max_length=500)


class JobSchema(RecordSchema, JobFieldsSchema):
    number = ma.fields.Integer(
        dump_only=True,
        metadata={"description": "Per-tenant sequential number; the id on the /jobs board"},
    )
    source_id = ma.fields.String()


class JobListArgsSchema(PageArgsSchema):
    source_id = ma.fields.String()
    status = ma.fields.String(metadata={"description": "Case-insensitive"})
    city = ma.fields.String(metadata={"description": "Case-insensitive"})
    state_name = ma.fields.String(metadata={"description": "Case-insensitive"})
    country = ma.fields.String(metadata={"description": "Case-insensitive"})
    employment_type = ma.fields.String(metadata={"description": "Case-insensitive"})
    workplace_type = ma.fields.String(metadata={"description": "Case-insensitive"})
