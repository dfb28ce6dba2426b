"""Candidate operations shared by the REST routes, the job board and the MCP tools."""

from __future__ import annotations

from flask import current_app

from app.data.db import database, utcnow
from app.errors import NotFound
from app.files import uploads
from app.data.records import (
    apply_changes,
    apply_filters,
    create_with_source_id,
    find_by_source_id,
    first_row,
    get_owned,
    source_id_taken,
    where_equal,
)
from app.data.list_rows import model_rows
from app.data.prepared import Slots
from app.http import listing
from app.http.upserts import SourceIdUpsert
from plugins.candidates import consent as contact_consent
from plugins.candidates.models import Candidate
from plugins.candidates.schemas import CandidateCreateSchema, CandidateSchema
from plugins.candidates.zones import refresh_zone, zone_columns

OPT_OUT_LISTENERS = "hirekit_contact_opt_out_listeners"


# the list's filters (CandidateListArgsSchema)
CANDIDATE_FILTERS = ("source_id", "email")
CANDIDATE_ROWS = model_rows(Candidate)


def matching_candidates(slots: Slots):
    """The tenant's candidates matching the list filters sent, from their slots
    (app.data.prepared)."""
    query = Candidate.owned_rows(slots.value("tenant", Candidate.tenant))
    return where_equal(query, Candidate, slots, CANDIDATE_FILTERS, case_insensitive=("email",))


def list_candidates(tenant_id: str, **args) -> dict:
    """A page of the tenant's candidates in either list mode (app.http.listing): what REST and MCP
    answer."""
    window, filters = listing.split_window(args)
    return listing.answer(
        listing.Selection.of_tenant(
            Candidate, matching_candidates, tenant_id, filters, key="candidates"
        ),
        window,
        tenant_id=tenant_id,
        list_name="candidates",
        filters=filters,
        read=CANDIDATE_ROWS,
    )


def get_candidate(tenant_id: str, candidate_id) -> Candidate:
    return get_owned(Candidate, tenant_id, candidate_id)


def find_by_email(tenant_id: str, email: str) -> Candidate | None:
    """The tenant's earliest candidate with this email (case-insensitive), or None."""
    query = apply_filters(
        Candidate.owned_by(tenant_id), Candidate, {"email": email}, case_insensitive=("email",)
    )
    return query.order_by(Candidate.created_at, Candidate.id).first()


def create_candidate(tenant_id: str, values: dict) -> Candidate:
    """A new candidate; its source_id is unique per tenant (409 naming the existing one, the resume
    sent not kept)."""
    from plugins.applications.resume_files import resume_kept_by

    values = dict(values)
    columns = uploads.take_from(values, tenant_id)
    columns.update(zone_columns(Candidate(tenant=tenant_id, **values)))
    with resume_kept_by(tenant_id, columns):
        return create_with_source_id(Candidate, tenant_id, values, **columns)


def held_candidate(tenant_id: str, candidate_id, *columns) -> Candidate:
    """Inside a write's transaction, before it writes anything about the candidate: their row, held
    FOR SHARE on PostgreSQL, so an erasure or anonymization (which lock it FOR UPDATE first) either
    waits for the write to commit or runs first and the write finds the candidate gone (404).
    SQLite's writing transaction holds the write lock. `columns` names what the caller reads of it
    (every column when none: a write that only holds the row reads its id alone)."""
    candidate = first_row(
        Candidate,
        {Candidate.tenant: tenant_id, Candidate.id: candidate_id},
        columns,
        lock=" FOR SHARE" if database.for_update else "",
    )
    if candidate is None:
        raise NotFound("candidate", candidate_id)
    return candidate


def update_candidate(tenant_id: str, candidate_id, values: dict) -> Candidate:
    candidate = get_candidate(tenant_id, candidate_id)
    new_source_id = values.get("source_id")
    if new_source_id and new_source_id != candidate.source_id:
        existing = find_by_source_id(Candidate, tenant_id, new_source_id)
        if existing is not None:
            raise source_id_taken(Candidate, new_source_id, existing.id)
    return changed(candidate, values)


def changed(candidate: Candidate, values: dict) -> Candidate:
    """The candidate with `values` saved and its zone recomputed (404 when erased meanwhile); a
    resume it replaced goes once no record of the tenant names it."""
    from plugins.applications.resume_files import resume_kept_by

    with resume_kept_by(candidate.tenant_id, values, replaced_sha256=candidate.resume_sha256):
        return still_there(with_current_zone(apply_changes(candidate, values)))


def with_current_zone(candidate: Candidate) -> Candidate:
    """The candidate with its stored zone recomputed (its phone number or location may have
    changed)."""
    refresh_zone(candidate)
    return candidate


def still_there(candidate: Candidate) -> Candidate:
    """The candidate just saved, or 404 when an erasure deleted its row since it was read (the save
    changed nothing)."""
    if not Candidate.select().where(Candidate.id == candidate.id).exists():
        from plugins.applications.resume_files import remove_unreferenced

        # a resume this write stored
        remove_unreferenced(candidate.tenant_id, [candidate.resume_sha256])
        raise NotFound("candidate", candidate.id)
    return candidate


def replace_candidate(tenant_id: str, candidate: Candidate, values: dict) -> Candidate:
    """The upsert's replace: every field of the create body (its resume too, when one is sent) over
    the stored ones."""
    values = dict(values)
    values.update(uploads.take_from(values, tenant_id))
    return changed(candidate, values)


def resume_of(tenant_id: str, candidate_id):
    """The candidate's stored resume as a download response (404 for another tenant or none
    stored)."""
    return uploads.download(get_candidate(tenant_id, candidate_id), "candidate")


def add_opt_out_listener(app, listener) -> None:
    """listener(tenant_id, candidate_id) runs inside the transaction that opts a candidate out
    (calls cancels what is pending for them)."""
    app.extensions.setdefault(OPT_OUT_LISTENERS, []).append(listener)


def opt_out(tenant_id: str, candidate_id, *, source: str = contact_consent.API) -> Candidate:
    """POST /v1/candidates/{id}/opt-out: consent on every channel revoked, so no more reminders or
    calls to the candidate; what is pending is canceled. Opting out again changes nothing but
    cancels anything pending again."""
    with database.atomic():
        candidate = get_candidate(tenant_id, candidate_id)
        contact_consent.change_consent(
            candidate, dict.fromkeys(contact_consent.CHANNELS, False), source
        )
        # already revoked channel by channel before the flag was kept with them
        if not candidate.contact_opt_out:
            apply_changes(candidate, {"contact_opt_out": True, "contact_opted_out_at": utcnow()})
        for listener in current_app.extensions.get(OPT_OUT_LISTENERS, ()):
            listener(tenant_id, candidate.id)
    return candidate


def opt_in(tenant_id: str, candidate_id, *, source: str = contact_consent.API) -> Candidate:
    """DELETE /v1/candidates/{id}/opt-out: consent on every channel granted again, so the candidate
    may be contacted (what was canceled stays canceled)."""
    with database.atomic():
        candidate = get_candidate(tenant_id, candidate_id)
        contact_consent.change_consent(
            candidate, dict.fromkeys(contact_consent.CHANNELS, True), source
        )
    return candidate


def candidates_with_phone_number(phone_no: str) -> list[tuple[str, object]]:
    """(tenant id, candidate id) of every candidate, in any tenant, with this E.164 number."""
    query = Candidate.select(Candidate.tenant, Candidate.id).where(Candidate.phone_no == phone_no)
    return [(candidate.tenant_id, candidate.id) for candidate in query]


def opt_out_phone_number(phone_no: str) -> int:
    """An SMS STOP from `phone_no` (to the service's one number, whichever tenant's reminder it
    answered): every candidate with that number opts out; answers how many."""
    found = candidates_with_phone_number(phone_no)
    for tenant_id, candidate_id in found:
        opt_out(tenant_id, candidate_id, source=contact_consent.CANDIDATE_SMS)
    return len(found)


def opt_in_phone_number(phone_no: str) -> int:
    """An SMS START from `phone_no`: for every candidate with that number, the channels an SMS
    opt-out revoked are granted again; a revocation the tenant recorded (API, ATS) or the candidate
    made elsewhere (their page, a call) stays. Answers how many candidates had a channel granted
    again."""
    granted = 0
    for tenant_id, candidate_id in candidates_with_phone_number(phone_no):
        with database.atomic():
            candidate = get_candidate(tenant_id, candidate_id)
            revoked_by_sms = [
                channel
                for channel, entry in contact_consent.consent_of(candidate).items()
                if not entry["granted"] and entry["source"] == contact_consent.CANDIDATE_SMS
            ]
            if contact_consent.change_consent(
                candidate, dict.fromkeys(revoked_by_sms, True), contact_consent.CANDIDATE_SMS
            ):
                granted += 1
    return granted


CANDIDATE_UPSERT = SourceIdUpsert(
    model=Candidate,
    record_schema=CandidateSchema,
    create_schema=CandidateCreateSchema,
    create=create_candidate,
    replace=replace_candidate,
)
