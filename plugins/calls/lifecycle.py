"""What a call is: creating it, its status changes, and the call_activity event each of them emits
(which webhooks and scheduling react to). Placing a call is plugins.calls.placing; this module knows
nothing of queues or providers."""

from __future__ import annotations

import datetime as dt

import peewee as pw
from flask import current_app

from app.data import events
from app.data.db import database, utcnow
from app.data.records import row_by_id
from app.errors import Conflict, NotFound, ValidationFailed
from plugins.applications.models import Application
from plugins.calls.analysis import CallContext, analyze, configured_model
from plugins.calls.rubric import assess
from plugins.calls.models import (
    ACTIVE_STATUSES,
    COMPLETED,
    FINAL_STATUSES,
    IN_PROGRESS,
    QUEUED,
    RINGING,
    Call,
)
from plugins.calls.schemas import CallSchema
from plugins.calls.telephony import Progress
from plugins.candidates.models import Candidate
from plugins.candidates.services import held_candidate
from plugins.jobs.models import Job
from plugins.questions.models import Question

CALL_ACTIVITY = "call_activity"  # the event every status change of a call emits
_call_schema = CallSchema()
# The end reason of a call that ended without its conversation saying why (a provider, the reaper)
END_REASON_BY_STATUS = {"no_answer": "no_answer", "busy": "busy", "failed": "failed"}
ANSWER_KEYS = (
    "question",
    "answer",
    "meets_requirement",
    "note",
    "answer_type",
    "value",
    "score",
    "evidence",
    "follow_ups",
    "knockout",
    "weight",
)


def call_record(call: Call) -> dict:
    return _call_schema.dump(call)


def emit_activity(call: Call) -> None:
    """Every status change is a call_activity event (and so a webhook delivery)."""
    events.emit(call.tenant_id, CALL_ACTIVITY, call_record(call))


def candidate_held(call: Call) -> bool:
    """Inside a transaction that changes the call: its candidate's row held first (the order an
    erasure locks in), so a change either commits before an erasure reads what to erase or finds the
    candidate gone (False)."""
    try:
        held_candidate(call.tenant_id, call.candidate_id, Candidate.id)
    except NotFound:
        return False
    return True


def active_call(application_id) -> Call | None:
    return (
        Call.select()
        .where((Call.application == application_id) & (Call.status.in_(ACTIVE_STATUSES)))
        .first()
    )


def new_call(
    application: Application,
    *,
    trigger: str,
    attempt: int = 1,
    series=None,
    scheduled_for=None,
    booked_by: str | None = None,
) -> Call:
    """A queued call to the application's candidate, announced (422 when the candidate has no phone
    number, 409 when they opted out of contact)."""
    candidate, job = application.candidate, application.job
    if candidate.contact_opt_out:
        raise Conflict(
            f"candidate {candidate.id} opted out of contact: no calls are made to them "
            f"(DELETE /v1/candidates/{candidate.id}/opt-out opts them back in)"
        )
    if not candidate.phone_no:
        raise ValidationFailed(
            {"phone_no": ["The candidate has no phone number to call."]},
            message=f"candidate {candidate.id} has no phone number to call",
        )
    with database.atomic():
        call = Call.create(
            tenant=application.tenant_id,
            application=application.id,
            job=job.id,
            candidate=candidate.id,
            application_source_id=application.source_id,
            job_source_id=job.source_id,
            candidate_source_id=candidate.source_id,
            status=QUEUED,
            attempt=attempt,
            trigger=trigger,
            series=series,
            scheduled_for=scheduled_for,
            booked_by=booked_by,
            phone_no=candidate.phone_no,
            provider=current_app.config["TELEPHONY"],
        )
        emit_activity(call)
    return call


def question_rows_for(call: Call) -> list[Question]:
    """The job's questions, then the application's own, in their order."""
    own = Question.application.is_null() | (Question.application == call.application_id)
    return list(
        Question.select()
        .where((Question.job == call.job_id) & Question.deleted_at.is_null() & own)
        .order_by(Question.application.is_null(False), Question.position, Question.created_at)
    )


def questions_for(call: Call) -> list[str]:
    return [question.question_text for question in question_rows_for(call)]


def analysis_context(call: Call, transcript: list[dict]) -> CallContext:
    # a conversation: its questions as asked (the agent's turns also hold follow-ups and thanks)
    if call.answers:
        questions = [entry["question"] for entry in call.answers]
    else:
        asked = {
            turn["question_index"]: turn["text"]
            for turn in transcript
            if turn.get("speaker") == "agent" and isinstance(turn.get("question_index"), int)
        }
        questions = [asked[i] for i in sorted(asked)] if asked else questions_for(call)
    candidate, job = call.candidate, call.job
    name = " ".join(part for part in (candidate.first_name, candidate.last_name) if part)
    return CallContext(
        candidate_name=name,
        job_title=job.title,
        job_description=job.description or "",
        questions=questions,
        transcript=transcript,
    )


def complete_end(call_id, status: str, error: str | None, voicemail_left: bool) -> Call | None:
    """The status a conversation's written end means, with its assessment, event and webhook: what
    the workers run for the ends a relay hands on, and its sweep for an end never handed on."""
    return advance(call_id, Progress(status, voicemail_left=voicemail_left, error=error))


def advance(call_id, progress: Progress) -> Call | None:
    """Apply a status a provider reported; late or repeated reports for a finished call are
    ignored."""
    call = row_by_id(Call, call_id)
    if (
        call is None
        or call.status in FINAL_STATUSES
        or (progress.status == call.status and progress.transcript is None)
    ):
        return call
    transcript = progress.transcript if progress.transcript is not None else call.transcript
    summary = assessment = None
    if progress.status == COMPLETED:
        call.job, call.candidate = (
            row_by_id(Job, call.job_id),
            row_by_id(Candidate, call.candidate_id),
        )
        summary, assessment = analyze(
            analysis_context(call, transcript),
            configured_model(current_app.config),
            current_app.config.get("LLM_MODEL", ""),
        )
        summary, assessment = conversation_outcome(call, summary, assessment)
    now = utcnow()
    with database.atomic():
        if not candidate_held(call):
            return None
        analysed = call
        call = row_by_id(Call, call_id)
        if call is None or call.status in FINAL_STATUSES:
            return call
        if progress.status == COMPLETED:  # its job and candidate, read above for the analysis
            call.job, call.candidate = analysed.job, analysed.candidate
        call.status = progress.status
        if progress.transcript is not None:
            call.transcript = progress.transcript
        if progress.status in (RINGING, IN_PROGRESS) and call.started_at is None:
            call.started_at = now
        if progress.status in FINAL_STATUSES:
            call.ended_at = now
        if progress.voicemail_left:
            call.voicemail_left = True
        if progress.status in FINAL_STATUSES and call.end_reason is None:
            call.end_reason = END_REASON_BY_STATUS.get(progress.status)
            if call.voicemail_left:
                call.end_reason = "voicemail_left"
        if progress.error:
            call.error = progress.error
        if summary is not None:
            call.summary, call.assessment = summary, assessment
        call.save(only=call.dirty_fields)  # what changed: not a conversation's whole record again
        emit_activity(call)
    return call


def conversation_outcome(call: Call, summary: str, assessment: dict) -> tuple[str, dict | None]:
    """A conversation's typed, rubric-scored answers make its assessment (the analyzer's
    summary stays); a conversation that ended before screening (wrong person, opt-out, callback)
    has none."""
    if not call.answers:
        return summary, assessment
    declined = (call.dialogue or {}).get("declined")
    if call.end_reason not in (None, "completed", "hung_up") or declined:
        reasons = {
            "wrong_person": "the person who answered was not the candidate",
            "opted_out": "the candidate asked not to be called again",
            "callback_booked": "the candidate asked to be called back",
        }
        why = reasons.get(call.end_reason, "the candidate declined the screening")
        return f"The screening call did not take place: {why}.", None
    answers = [{key: entry.get(key) for key in ANSWER_KEYS} for entry in call.answers]
    outcome = {**assess(call.answers), "answers": answers, "analyzer": call.analyzer or "rules"}
    if assessment.get("analyzer") == "rules":
        summary = conversation_summary(call, outcome)
    return summary, outcome


def conversation_summary(call: Call, outcome: dict) -> str:
    """The rules' summary of a conversation: each answer, what the candidate asked, the outcome."""
    candidate = call.candidate
    name = " ".join(part for part in (candidate.first_name, candidate.last_name) if part)
    parts = [f"{name} was screened by phone for the {call.job.title} position."]
    for entry in call.answers:
        evidence = entry.get("evidence")
        said = f'said "{evidence.rstrip(".")}"' if evidence else "gave no answer"
        parts.append(f'Asked "{entry["question"]}", they {said}.')
    passed = [q["question"] for q in call.candidate_questions or [] if q.get("passed_to_recruiter")]
    if call.candidate_questions:
        parts.append(
            f"They asked {len(call.candidate_questions)} question(s) of their own"
            + (f"; for the recruiter: {'; '.join(passed)}" if passed else "")
            + "."
        )
    met = sum(1 for entry in call.answers if entry.get("meets_requirement"))
    parts.append(
        f"{met} of {len(call.answers)} requirements met; score {outcome['score']}; "
        f"recommendation: {outcome['recommendation']}."
    )
    if outcome["knockouts_failed"]:
        parts.append(f"Knockout failed: {'; '.join(outcome['knockouts_failed'])}.")
    return " ".join(parts)


def end_call(
    call: Call, status: str, reason: str, *, as_read: bool = False, now: dt.datetime | None = None
) -> bool:
    """End the call as `status` (canceled, failed) with `reason` if it is still in the status it was
    read in (with `as_read`, also not updated since it was read): a call that moved meanwhile is
    alive. Answers whether it ended."""
    now = now or utcnow()
    condition = (Call.id == call.id) & (Call.status == call.status)
    if as_read:
        condition &= Call.updated_at == call.updated_at
    with database.atomic():
        if not candidate_held(call):
            return False
        ended = (
            Call.update(
                status=status,
                error=reason,
                ended_at=now,
                updated_at=now,
                end_reason=pw.Case(
                    None,
                    [(Call.end_reason.is_null(), END_REASON_BY_STATUS.get(status))],
                    Call.end_reason,
                ),
            )
            .where(condition)
            .execute()
        )
        if ended:
            emit_activity(Call.get(Call.id == call.id))
    return bool(ended)


def move_call(call: Call, when: dt.datetime, *, trigger: str, booked_by: str | None) -> Call | None:
    """Move the queued, not yet dialled call to `when` (naive UTC), announced; answers the moved
    call, or None when it was dialled, ended or canceled meanwhile."""
    now = utcnow()
    with database.atomic():
        moved = (
            Call.update(scheduled_for=when, trigger=trigger, booked_by=booked_by, updated_at=now)
            .where((Call.id == call.id) & (Call.status == QUEUED) & Call.dialled_at.is_null())
            .execute()
        )
        if not moved:
            return None
        call = Call.get(Call.id == call.id)
        emit_activity(call)
    return call
