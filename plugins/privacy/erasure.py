"""Erasure: a candidate and everything that is theirs removed in one transaction, their resume files
after it commits.

What stays (docs/privacy.md, Erasure): tombstones of the candidate and their applications for sync
walks (app.data.tombstones), the events about them with their id and type but no payload, a
`candidate.deleted` event telling mirrors to delete their copy, and the erasure log
(plugins.privacy.models.Erasure), none of which holds personal data.

An erasure racing a write to the same candidate leaves no orphan: the candidate's row is locked
first (SELECT ... FOR UPDATE on PostgreSQL; SQLite's writing transactions begin IMMEDIATE and hold
the database's write lock), so a write that references the candidate (a new application, call)
either commits before the erasure reads what to remove, or waits and then finds the candidate gone
(its foreign key fails, answered 404 by its family)."""

from __future__ import annotations

from app.data import events, tombstones
from app.http import idempotency
from app.data.db import after_commit, database, utcnow
from app.errors import NotFound
from plugins.applications.models import Application
from plugins.applications.resume_files import remove_unreferenced
from plugins.calls.models import QUEUED, Call, CallPlan
from plugins.calls.recordings import delete_at_provider, forget_recordings
from plugins.calls.telephony import get_provider
from plugins.calls.scheduling import cancel_call
from plugins.candidates.models import Candidate
from plugins.candidates.services import get_candidate
from plugins.privacy.models import REQUEST, Erasure
from plugins.privacy.subject import Subject
from plugins.questions.models import Question
from plugins.webhooks.models import (
    DELIVERY_CANCELED,
    DELIVERY_PENDING,
    WebhookAttempt,
    WebhookDelivery,
)

CANDIDATE_DELETED = "candidate.deleted"  # the event of an erasure: a mirror deletes its copy
CANCEL_REASON = "the candidate was erased"
ERASED_DELIVERY_PAYLOAD = {events.ERASED_PAYLOAD_KEY: True}


def erase_candidate(
    tenant_id: str, candidate_id, *, reason: str = REQUEST, key_id: int | None = None
) -> Erasure:
    """Erase the tenant's candidate (404 for another tenant's, an unknown or an already erased one);
    answers the log entry."""
    get_candidate(tenant_id, candidate_id)  # 404 before any lock is taken
    with database.atomic():
        subject = Subject.of(tenant_id, locked_candidate(tenant_id, candidate_id))
        for call in (
            Call.select().where(Call.id.in_(subject.call_ids) & (Call.status == QUEUED))
            if subject.call_ids
            else ()
        ):
            # the path every cancel takes: its dial job is dropped, nothing dials later
            cancel_call(call, CANCEL_REASON)
        resume_files = subject.resume_sha256s()
        recordings = forget_recordings(subject.call_ids)
        erased_events = events.erase_payloads(tenant_id, subject.record_ids)
        counts = {
            "applications": len(subject.application_ids),
            "calls": len(subject.call_ids),
            "questions": len(subject.question_ids),
            "events": len(erased_events),
            "webhook_deliveries": _erase_deliveries(tenant_id, erased_events),
            "stored_answers": idempotency.erase_answers(tenant_id, subject.record_ids),
            "resume_files": len(resume_files),
            "recordings": len(recordings),
        }
        _delete_rows(subject)
        now = utcnow()
        tombstones.bury(tenant_id, "candidates", [subject.candidate.id], now)
        tombstones.bury(tenant_id, "applications", subject.application_ids, now)
        events.emit(tenant_id, CANDIDATE_DELETED, deleted_record(subject, now))
        entry = Erasure.create(
            tenant=tenant_id,
            candidate_id=subject.candidate.id,
            reason=reason,
            key_id=key_id,
            counts=counts,
            created_at=now,
            updated_at=now,
            record_ids={
                "applications": [str(i) for i in subject.application_ids],
                "calls": [str(i) for i in subject.call_ids],
                "events": [str(i) for i in erased_events],
            },
        )
        after_commit(lambda: remove_unreferenced(tenant_id, resume_files))
        after_commit(lambda: delete_at_provider(recordings, get_provider()))
    return entry


def deleted_record(subject: Subject, at) -> dict:
    """The candidate.deleted event's record: ids and time only."""
    return {
        "id": str(subject.candidate.id),
        "deleted": True,
        "deleted_at": at.isoformat(timespec="milliseconds") + "Z",
        "application_ids": [str(i) for i in subject.application_ids],
    }


def locked_candidate(tenant_id: str, candidate_id) -> Candidate:
    query = Candidate.select().where(
        (Candidate.tenant == tenant_id) & (Candidate.id == candidate_id)
    )
    candidate = (query.for_update() if database.for_update else query).first()
    if candidate is None:  # erased by a request that committed while this one waited for the lock
        raise NotFound("candidate", candidate_id)
    return candidate


def _erase_deliveries(tenant_id: str, event_ids: list) -> int:
    """The deliveries of erased events carry no payload, the pending ones are canceled
    (candidate.deleted tells the receiver), and their attempts keep no answer body; answers how many
    deliveries."""
    if not event_ids:
        return 0
    of_events = (WebhookDelivery.tenant == tenant_id) & WebhookDelivery.event_id.in_(event_ids)
    WebhookDelivery.update(
        status=DELIVERY_CANCELED, last_error=CANCEL_REASON, updated_at=utcnow()
    ).where(of_events & (WebhookDelivery.status == DELIVERY_PENDING)).execute()
    changed = (
        WebhookDelivery.update(payload=ERASED_DELIVERY_PAYLOAD, updated_at=utcnow())
        .where(of_events)
        .execute()
    )
    forget_answers(of_events)
    return changed


def forget_answers(of_deliveries) -> None:
    """The attempts of these deliveries keep no receiver's answer body: a receiver may echo what it
    was sent."""
    WebhookAttempt.update(response_body=None).where(
        WebhookAttempt.delivery.in_(WebhookDelivery.select(WebhookDelivery.id).where(of_deliveries))
    ).execute()


def _delete_rows(subject: Subject) -> None:
    """Children first, so the counts above are what went (cascades would take the same rows)."""
    if subject.call_ids:
        Call.delete().where(Call.id.in_(subject.call_ids)).execute()
    if subject.question_ids:
        Question.delete().where(Question.id.in_(subject.question_ids)).execute()
    if subject.application_ids:
        CallPlan.delete().where(CallPlan.application.in_(subject.application_ids)).execute()
        Application.delete().where(Application.id.in_(subject.application_ids)).execute()
    Candidate.delete().where(Candidate.id == subject.candidate.id).execute()
