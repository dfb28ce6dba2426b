"""Job operations shared by the REST routes, the board and the MCP tools."""

from __future__ import annotations

from app.http import listing
from app.errors import ValidationFailed
from app.data.prepared import Slots
from app.data.records import (
    apply_changes,
    create_with_source_id,
    get_owned,
    next_in_sequence,
    reserve_in_sequence,
    where_equal,
)
from app.data.list_rows import model_rows
from app.data.row_upserts import RowUpsert
from app.http.upserts import SourceIdUpsert
from plugins.jobs.models import Job
from plugins.jobs.schemas import JobCreateSchema, JobSchema, pay_range_problems

CASE_INSENSITIVE_FILTERS = (
    "status",
    "city",
    "state_name",
    "country",
    "employment_type",
    "workplace_type",
)
# the list's filters (JobListArgsSchema)
JOB_FILTERS = ("source_id", *CASE_INSENSITIVE_FILTERS)
JOB_ROWS = model_rows(Job)


def matching_jobs(slots: Slots):
    """The tenant's jobs matching the list filters sent, from their slots (app.data.prepared)."""
    return where_equal(
        Job.owned_rows(slots.value("tenant", Job.tenant)),
        Job,
        slots,
        JOB_FILTERS,
        case_insensitive=CASE_INSENSITIVE_FILTERS,
    )


def list_jobs(tenant_id: str, **args) -> dict:
    """A page of the tenant's jobs in either list mode (app.http.listing)."""
    window, filters = listing.split_window(args)
    return listing.answer(
        listing.Selection.of_tenant(Job, matching_jobs, tenant_id, filters, key="jobs"),
        window,
        tenant_id=tenant_id,
        list_name="jobs",
        filters=filters,
        read=JOB_ROWS,
    )


def get_job(tenant_id: str, job_id) -> Job:
    return get_owned(Job, tenant_id, job_id)


def create_job(tenant_id: str, values: dict) -> Job:
    return create_with_source_id(
        Job, tenant_id, values, number=next_in_sequence(tenant_id, JOB_NUMBERS)
    )


def update_job(tenant_id: str, job_id, values: dict) -> Job:
    job = get_job(tenant_id, job_id)
    problems = pay_range_problems(
        values.get("min_pay_rate", job.min_pay_rate), values.get("max_pay_rate", job.max_pay_rate)
    )
    if problems:
        raise ValidationFailed(problems)
    return apply_changes(job, values)


def new_job_numbers(tenant_id: str, count: int) -> list[dict]:
    """The numbers of `count` new jobs of a batch, taken at once."""
    return [{"number": number} for number in reserve_in_sequence(tenant_id, JOB_NUMBERS, count)]


JOB_NUMBERS = "job_number"
JOB_UPSERT = SourceIdUpsert(
    model=Job,
    record_schema=JobSchema,
    create_schema=JobCreateSchema,
    create=create_job,
    replace=lambda tenant_id, job, values: update_job(tenant_id, job.id, values),
    rows=RowUpsert(Job, new_columns=new_job_numbers, kept_columns=("number",)),
)
