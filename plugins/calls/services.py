"""Call operations shared by the routes, the workers and the Twilio callbacks: start, place, advance, read, list."""

from __future__ import annotations

import logging
import time

from flask import current_app

from app import events, listing
from app.db import database, parse_uuid, utcnow
from app.errors import Conflict, NotFound, ValidationFailed
from app.records import get_owned
from plugins.applications.models import Application
from plugins.calls.analysis import CallContext, analyze, configured_model
from plugins.calls.models import (
    ACTIVE_STATUSES,
    COMPLETED,
    FINAL_STATUSES,
    IN_PROGRESS,
    INSTANT,
    QUEUED,
    RINGING,
    Call,
)
from plugins.calls.schemas import CallSchema
from plugins.calls.telephony import CallScript, Progress, get_provider
from plugins.questions.models import Question

log = logging.getLogger("hirekit.calls")

CALLS_QUEUE = "calls"
CALL_JOB_TIMEOUT = 600
VISIBILITY_WAIT_SECONDS = 1.0
_call_schema = CallSchema()

FILTER_COLUMNS = {"job_id": Call.job, "candidate_id": Call.candidate, "application_id": Call.application,
                  "application_source_id": Call.application_source_id, "job_source_id": Call.job_source_id,
                  "candidate_source_id": Call.candidate_source_id, "status": Call.status}


def call_record(call: Call) -> dict:
    return _call_schema.dump(call)


def emit_activity(call: Call) -> None:
    """Every status change is a call_activity event (and so a webhook delivery)."""
    events.emit(call.tenant_id, events.CALL_ACTIVITY, call_record(call))


def get_call(tenant_id: str, call_id) -> Call:
    return get_owned(Call, tenant_id, call_id)


def list_calls(tenant_id: str, **args) -> dict:
    """A page of the tenant's calls in either list mode (app.listing)."""
    window, filters = listing.split_window(args)
    query = Call.owned_by(tenant_id)
    for name, value in filters.items():
        if value is not None:
            query = query.where(FILTER_COLUMNS[name] == value)
    return listing.answer(query, window, tenant_id=tenant_id, list_name="calls", filters=filters)


def active_call(application_id) -> Call | None:
    return Call.select().where((Call.application == application_id) & (Call.status.in_(ACTIVE_STATUSES))).first()


def new_call(application: Application, *, trigger: str, attempt: int = 1, series=None, scheduled_for=None) -> Call:
    """A queued call to the application's candidate (422 when the candidate has no phone number)."""
    candidate, job = application.candidate, application.job
    if not candidate.phone_no:
        raise ValidationFailed({"phone_no": ["The candidate has no phone number to call."]},
                               message=f"candidate {candidate.id} has no phone number to call")
    return Call.create(tenant=application.tenant_id, application=application.id, job=job.id, candidate=candidate.id,
                       application_source_id=application.source_id, job_source_id=job.source_id,
                       candidate_source_id=candidate.source_id, status=QUEUED, attempt=attempt, trigger=trigger,
                       series=series, scheduled_for=scheduled_for, phone_no=candidate.phone_no,
                       provider=current_app.config["TELEPHONY"])


def start_instant_call(tenant_id: str, application_id) -> Call:
    """POST .../instant-call: queue a call now; 409 while the application has one queued, ringing or in progress.

    The call is placed once its row commits. On Redis the queue is checked inside the transaction, so a Redis that is
    down answers 503 with nothing stored rather than a call that would wait for the reaper.
    """
    from app.queue import enqueue, get_queue

    from plugins.calls.tasks import run_call

    application = get_owned(Application, tenant_id, application_id)
    with database.atomic():
        existing = active_call(application.id)
        if existing is not None:
            raise Conflict(f"application {application.id} already has a call {existing.status}", existing_id=existing.id)
        get_queue().check_reachable()
        call = new_call(application, trigger=INSTANT)
        emit_activity(call)
        enqueue(run_call, str(call.id), queue=CALLS_QUEUE, job_timeout=CALL_JOB_TIMEOUT)
    return call


def wait_for_call(call_id: str) -> Call | None:
    """The call row; a job may start before the transaction that created the row commits, so wait briefly."""
    deadline = time.monotonic() + VISIBILITY_WAIT_SECONDS
    while True:
        call = Call.get_or_none(Call.id == call_id)
        if call is not None or time.monotonic() > deadline:
            return call
        time.sleep(0.02)


def questions_for(call: Call) -> list[str]:
    """The job's questions, then the application's own, in their order."""
    query = (Question.select(Question.question_text)
             .where((Question.job == call.job_id) & Question.deleted_at.is_null()
                    & (Question.application.is_null() | (Question.application == call.application_id)))
             .order_by(Question.application.is_null(False), Question.position, Question.created_at))
    return [q.question_text for q in query]


def script_for(call: Call, *, voicemail: bool = False) -> CallScript:
    candidate, job = call.candidate, call.job
    name = " ".join(part for part in (candidate.first_name, candidate.last_name) if part)
    return CallScript(call_id=str(call.id), phone_no=call.phone_no, candidate_name=name, job_title=job.title,
                      company=job.client_name, questions=questions_for(call), voicemail=voicemail)


def place_call(call: Call, *, voicemail: bool = False) -> None:
    """Hand the call to the provider, once; synchronous providers report every status before this returns."""
    if not claim_call(call):
        log.warning("call %s was already claimed by another job: not dialled again", call.id)
        return
    provider = get_provider()
    try:
        provider_call_id = provider.place(script_for(call, voicemail=voicemail), lambda progress: advance(call.id, progress))
    except Exception as exc:  # noqa: BLE001 - a provider failure ends the call as failed, visible to the client
        log.exception("placing call %s failed", call.id)
        advance(call.id, Progress("failed", error=f"the telephony provider refused the call: {exc}"))
        return
    if provider_call_id:
        Call.update(provider_call_id=provider_call_id).where(Call.id == call.id).execute()


def claim_call(call: Call) -> bool:
    """Take the queued call for dialling in one conditional update: RQ runs a job at least once (a re-queued job of a
    dead worker, a scheduler that moved a job twice), and only the job that wins this claim dials, so a candidate is
    never called twice for one call. The call's status is left to the provider's reports."""
    claimed = (Call.update(dialled_at=utcnow())
               .where((Call.id == call.id) & (Call.status == QUEUED) & Call.dialled_at.is_null()).execute())
    return bool(claimed)


def analysis_context(call: Call, transcript: list[dict]) -> CallContext:
    asked = {turn["question_index"]: turn["text"] for turn in transcript
             if turn.get("speaker") == "agent" and isinstance(turn.get("question_index"), int)}
    questions = [asked[i] for i in sorted(asked)] if asked else questions_for(call)
    candidate, job = call.candidate, call.job
    name = " ".join(part for part in (candidate.first_name, candidate.last_name) if part)
    return CallContext(candidate_name=name, job_title=job.title, job_description=job.description or "",
                       questions=questions, transcript=transcript)


def advance(call_id, progress: Progress) -> Call | None:
    """Apply a status a provider reported; late or repeated reports for a finished call are ignored."""
    call = Call.get_or_none(Call.id == call_id)
    if call is None or call.status in FINAL_STATUSES or (progress.status == call.status and progress.transcript is None):
        return call
    transcript = progress.transcript if progress.transcript is not None else call.transcript
    summary = assessment = None
    if progress.status == COMPLETED:
        summary, assessment = analyze(analysis_context(call, transcript), configured_model(current_app.config),
                                      current_app.config.get("LLM_MODEL", ""))
    now = utcnow()
    with database.atomic():
        call = Call.get(Call.id == call_id)
        if call.status in FINAL_STATUSES:
            return call
        call.status = progress.status
        call.transcript = transcript
        if progress.status in (RINGING, IN_PROGRESS) and call.started_at is None:
            call.started_at = now
        if progress.status in FINAL_STATUSES:
            call.ended_at = now
        if progress.voicemail_left:
            call.voicemail_left = True
        if progress.error:
            call.error = progress.error
        if summary is not None:
            call.summary, call.assessment = summary, assessment
        call.save()
        emit_activity(call)
    if call.status in FINAL_STATUSES:
        from plugins.calls.scheduling import after_attempt

        after_attempt(call)
    return call


def find_call(call_id) -> Call:
    ident = parse_uuid(call_id)
    call = Call.get_or_none(Call.id == ident) if ident else None
    if call is None:
        raise NotFound("call", call_id)
    return call




def cancel_scheduled_calls(tenant_id: str, job_id) -> int:
    """Cancel the job's pending scheduled attempts (called when scheduling is turned off); returns how many."""
    from plugins.calls.scheduling import cancel_scheduled_calls as cancel

    return cancel(tenant_id, job_id)
