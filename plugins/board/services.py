"""The job board: published jobs by number, and applying to one with a name, an email and a resume.

A job is published unless its status is closed or draft (any case); unpublished jobs are not found
on the board."""

from __future__ import annotations

import peewee as pw

from app.files.uploads import ResumeUpload
from app.data.db import database
from app.errors import NotFound
from plugins.applications import services as applications
from plugins.applications.models import Application
from plugins.candidates import services as candidates
from plugins.jobs.models import Job

UNPUBLISHED_STATUSES = ("closed", "draft")
BOARD_SOURCE = "job_board"
# Job.number is a 32-bit column: a larger number in the path names no job
MAX_JOB_NUMBER = 2**31 - 1


def published(tenant_id: str):
    status = pw.fn.LOWER(pw.fn.COALESCE(Job.status, ""))
    return Job.owned_by(tenant_id).where(status.not_in(UNPUBLISHED_STATUSES))


def list_jobs(tenant_id: str, *, page: int, limit: int) -> list[Job]:
    query = published(tenant_id).select(Job.number, Job.title, Job.description)
    return list(query.order_by(Job.number).paginate(page, limit))


def get_job(tenant_id: str, number: int) -> Job:
    job = (
        published(tenant_id).where(Job.number == number).first()
        if 0 < number <= MAX_JOB_NUMBER
        else None
    )
    if job is None:
        raise NotFound("job", number)
    return job


def split_name(name: str) -> tuple[str, str | None]:
    first, _, last = " ".join(name.split()).partition(" ")
    return first, last or None


def apply(
    tenant_id: str, number: int, *, name: str, email: str, resume: ResumeUpload
) -> Application:
    """Find the tenant's candidate by email (or create one from the name), then the ACTIVE
    application with the resume."""
    job = get_job(tenant_id, number)
    with database.atomic():
        candidate = candidates.find_by_email(tenant_id, email)
        if candidate is None:
            first_name, last_name = split_name(name)
            candidate = candidates.create_candidate(
                tenant_id,
                {
                    "first_name": first_name,
                    "last_name": last_name,
                    "email": email,
                    "source": BOARD_SOURCE,
                    "source_id": f"board:{email.lower()}",
                    "resume": resume,
                },
            )
        return applications.create_for(
            tenant_id,
            candidate,
            job,
            {
                "source_application_status": "applied",
                "application_stage": "ACTIVE",
                "resume": resume,
            },
        )
