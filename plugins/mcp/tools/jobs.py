"""The jobs family's MCP tools: list, read, create and update job postings through
plugins.jobs.services."""

from __future__ import annotations

import marshmallow as ma

from app.http.batch_upserts import MAX_BATCH_ITEMS, BatchAnswerSchema, batch_body_schema, run_batch
from app.http.fields import StrictSchema
from plugins.jobs import services
from plugins.jobs.schemas import JobCreateSchema, JobListArgsSchema, JobSchema, JobUpdateSchema
from plugins.mcp.tools import Tool, get_tool, list_tool, with_fields

JOB_ID = ma.fields.String(
    required=True, metadata={"description": "The job's id (a UUID from list_jobs or create_job)"}
)


class JobIdArgsSchema(StrictSchema):
    """Which job."""

    job_id = JOB_ID


UpdateJobArgsSchema = with_fields(JobUpdateSchema, "UpdateJobArgsSchema", job_id=JOB_ID)
UpsertJobsArgsSchema = batch_body_schema(JobCreateSchema, "UpsertJobsArgsSchema")


def update_job(tenant_id: str, arguments: dict):
    job_id = arguments.pop("job_id")
    return services.update_job(tenant_id, job_id, arguments)


TOOLS = (
    list_tool(
        "jobs",
        JobListArgsSchema,
        JobSchema,
        services.list_jobs,
        (
            "List the job postings of your organisation, oldest first, one page at a time. "
            "Optional filters (exact match, case-insensitive): status (e.g. open, closed, draft), "
            "city, state_name, "
            "country, employment_type, workplace_type, and source_id (the job's id in the ATS). "
            "page starts at 1 (default 1); size is 1-100 (default 20). The answer has data (the "
            "jobs), total and total_pages."
        ),
    ),
    get_tool(
        "jobs",
        "get_job",
        "Get a job",
        JobIdArgsSchema,
        JobSchema,
        services.get_job,
        "Read one job posting by its id (a UUID): title, desc (the description), status, location, "
        "pay and recruiter.",
    ),
    Tool(
        name="create_job",
        title="Create a job",
        description=(
            "Create a job posting. Required: title, industry, state_name, country, recruiter_name, "
            "recruiter_email, "
            "recruiter_work_phone_no, status (e.g. open), desc (the full job description) and "
            "source_id (your unique "
            "id for the job; a source_id already used fails and names the existing job's id). "
            "Dates (start_date, end_date, posting_date) are ISO 8601, e.g. 2026-01-31 or "
            "2026-01-31T09:00:00Z; "
            "min_pay_rate must not exceed max_pay_rate. Returns the created job with its id."
        ),
        arguments=JobCreateSchema,
        result=JobSchema,
        run=lambda tenant_id, args: services.create_job(tenant_id, args),
        plugin="jobs",
        read_only=False,
        idempotent=False,
    ),
    Tool(
        name="update_job",
        title="Update a job",
        description=(
            "Change a job posting: job_id and title are required (send the current title to keep "
            "it); every other "
            "field you send replaces the stored value and fields you leave out stay as they are. "
            "source_id cannot be changed. Returns the updated job."
        ),
        arguments=UpdateJobArgsSchema,
        result=JobSchema,
        run=update_job,
        plugin="jobs",
        read_only=False,
        idempotent=True,
    ),
    Tool(
        name="upsert_jobs",
        title="Create or replace many jobs",
        description=(
            f"Create or replace up to {MAX_BATCH_ITEMS} job postings at once by their source_id "
            "(your id for each job): "
            "items is a list of create_job bodies (same required fields, source_id included). A "
            "job whose source_id "
            "is new is created (status 201); one that exists is replaced by the body (status 200; "
            "fields left out "
            "become empty). Each item is checked on its own: an invalid one is reported in its "
            "place (status 422 with "
            "its error) and the others are still written, unless atomic is true, in which case any "
            "invalid item "
            "fails the whole call and nothing is written. Send each source_id once per call. The "
            "result lists every "
            "item's status, source_id and id (or error) in the order sent, and counts created, "
            "replaced and failed. "
            "Each item counts against your rate limit as one request."
        ),
        arguments=UpsertJobsArgsSchema,
        result=BatchAnswerSchema,
        run=lambda tenant_id, args: run_batch(services.JOB_UPSERT, tenant_id, args),
        plugin="jobs",
        read_only=False,
        idempotent=True,
    ),
)
