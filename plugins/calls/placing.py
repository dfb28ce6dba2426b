"""Placing a queued call: claim it once, hand its script to the telephony provider, and feed the
provider's reports back as status changes (plugins.calls.lifecycle)."""

from __future__ import annotations

import logging

from flask import current_app

from app.data.db import utcnow
from plugins.calls.calling_hours import contact_refusal
from plugins.calls.lifecycle import advance, end_call, questions_for
from plugins.calls.models import CANCELED, OPTED_OUT, QUEUED, Call
from plugins.calls.recordings import recording_enabled
from plugins.calls.telephony import CallScript, Progress, get_provider
from plugins.candidates.consent import VOICE

log = logging.getLogger("hirekit.calls")


def script_for(call: Call, *, voicemail: bool = False) -> CallScript:
    candidate, job = call.candidate, call.job
    name = " ".join(part for part in (candidate.first_name, candidate.last_name) if part)
    config = current_app.config
    return CallScript(
        call_id=str(call.id),
        phone_no=call.phone_no,
        candidate_name=name,
        job_title=job.title,
        company=job.client_name,
        questions=questions_for(call),
        voicemail=voicemail,
        record=recording_enabled(call.tenant_id),
        language=config["CALL_LANGUAGE"],
        voice=config["CALL_VOICE"],
        hints=job_terms(job, candidate),
        recruiter_name=job.recruiter_name,
        recruiter_phone=job.recruiter_work_phone_no,
        recruiter_email=job.recruiter_email,
    )


def job_terms(job, candidate) -> tuple[str, ...]:
    """Words a recogniser would not expect that this call will hear: the job's title, company, place
    and industry, and the candidate's own name."""
    terms = (
        job.title,
        job.client_name,
        job.city,
        job.industry,
        job.workplace_type,
        job.employment_type,
        candidate.first_name,
        candidate.last_name,
    )
    return tuple(term.strip() for term in terms if term and term.strip())


def place_call(call: Call, *, voicemail: bool = False) -> None:
    """Hand the call to the provider, once; synchronous providers report every status before this
    returns. A candidate who opted out or withdrew consent to calls since the call was queued, or
    whose number went on the tenant's do-not-call list, is not dialled: the call ends canceled."""
    refusal = contact_refusal(call.candidate, VOICE, call.phone_no)
    if refusal:
        end_call(call, CANCELED, OPTED_OUT if call.candidate.contact_opt_out else refusal)
        return
    if not claim_call(call):
        log.warning("call %s was already claimed by another job: not dialled again", call.id)
        return
    provider = get_provider()
    try:
        provider_call_id = provider.place(
            script_for(call, voicemail=voicemail), lambda progress: advance(call.id, progress)
        )
    except Exception as exc:  # noqa: BLE001 - a provider failure ends the call as failed, visible to the client
        log.exception("placing call %s failed", call.id)
        advance(
            call.id, Progress("failed", error=f"the telephony provider refused the call: {exc}")
        )
        return
    if provider_call_id:
        Call.update(provider_call_id=provider_call_id).where(Call.id == call.id).execute()


def claim_call(call: Call) -> bool:
    """Take the queued call for dialling in one conditional update: RQ runs a job at least once (a
    re-queued job of a dead worker, a scheduler that moved a job twice), and only the job that wins
    this claim dials, so a candidate is never called twice for one call. The call's status is left
    to the provider's reports."""
    claimed = (
        Call.update(dialled_at=utcnow())
        .where((Call.id == call.id) & (Call.status == QUEUED) & Call.dialled_at.is_null())
        .execute()
    )
    return bool(claimed)
