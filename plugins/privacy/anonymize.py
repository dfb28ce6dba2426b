"""Rectification by anonymization (Greenhouse's model): named fields of a candidate replaced by a
fixed marker, the record kept for reporting; the same values go from their applications, calls,
events, deliveries and stored answers."""

from __future__ import annotations

from app.http import idempotency
from app.data.db import after_commit, database, utcnow
from app.data.events import Event
from plugins.applications.models import Application
from plugins.applications.resume_files import remove_unreferenced
from plugins.calls.models import Call, CallReminder
from plugins.calls.recordings import delete_at_provider, forget_recordings
from plugins.calls.telephony import get_provider
from plugins.candidates.models import Candidate
from plugins.candidates.schemas import CandidateUpdateSchema
from plugins.candidates.services import get_candidate
from plugins.privacy.erasure import forget_answers, locked_candidate
from plugins.privacy.subject import Subject
from plugins.webhooks.models import WebhookDelivery

MARKER = "[anonymized]"
# every field a candidate's update sets, but the id the ATS knows them by
CANDIDATE_FIELDS = tuple(
    name for name in CandidateUpdateSchema().declared_fields if name != "source_id"
)
RESUME = "resume"  # the resume files and their metadata, on the candidate and their applications
CALL_CONTENT = "call_content"  # each call's transcript, summary, assessment and recording
FIELDS = (*CANDIDATE_FIELDS, RESUME, CALL_CONTENT)
RESUME_COLUMNS = (
    "resume_file_name",
    "resume_content_type",
    "resume_size",
    "resume_sha256",
    "resume_reference",
)


def anonymize_candidate(tenant_id: str, candidate_id, fields: list[str]) -> Candidate:
    """Replace the named fields (FIELDS) of the tenant's candidate; answers the candidate as stored
    afterwards."""
    get_candidate(tenant_id, candidate_id)  # 404 before any lock is taken
    with database.atomic():
        candidate = locked_candidate(tenant_id, candidate_id)
        subject = Subject.of(tenant_id, candidate)
        named = [name for name in CANDIDATE_FIELDS if name in fields]
        old_values = {
            str(getattr(candidate, name))
            for name in named
            if getattr(candidate, name) not in (None, "")
        }
        now = utcnow()
        Candidate.update(
            {getattr(Candidate, name): MARKER for name in named}, updated_at=now
        ).where(Candidate.id == candidate.id).execute()
        if "phone_no" in named and subject.call_ids:
            Call.update(phone_no=MARKER, updated_at=now).where(
                Call.id.in_(subject.call_ids)
            ).execute()
        # the address a reminder went to (their email or phone number)
        if old_values and subject.call_ids:
            CallReminder.update(address=MARKER, updated_at=now).where(
                CallReminder.call.in_(subject.call_ids) & CallReminder.address.in_(old_values)
            ).execute()
        if CALL_CONTENT in fields and subject.call_ids:
            old_values |= _call_texts(subject)
            Call.update(transcript=[], summary=MARKER, assessment=None, updated_at=now).where(
                Call.id.in_(subject.call_ids)
            ).execute()
            # the recording is the call's content too
            recordings = forget_recordings(subject.call_ids)
            after_commit(lambda: delete_at_provider(recordings, get_provider()))
        if RESUME in fields:
            resume_files = subject.resume_sha256s()
            cleared = {column: None for column in RESUME_COLUMNS}
            Candidate.update(cleared, updated_at=now).where(Candidate.id == candidate.id).execute()
            if subject.application_ids:
                Application.update(cleared, updated_at=now).where(
                    Application.id.in_(subject.application_ids)
                ).execute()
            after_commit(lambda: remove_unreferenced(tenant_id, resume_files))
        _replace_in_payloads(subject, old_values)
        idempotency.erase_answers(tenant_id, subject.record_ids)
    return Candidate.get(Candidate.id == candidate.id)


def _call_texts(subject: Subject) -> set[str]:
    """What the candidate said and what was written about it: each transcript turn's text, the
    summary, and each assessed answer and note (to take out of event payloads too; labels such as a
    speaker or a recommendation stay)."""
    texts: set[str] = set()
    for call in Call.select(Call.transcript, Call.summary, Call.assessment).where(
        Call.id.in_(subject.call_ids)
    ):
        texts.update(turn.get("text") for turn in call.transcript or () if isinstance(turn, dict))
        for answer in (call.assessment or {}).get("answers") or ():
            texts.update((answer.get("answer"), answer.get("note")))
        texts.add(call.summary)
    return {text for text in texts if isinstance(text, str) and text}


def replaced(value, old_values: set[str]):
    """A JSON value with every occurrence of one of `old_values` in its strings replaced by the
    marker (a name inside a sentence too), longest first."""
    if isinstance(value, str):
        for old in sorted(old_values, key=len, reverse=True):
            if old in value:
                value = value.replace(old, MARKER)
        return value
    if isinstance(value, dict):
        return {key: replaced(item, old_values) for key, item in value.items()}
    if isinstance(value, list):
        return [replaced(item, old_values) for item in value]
    return value


def _replace_in_payloads(subject: Subject, old_values: set[str]) -> None:
    """The events about the candidate and their deliveries carry the marker instead of the old
    values."""
    if not old_values:
        return
    event_ids = []
    for event in subject.events():
        event_ids.append(event.event_id)
        Event.update(payload=replaced(event.payload, old_values)).where(
            Event.sequence == event.sequence
        ).execute()
    if event_ids:
        of_events = (WebhookDelivery.tenant == subject.tenant_id) & WebhookDelivery.event_id.in_(
            event_ids
        )
        for delivery in WebhookDelivery.select().where(of_events):
            WebhookDelivery.update(payload=replaced(delivery.payload, old_values)).where(
                WebhookDelivery.id == delivery.id
            ).execute()
        forget_answers(of_events)
