"""Access: everything held about one candidate as one JSON document, assembled by one collector per
related kind.

A collector takes the Subject and answers that kind's part of the document; a new kind joins the
document by adding one (name, collector) line to COLLECTORS. Resumes are listed with their metadata
and a link to the download route that serves their bytes (a document carrying every file as base64
would be up to 10 MiB per resume)."""

from __future__ import annotations

from typing import Callable

from app.data.db import utcnow
from plugins.events.routes import EventSchema
from plugins.applications.models import Application
from plugins.applications.schemas import ApplicationSchema
from plugins.applications.services import with_summaries
from plugins.calls.models import Call, CallReminder
from plugins.calls.recordings import recordings_for_calls
from plugins.calls.schemas import CallSchema, ReminderSchema
from plugins.candidates.consent import CANDIDATE_CONSENT, consent_of
from plugins.candidates.schemas import CandidateSchema
from plugins.candidates.services import get_candidate
from plugins.privacy.subject import Subject
from plugins.questions.models import Question
from plugins.questions.schemas import QuestionSchema
from plugins.webhooks.models import WebhookDelivery
from plugins.webhooks.schemas import WebhookDeliverySchema
from plugins.webhooks.services import attach_attempts


def candidate(subject: Subject) -> dict:
    return CandidateSchema().dump(subject.candidate)


def consent(subject: Subject) -> dict:
    """Their consent per channel as it stands, and every change of it still kept as an event (source
    and time)."""
    changes = [
        change
        for event in subject.events()
        if event.type == CANDIDATE_CONSENT
        for change in (event.payload.get("changes") or [])
    ]
    return {
        "current": consent_of(subject.candidate),
        "changes": changes,
        "timezone": subject.candidate.timezone,
        "timezone_source": subject.candidate.timezone_source,
    }


def applications(subject: Subject) -> list[dict]:
    rows = with_summaries(Application.select(), full=True).where(
        Application.id.in_(subject.application_ids)
    )
    return (
        ApplicationSchema(many=True).dump(rows.order_by(Application.created_at, Application.id))
        if subject.application_ids
        else []
    )


def questions(subject: Subject) -> list[dict]:
    """The screening questions asked on the candidate's applications only (a job's own questions are
    not theirs)."""
    if not subject.question_ids:
        return []
    return QuestionSchema(many=True).dump(
        Question.select()
        .where(Question.id.in_(subject.question_ids))
        .order_by(Question.created_at, Question.id)
    )


def _calls(subject: Subject) -> list[Call]:
    if not subject.call_ids:
        return []
    return list(
        Call.select().where(Call.id.in_(subject.call_ids)).order_by(Call.created_at, Call.id)
    )


def calls(subject: Subject) -> list[dict]:
    """Each call with its status, transcript, summary and assessment."""
    return CallSchema(many=True).dump(_calls(subject))


def reminders(subject: Subject) -> list[dict]:
    """The email and SMS reminders of the candidate's calls: where each went, when, and what came of
    it."""
    if not subject.call_ids:
        return []
    rows = (
        CallReminder.select()
        .where(CallReminder.call.in_(subject.call_ids))
        .order_by(CallReminder.due_at, CallReminder.id)
    )
    return [{"call_id": str(row.call_id), **ReminderSchema().dump(row)} for row in rows]


def answers(subject: Subject) -> list[dict]:
    """The candidate's answers to screening questions, as each call's assessment read them."""
    return [
        {"call_id": str(call.id), **answer}
        for call in _calls(subject)
        for answer in ((call.assessment or {}).get("answers") or [])
    ]


def events(subject: Subject) -> list[dict]:
    return EventSchema(many=True).dump(subject.events())


def webhook_deliveries(subject: Subject) -> list[dict]:
    """The deliveries of the events about the candidate, each with its attempts."""
    event_ids = [event.event_id for event in subject.events()]
    if not event_ids:
        return []
    deliveries = list(
        WebhookDelivery.select()
        .where(
            (WebhookDelivery.tenant == subject.tenant_id) & WebhookDelivery.event_id.in_(event_ids)
        )
        .order_by(WebhookDelivery.created_at, WebhookDelivery.id)
    )
    attach_attempts(deliveries)
    return WebhookDeliverySchema(many=True).dump(deliveries)


def resumes(subject: Subject) -> list[dict]:
    """Each stored resume of the candidate and their applications: metadata, and where to download
    the bytes."""
    holders = [("candidate", subject.candidate, f"/v1/candidates/{subject.candidate.id}/resume")]
    if subject.application_ids:
        holders += [
            ("application", row, f"/v1/applications/{row.id}/resume")
            for row in Application.select()
            .where(Application.id.in_(subject.application_ids))
            .order_by(Application.created_at, Application.id)
        ]
    return [
        {
            "of": kind,
            "record_id": str(record.id),
            "file_name": record.resume_file_name,
            "content_type": record.resume_content_type,
            "size": record.resume_size,
            "sha256": record.resume_sha256,
            "reference": record.resume_reference,
            "download": link if record.resume_sha256 else None,
        }
        for kind, record, link in holders
        if record.resume_sha256 or record.resume_reference
    ]


def recordings(subject: Subject) -> list[dict]:
    """The recordings of the candidate's calls: which call, how long, and the route answering the
    audio."""
    return [
        {
            "call_id": str(row.call_id),
            "channels": row.channels,
            "duration_seconds": row.duration_seconds,
            "created_at": row.created_at.isoformat(timespec="milliseconds") + "Z",
            "download": f"/v1/calls/{row.call_id}/recording",
        }
        for row in recordings_for_calls(subject.call_ids)
    ]


COLLECTORS: tuple[tuple[str, Callable[[Subject], object]], ...] = (
    ("candidate", candidate),
    ("consent", consent),
    ("applications", applications),
    ("questions", questions),
    ("calls", calls),
    ("reminders", reminders),
    ("answers", answers),
    ("events", events),
    ("webhook_deliveries", webhook_deliveries),
    ("resumes", resumes),
    ("recordings", recordings),
)


def export_candidate(tenant_id: str, candidate_id) -> dict:
    """The export document of the tenant's candidate (404 for another tenant's or an erased one)."""
    subject = Subject.of(tenant_id, get_candidate(tenant_id, candidate_id))
    document = {"exported_at": utcnow().isoformat(timespec="milliseconds") + "Z"}
    document.update((name, collect(subject)) for name, collect in COLLECTORS)
    return document
