"""Application operations shared by the REST routes, the job board, question attachment and the MCP
tools.

Every create and change is written and announced (an application_activty event) in one
transaction."""

from __future__ import annotations

from typing import Callable

import peewee as pw

from app.data import events
from app.http import listing
from app.data.db import database, parse_uuid
from app.data.list_rows import model_rows
from app.errors import Conflict, NotFound, ValidationFailed
from app.data.prepared import Slots
from app.data.records import (
    apply_changes,
    find_by_source_id,
    first_row,
    inserted,
    source_id_taken,
    where_equal,
)
from app.files import uploads
from app.http.upserts import SourceIdUpsert
from plugins.applications.models import Application
from plugins.applications.resume_files import resume_kept_by
from plugins.applications.schemas import (
    ApplicationCreateSchema,
    ApplicationSchema,
    CandidateSummarySchema,
    JobSummarySchema,
)
from plugins.candidates.models import Candidate
from plugins.candidates.services import held_candidate
from plugins.jobs.models import Job

# the event every create and change of an application emits, in its published spelling
# (docs/integrating.md, Webhooks)
APPLICATION_ACTIVITY = "application_activty"
_record_schema = ApplicationSchema()


# the columns of the candidate and job summaries an application answers with: the fields their
# schemas dump
CANDIDATE_SUMMARY = tuple(getattr(Candidate, name) for name in CandidateSummarySchema.Meta.fields)
JOB_SUMMARY = tuple(getattr(Job, name) for name in JobSummarySchema.Meta.fields)


def with_summaries(query, *, full: bool = False):
    """Join the candidate and the job so records embed them without a query per row.

    Lists select only the summary columns, under the aliases SUMMARY_ALIASES names, and read each
    row as a dict with the summaries nested (summary_rows); `full` loads the whole candidate and job
    as records (single records, which callers such as the calls family and MCP tools may read
    further)."""
    if full:
        return (
            query.select_extend(Candidate, Job)
            .join(Candidate)
            .switch(Application)
            .join(Job)
            .switch(Application)
        )
    columns = [field.alias(alias) for alias, field in SUMMARY_ALIASES.items()]
    return query.select_extend(*columns).join(Candidate).switch(Application).join(Job)


# (owner, [(alias, field)]): the summaries' columns but their ids, which are the application's own
# candidate and job columns
_SUMMARIES = [
    (owner, [(f"{owner}__{field.name}", field) for field in fields if field.name != "id"])
    for owner, fields in (("candidate", CANDIDATE_SUMMARY), ("job", JOB_SUMMARY))
]
SUMMARY_ALIASES = {alias: field for _, aliased in _SUMMARIES for alias, field in aliased}
_application_rows = model_rows(Application, SUMMARY_ALIASES)


def summary_rows(source) -> list[dict]:
    """The rows of a with_summaries list query (or its statement's cursor): the application's
    columns (its candidate's and job's ids as candidate_id and job_id), with the candidate's and the
    job's summaries as nested dicts."""
    rows = _application_rows(source)
    for row in rows:
        row["candidate_id"], row["job_id"] = row.pop("candidate"), row.pop("job")
        for owner, aliased in _SUMMARIES:
            summary = {"id": row[f"{owner}_id"]}
            for alias, field in aliased:
                summary[field.name] = row.pop(alias)
            row[owner] = summary
    return rows


# the list's filters (ApplicationListArgsSchema): job_id and candidate_id are the application's
# foreign key columns
APPLICATION_FILTERS = (
    "job_id",
    "candidate_id",
    "source_id",
    "job_source_id",
    "candidate_source_id",
)


def matching_applications(slots: Slots):
    """The tenant's applications matching the list filters sent, from their slots
    (app.data.prepared)."""
    query = Application.owned_by(slots.value("tenant", Application.tenant))
    return where_equal(query, Application, slots, APPLICATION_FILTERS)


def listed_applications(slots: Slots):
    """matching_applications with their candidates' and jobs' summaries (with_summaries)."""
    return with_summaries(matching_applications(slots))


def list_applications(tenant_id: str, **args) -> dict:
    """A page of the tenant's applications in either list mode (app.http.listing), filtered by job,
    candidate, source ids."""
    window, filters = listing.split_window(args)
    # counted without the summaries' joins: every application has its candidate and job (foreign
    # keys, cascading deletes), and a count over the three-table join cost 1.2 s at a million
    # applications instead of 50 ms
    selection = listing.Selection.of_tenant(
        Application,
        listed_applications,
        tenant_id,
        filters,
        key="applications",
        counted=matching_applications,
    )
    return listing.answer(
        selection,
        window,
        tenant_id=tenant_id,
        list_name="applications",
        filters=filters,
        order_by=(Application.created_at, Application.id),
        read=summary_rows,
    )


def get_application(tenant_id: str, application_id) -> Application:
    ident = parse_uuid(application_id)
    record = (
        with_summaries(Application.owned_by(tenant_id), full=True)
        .where(Application.id == ident)
        .first()
        if ident
        else None
    )
    if record is None:
        raise NotFound("application", application_id)
    return record


def application_record(application: Application) -> dict:
    """The application as the API answers it: what its events carry."""
    return _record_schema.dump(application)


def resolve_by_source_id(model, tenant_id: str, values: dict, source_field: str, id_field: str):
    """The tenant's record that values[source_field] names; values[id_field], when given, must be
    that record."""
    record = find_by_source_id(model, tenant_id, values[source_field])
    if record is None:
        raise ValidationFailed(
            {
                source_field: [
                    f"No {model.label} with source_id {values[source_field]!r} in your tenant."
                ]
            }
        )
    given = values.get(id_field)
    if given is not None and given != record.id:
        raise ValidationFailed(
            {
                id_field: [
                    f"Does not match the {model.label} with source_id {values[source_field]!r} ("
                    f"{record.id})."
                ]
            }
        )
    return record


def existing_for(candidate: Candidate, job: Job) -> Application | None:
    """The candidate's application to the job (its id alone), or None."""
    return first_row(
        Application,
        {Application.candidate: candidate.id, Application.job: job.id},
        (Application.id,),
    )


def _refuse_duplicates(
    tenant_id: str, candidate: Candidate, job: Job, source_id: str | None
) -> None:
    existing = existing_for(candidate, job)
    if existing is not None:
        raise Conflict(
            f"candidate {candidate.source_id!r} has already applied to job {job.source_id!r}",
            existing_id=existing.id,
        )
    if source_id:
        same = find_by_source_id(Application, tenant_id, source_id)
        if same is not None:
            raise source_id_taken(Application, source_id, same.id)


def create_application(
    tenant_id: str, values: dict, *, attach: Callable[[Application], None] | None = None
) -> Application:
    """A candidate's application to a job, both named by source_id; `attach` adds related rows in
    the same transaction."""
    values = dict(values)
    candidate = resolve_by_source_id(
        Candidate, tenant_id, values, "candidate_source_id", "candidate_id"
    )
    job = resolve_by_source_id(Job, tenant_id, values, "job_source_id", "job_id")
    return create_for(tenant_id, candidate, job, values, attach=attach)


def create_for(
    tenant_id: str,
    candidate: Candidate,
    job: Job,
    values: dict,
    *,
    attach: Callable[[Application], None] | None = None,
) -> Application:
    """Create the application of a resolved candidate and job (409 when it exists), store its
    resume, emit the event."""
    values = dict(values)
    values.pop("candidate_id", None)
    values.pop("job_id", None)
    _refuse_duplicates(tenant_id, candidate, job, values.get("source_id"))
    columns = uploads.take_from(values, tenant_id)
    values.update(candidate_source_id=candidate.source_id, job_source_id=job.source_id)
    with resume_kept_by(tenant_id, columns):  # a create refused or failed keeps no file
        try:
            with database.atomic():
                # 404 once erased; an erasure waits for this write
                held_candidate(tenant_id, candidate.id, Candidate.id)
                application = inserted(
                    Application, tenant=tenant_id, candidate=candidate, job=job, **values, **columns
                )
                if attach is not None:
                    attach(application)
                events.emit(tenant_id, APPLICATION_ACTIVITY, application_record(application))
        except pw.IntegrityError:
            _refuse_duplicates(tenant_id, candidate, job, values.get("source_id"))
            # erased while this was written
            if not Candidate.select().where(Candidate.id == candidate.id).exists():
                raise NotFound("candidate", candidate.id) from None
            raise
    return application


def update_application(tenant_id: str, application_id, values: dict) -> Application:
    """Change status and stage (and the resume when one is sent), and announce the change; 404 when
    the candidate was erased meanwhile (nothing written, the resume sent not kept). A resume
    replaced goes once no record of the tenant names it."""
    application = get_application(tenant_id, application_id)
    values = dict(values)
    columns = uploads.take_from(values, tenant_id)
    values.update(columns)
    with resume_kept_by(tenant_id, columns, replaced_sha256=application.resume_sha256):
        with database.atomic():
            # before any write: see held_candidate
            held_candidate(tenant_id, application.candidate_id, Candidate.id)
            # as it is now (anonymized meanwhile?)
            application = get_application(tenant_id, application_id)
            apply_changes(application, values)
            events.emit(tenant_id, APPLICATION_ACTIVITY, application_record(application))
    return application


def replace_application(tenant_id: str, application: Application, values: dict) -> Application:
    """The upsert's replace: the create body's status, stage and resume; its candidate and job must
    stay those stored (an application never moves to another candidate or job: 422)."""
    values = dict(values)
    candidate = resolve_by_source_id(
        Candidate, tenant_id, values, "candidate_source_id", "candidate_id"
    )
    job = resolve_by_source_id(Job, tenant_id, values, "job_source_id", "job_id")
    moved = {
        name: [f"Is not this application's {what} ({stored}); an application cannot move."]
        for name, what, stored, given in (
            ("candidate_source_id", "candidate", application.candidate_source_id, candidate),
            ("job_source_id", "job", application.job_source_id, job),
        )
        if given.id != getattr(application, f"{what}_id")
    }
    if moved:
        raise ValidationFailed(moved)
    for name in ("candidate_source_id", "job_source_id", "candidate_id", "job_id"):
        values.pop(name, None)
    return update_application(tenant_id, application.id, values)


def resume_of(tenant_id: str, application_id):
    """The application's stored resume as a download response (404 for another tenant or none
    stored)."""
    return uploads.download(get_application(tenant_id, application_id), "application")


APPLICATION_UPSERT = SourceIdUpsert(
    model=Application,
    record_schema=ApplicationSchema,
    create_schema=ApplicationCreateSchema,
    create=create_application,
    replace=replace_application,
)
