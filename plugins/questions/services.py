"""Screening-question operations: a job's questions and its applications' own, their order,
generation, and attachment."""

from __future__ import annotations

import re

import peewee as pw
from flask import current_app

from app.http import listing
from app.data.db import database, parse_uuid, utcnow
from app.errors import NotFound, ValidationFailed
from app.data.records import apply_changes, source_id_taken
from plugins.applications import services as applications
from plugins.applications.models import Application
from plugins.jobs import services as jobs
from plugins.jobs.models import Job
from plugins.questions.generation import JobFacts, generator_for, normalized
from plugins.questions.models import Question

GENERATED_SOURCE_ID = re.compile(r"^generated-(\d+)$")


def ordered(query):
    return query.order_by(Question.position, Question.created_at, Question.id)


def list_questions(
    tenant_id: str, job_id, *, application_id=None, include_deleted: bool = False, **window
) -> dict:
    """{data}: the job's own questions and, with application_id, that application's too, in position
    order (tombstones of deleted ones with include_deleted); or cursor pages of them
    (app.http.listing)."""
    job = jobs.get_job(tenant_id, job_id)
    scope = Question.application.is_null()
    if application_id is not None:
        application = application_of_job(tenant_id, job, application_id, not_found=True)
        scope = scope | (Question.application == application.id)
    query = Question.owned_by(tenant_id, include_deleted=include_deleted).where(
        (Question.job == job.id) & scope
    )
    return listing.answer_whole(
        query,
        window,
        tenant_id=tenant_id,
        list_name=f"questions/{job.id}",
        filters={"application_id": application_id, "include_deleted": include_deleted},
        order_by=(Question.position, Question.created_at, Question.id),
    )


def get_question(tenant_id: str, job_id, question_id) -> Question:
    job = jobs.get_job(tenant_id, job_id)
    ident = parse_uuid(question_id)
    question = (
        Question.owned_by(tenant_id)
        .where((Question.job == job.id) & (Question.id == ident))
        .first()
        if ident
        else None
    )
    if question is None:
        raise NotFound("question", question_id)
    return question


def application_of_job(
    tenant_id: str, job: Job, application_id, *, not_found: bool = False
) -> Application:
    """The tenant's application of this job; otherwise 404 (a query filter) or 422 naming
    application_id (a body field)."""
    application = (
        Application.owned_by(tenant_id)
        .where((Application.id == application_id) & (Application.job == job.id))
        .first()
    )
    if application is None:
        if not_found:
            raise NotFound(f"application of job {job.id}", application_id)
        raise ValidationFailed(
            {
                "application_id": [
                    f"No application {application_id} for job {job.id} in your tenant."
                ]
            }
        )
    return application


def _refuse_duplicate_source_id(job: Job, application_id, source_id: str, *, ignore=None) -> None:
    """source_id is unique among the job's own questions, and among each application's own."""
    query = Question.select(Question.id).where(
        (Question.job == job.id) & (Question.source_id == source_id) & Question.deleted_at.is_null()
    )
    query = query.where(
        Question.application.is_null()
        if application_id is None
        else Question.application == application_id
    )
    if ignore is not None:
        query = query.where(Question.id != ignore)
    existing = query.first()
    if existing is not None:
        raise source_id_taken(Question, source_id, existing.id)


def next_position(job_id) -> int:
    highest = Question.select(pw.fn.MAX(Question.position)).where(Question.job == job_id).scalar()
    return (highest or 0) + 1


def create_question(tenant_id: str, job_id, values: dict) -> Question:
    job = jobs.get_job(tenant_id, job_id)
    application_id = values.get("application_id")
    if application_id is not None:
        application_of_job(tenant_id, job, application_id)
    _refuse_duplicate_source_id(job, application_id, values["source_id"])
    with database.atomic():
        return Question.create(
            tenant=tenant_id,
            job=job.id,
            application=application_id,
            question_text=values["question_text"],
            source_id=values["source_id"],
            position=next_position(job.id),
        )


def update_question(tenant_id: str, job_id, question_id, locator: dict, values: dict) -> Question:
    """Change a question found by id and its current source_id (and application_id, when it belongs
    to one)."""
    question = get_question(tenant_id, job_id, question_id)
    if question.source_id != locator["source_id"] or (
        "application_id" in locator and question.application_id != locator["application_id"]
    ):
        raise NotFound(
            "question",
            f"{question_id} with source_id {locator['source_id']!r}"
            + (
                f" and application_id {locator['application_id']}"
                if "application_id" in locator
                else ""
            ),
        )
    job = question.job
    application_id = (
        values["application_id"] if "application_id" in values else question.application_id
    )
    if application_id is not None and application_id != question.application_id:
        application_of_job(tenant_id, job, application_id)
    _refuse_duplicate_source_id(job, application_id, values["source_id"], ignore=question.id)
    return apply_changes(
        question,
        {
            "question_text": values["question_text"],
            "source_id": values["source_id"],
            "application": application_id,
        },
    )


def delete_question(tenant_id: str, job_id, question_id) -> None:
    """Soft delete: the question becomes a tombstone (deleted_at, and a new updated_at so sync
    cursors see it)."""
    apply_changes(get_question(tenant_id, job_id, question_id), {"deleted_at": utcnow()})


def attach_to_application(application: Application, items: list[dict]) -> list[Question]:
    """Store questions on an application (inside its creating transaction), after the job's existing
    ones."""
    position = next_position(application.job_id)
    created = []
    for offset, item in enumerate(items):
        created.append(
            Question.create(
                tenant=application.tenant_id,
                job=application.job_id,
                application=application.id,
                question_text=item["question_text"],
                source_id=item["source_id"],
                position=position + offset,
            )
        )
    return created


def create_application_with_questions(tenant_id: str, values: dict) -> Application:
    """POST /v1/applications/with-questions: the application and its questions, all or nothing."""
    values = dict(values)
    items = values.pop("questions", [])
    created: list[Question] = []
    application = applications.create_application(
        tenant_id, values, attach=lambda new: created.extend(attach_to_application(new, items))
    )
    application.questions = created
    return application


def generate_questions(tenant_id: str, job_id, *, config=None) -> list[Question]:
    """Generate screening questions for the job and add those it does not already have, as
    generated-<n>."""
    job = jobs.get_job(tenant_id, job_id)
    texts = generator_for(current_app.config if config is None else config).generate(
        JobFacts.of(job)
    )
    with database.atomic():
        existing = list(
            Question.select(Question.question_text, Question.source_id).where(
                (Question.job == job.id)
                & Question.application.is_null()
                & Question.deleted_at.is_null()
            )
        )
        known = {normalized(q.question_text) for q in existing}
        number = max(
            (int(m.group(1)) for q in existing if (m := GENERATED_SOURCE_ID.match(q.source_id))),
            default=0,
        )
        position = next_position(job.id)
        created = []
        for text in texts:
            if normalized(text) in known:
                continue
            known.add(normalized(text))
            number += 1
            created.append(
                Question.create(
                    tenant=tenant_id,
                    job=job.id,
                    question_text=text,
                    source_id=f"generated-{number}",
                    position=position,
                    generated=True,
                )
            )
            position += 1
    return created
