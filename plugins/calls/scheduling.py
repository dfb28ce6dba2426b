"""Scheduled calls: arm a series when an application becomes ACTIVE on a job with scheduling on,
place each attempt inside the job's schedule setting via RQ's scheduler, retry unreached candidates,
send reminders, cancel on disable. It reacts to events (an application's, a call's) and to the job's
scheduling switch; nothing here is called back.

repeat_calling: an application that re-enters ACTIVE after a completed screening call starts a new
series only when it is on; off (the default), one completed screening per application is enough.
Instant calls are never limited."""

from __future__ import annotations

import datetime as dt
import logging
import uuid

from app.data.db import database, utcnow
from app.data.records import first_row, inserted
from plugins.applications.models import Application
from plugins.calls import dispatch, reminders
from plugins.applications.services import APPLICATION_ACTIVITY
from plugins.calls.lifecycle import CALL_ACTIVITY, end_call, new_call
from plugins.calls.calling_hours import (
    candidate_timezone,
    contact_refusal,
    daily_cap_next_day,
    hours_description,
    next_allowed_at,
)
from plugins.calls.models import (
    CALLBACK,
    CANCELED,
    COMPLETED,
    FINAL_STATUSES,
    OPTED_OUT,
    QUEUED,
    SCHEDULED,
    UNREACHED_STATUSES,
    Call,
    CallPlan,
    CallReminder,
)
from plugins.calls.placing import place_call
from plugins.calls.schedule_rules import ScheduleError, next_attempt_at
from plugins.candidates.consent import VOICE
from plugins.candidates.models import Candidate

log = logging.getLogger("hirekit.calls")

ACTIVE_STAGE = "ACTIVE"


def job_schedule(job_id) -> dict:
    """The schedule of a job the tenant's application or call names."""
    from plugins.scheduling.services import schedule_of_owned_job

    return schedule_of_owned_job(job_id)


def on_application_activity(event) -> None:
    """events listener: an application created or moved to ACTIVE arms scheduled calling; leaving
    ACTIVE disarms it."""
    if event.type != APPLICATION_ACTIVITY:
        return
    try:
        with database.atomic():
            react_to_application(event.tenant_id, event.payload)
    except Exception:  # noqa: BLE001 - scheduling must never fail the application write that emitted the event
        log.exception("scheduling calls for application event %s failed", event.event_id)


def react_to_application(tenant_id: str, record: dict) -> None:
    """The application record the event carries (written in this transaction, so the tenant's and
    there) moves its call plan; the application row itself is read only when a series starts."""
    if not record.get("id") or not record.get("job_id") or not record.get("application_stage"):
        return
    stage = str(record["application_stage"]).upper()
    # every application write runs this look-up (records.first_row: no query builder)
    plan = first_row(CallPlan, {CallPlan.application: record["id"], CallPlan.tenant: tenant_id})
    previous = plan.last_stage if plan else None
    if plan is None:
        plan = inserted(
            CallPlan,
            application=record["id"],
            tenant=tenant_id,
            job=record["job_id"],
            last_stage=stage,
        )
    elif previous != stage:
        plan.last_stage = stage
        plan.save()
    if stage == ACTIVE_STAGE and previous != ACTIVE_STAGE:
        start_series(plan)
    elif stage != ACTIVE_STAGE and previous == ACTIVE_STAGE:
        cancel_pending(
            Call.application == record["id"], reason="the application left the ACTIVE stage"
        )


def start_series(plan: CallPlan) -> Call | None:
    schedule = job_schedule(plan.job_id)
    if not schedule["scheduling"]:
        return None
    application = Application.get_or_none(Application.id == plan.application_id)
    if application is None:
        return None
    if not application.candidate.phone_no:
        log.info("application %s: candidate has no phone number, no call scheduled", application.id)
        return None
    refusal = contact_refusal(application.candidate, VOICE)
    if refusal:
        log.info("application %s: %s, no call scheduled", application.id, refusal)
        return None
    if not schedule.get("repeat_calling") and already_screened(application):
        log.info(
            "application %s: already screened and repeat_calling is off, no call scheduled",
            application.id,
        )
        return None
    cancel_pending(Call.application == application.id, reason="a new scheduled series started")
    plan.series, plan.triggered_at = uuid.uuid4(), utcnow()
    plan.save()
    return schedule_next(plan, application, schedule)


def already_screened(application: Application) -> bool:
    """Whether a call to the application's candidate about this job was completed (instant or
    scheduled)."""
    return (
        Call.select()
        .where((Call.application == application.id) & (Call.status == COMPLETED))
        .exists()
    )


def series_attempt_times(series) -> list[dt.datetime]:
    calls = Call.select().where(
        (Call.series == series) & (Call.status != CANCELED) & (Call.status != QUEUED)
    )
    return [call.ended_at or call.started_at or call.scheduled_for for call in calls]


def schedule_next(plan: CallPlan, application: Application, schedule: dict) -> Call | None:
    """Create the next queued attempt at the time the rules allow, in the candidate's zone and
    calling hours, and hand it to RQ's scheduler; None when none is left (a series the calling hours
    leave no room for ends with a canceled attempt saying so)."""
    attempts = series_attempt_times(plan.series)
    try:
        when = allowed_attempt_at(
            application.candidate,
            schedule,
            triggered_at=plan.triggered_at,
            attempts=attempts,
            now=utcnow(),
        )
    except ScheduleError as exc:
        log.warning("job %s: cannot schedule calls: %s", application.job_id, exc)
        when = None
    except NoCallingHours as exc:
        call = new_call(
            application, trigger=SCHEDULED, attempt=len(attempts) + 1, series=plan.series
        )
        end_call(call, CANCELED, str(exc))
        when = None
    if when is None:
        CallPlan.update(series=None).where(CallPlan.application == plan.application_id).execute()
        return None
    call = new_call(
        application,
        trigger=SCHEDULED,
        attempt=len(attempts) + 1,
        series=plan.series,
        scheduled_for=when,
    )
    enqueue_attempt(call, schedule)
    return call


class NoCallingHours(Exception):
    """The job's attempts would all fall outside the candidate's calling hours: the series cannot go
    on."""


# window and calling hours agree within a few rounds; more means they never overlap
ALIGN_ROUNDS = 20


def allowed_attempt_at(
    candidate, schedule: dict, *, triggered_at, attempts, now
) -> dt.datetime | None:
    """The series' next attempt: the job's rules (window, days, daily and total attempts) in the
    candidate's zone, moved on until it also falls in the calling hours. None when the rules leave
    no attempt; NoCallingHours when attempts are left but none of them can fall in the calling
    hours."""
    zone = candidate_timezone(candidate)
    moment = now
    for _ in range(ALIGN_ROUNDS):
        when = next_attempt_at(
            schedule, triggered_at=triggered_at, attempts=attempts, now=moment, timezone=zone.name
        )
        if when is None:
            if moment == now:
                return None
            break
        allowed = next_allowed_at(candidate, schedule, when)
        if allowed == when:
            return when
        if allowed is None:
            break
        moment = allowed
    raise NoCallingHours(
        f"no attempt is left inside both the job's window and the candidate's "
        f"{hours_description(candidate)}"
    )


def enqueue_attempt(call: Call, schedule: dict) -> None:
    """The attempt and its stored reminders as scheduled jobs; without Redis, `flask calls run-due`
    runs what is due."""
    dispatch.place_at(call.id, call.scheduled_for.replace(tzinfo=dt.timezone.utc))
    reminders.plan_reminders(call, schedule)


def move_attempt(call: Call, when: dt.datetime, schedule: dict) -> None:
    """The attempt waits until `when`: moved (so sync sees it) and handed to the scheduler again."""
    Call.update(scheduled_for=when, updated_at=utcnow()).where(Call.id == call.id).execute()
    call.scheduled_for = when
    enqueue_attempt(call, schedule)


def run_attempt(call: Call) -> None:
    """At the scheduled time: re-check that the attempt is still wanted and allowed, then place
    it."""
    schedule = job_schedule(call.job_id)
    # a callback or a deferred instant call: placed at its time if still allowed
    if call.trigger != SCHEDULED:
        return run_booked(call, schedule)
    plan = CallPlan.get_or_none(CallPlan.application == call.application_id)
    application = call.application
    if not schedule["scheduling"]:
        return cancel_call(call, "scheduling was disabled for the job")
    if (
        plan is None
        or plan.series != call.series
        or application.application_stage.upper() != ACTIVE_STAGE
    ):
        return cancel_call(call, "the scheduled series is no longer current")
    refusal = contact_refusal(call.candidate, VOICE, call.phone_no)
    if refusal:
        return cancel_call(call, OPTED_OUT if call.candidate.contact_opt_out else refusal)
    try:
        allowed = allowed_attempt_at(
            call.candidate,
            schedule,
            triggered_at=plan.triggered_at,
            attempts=series_attempt_times(call.series),
            now=utcnow() - dt.timedelta(seconds=60),
        )
    except NoCallingHours as exc:
        return cancel_call(call, str(exc))
    if allowed is None:
        return cancel_call(call, "no attempt is left in the schedule")
    capped = daily_cap_next_day(
        call.candidate, call.phone_no, max(allowed, utcnow()), schedule, besides=call.id
    )
    if capped is not None:
        allowed = capped
    # the setting, hours or cap say later: move the attempt
    if allowed > utcnow() + dt.timedelta(seconds=1):
        return move_attempt(call, allowed, schedule)
    place_call(call, voicemail=bool(schedule.get("voicemail_enabled")))


def run_booked(call: Call, schedule: dict) -> None:
    """A callback or deferred instant call at its time: consent and the do-not-call list decide
    whether it goes; the calling hours and the daily cap whether it goes now or at the next allowed
    moment."""
    refusal = contact_refusal(call.candidate, VOICE, call.phone_no)
    if refusal:
        return cancel_call(call, OPTED_OUT if call.candidate.contact_opt_out else refusal)
    window = schedule if call.trigger == CALLBACK else None
    now = utcnow()
    allowed = next_allowed_at(call.candidate, window, now)
    if allowed is not None:
        allowed = (
            daily_cap_next_day(call.candidate, call.phone_no, allowed, window, besides=call.id)
            or allowed
        )
    if allowed is None:
        return cancel_call(
            call, f"no moment is left inside the candidate's {hours_description(call.candidate)}"
        )
    # never early: the calling hours are a bound, not a target
    if allowed > now + dt.timedelta(seconds=1):
        return move_attempt(call, allowed, schedule)
    place_call(call, voicemail=bool(schedule.get("voicemail_enabled")))


def on_call_activity(event) -> None:
    """events listener, run once the emitting transaction commits: a scheduled attempt that ended
    moves its series on."""
    record = event.payload
    if (
        event.type != CALL_ACTIVITY
        or record.get("trigger") not in (SCHEDULED, CALLBACK)
        or record.get("status") not in FINAL_STATUSES
    ):
        return
    call = Call.get_or_none((Call.id == record.get("id")) & (Call.tenant == event.tenant_id))
    if call is not None:
        after_attempt(call)


def after_attempt(call: Call) -> None:
    """A finished scheduled attempt (or callback in a series): unreached -> the next attempt;
    completed -> the series is done."""
    if call.trigger not in (SCHEDULED, CALLBACK) or call.series is None:
        return
    plan = CallPlan.get_or_none(CallPlan.application == call.application_id)
    if plan is None or plan.series != call.series:
        return
    if call.status == COMPLETED:
        CallPlan.update(series=None).where(CallPlan.application == plan.application_id).execute()
    elif call.status in UNREACHED_STATUSES:
        schedule = job_schedule(call.job_id)
        if schedule["scheduling"]:
            with database.atomic():
                schedule_next(plan, call.application, schedule)


def cancel_call(call: Call, reason: str) -> None:
    """Cancel the queued attempt and its pending reminders, and drop their scheduled jobs."""
    if call.status == QUEUED and end_call(call, CANCELED, reason):
        dispatch.forget(call.id, reminders.pending_job_ids(call.id))
        reminders.cancel_reminders(CallReminder.call == call.id, f"the call was canceled: {reason}")


def cancel_pending(condition, *, reason: str) -> int:
    pending = list(
        Call.select().where(condition & (Call.status == QUEUED) & (Call.trigger == SCHEDULED))
    )
    for call in pending:
        cancel_call(call, reason)
    return len(pending)


def cancel_scheduled_calls(tenant_id: str, job_id) -> int:
    """Cancel the job's pending scheduled attempts (scheduling turned off); returns how many were
    canceled."""
    with database.atomic():
        count = cancel_pending(
            (Call.tenant == tenant_id) & (Call.job == job_id),
            reason="scheduling was disabled for the job",
        )
        CallPlan.update(series=None).where(
            (CallPlan.tenant == tenant_id) & (CallPlan.job == job_id)
        ).execute()
    return count


def on_contact_opt_out(tenant_id: str, candidate_id) -> int:
    """The candidate opted out: their pending scheduled attempts (and so their reminders) are
    canceled and their series stopped; answers how many attempts were canceled."""
    with database.atomic():
        count = cancel_pending(
            (Call.tenant == tenant_id) & (Call.candidate == candidate_id), reason=OPTED_OUT
        )
        applications = Application.select(Application.id).where(
            Application.candidate == candidate_id
        )
        CallPlan.update(series=None).where(CallPlan.application.in_(applications)).execute()
    return count


def on_consent_revoked(tenant_id: str, candidate_id, revoked: tuple) -> int:
    """Consent to calls withdrawn: the candidate's pending calls are canceled and their series
    stopped."""
    if VOICE not in revoked:
        return 0
    opted_out = (
        Candidate.select()
        .where((Candidate.id == candidate_id) & Candidate.contact_opt_out)
        .exists()
    )
    reason = OPTED_OUT if opted_out else "the candidate withdrew consent to calls"
    with database.atomic():
        pending = list(
            Call.select().where(
                (Call.tenant == tenant_id)
                & (Call.candidate == candidate_id)
                & (Call.status == QUEUED)
                & Call.dialled_at.is_null()
            )
        )
        for call in pending:
            cancel_call(call, reason)
        applications = Application.select(Application.id).where(
            Application.candidate == candidate_id
        )
        CallPlan.update(series=None).where(CallPlan.application.in_(applications)).execute()
    return len(pending)


def run_instant(call: Call) -> None:
    """An instant call the queue reached: placed now when still allowed, else waits for the next
    allowed moment."""
    if call.scheduled_for is not None:
        return run_attempt(call)
    now = utcnow()
    if next_allowed_at(call.candidate, None, now) == now:
        return place_call(call)
    run_booked(call, job_schedule(call.job_id))


def on_scheduling_toggled(tenant_id: str, job_id, enabled: bool) -> None:
    if not enabled:
        cancel_scheduled_calls(tenant_id, job_id)


def run_due_calls(now: dt.datetime | None = None) -> int:
    """Embedded mode (no Redis): place every scheduled attempt, callback and deferred instant call
    that is due; returns how many were run."""
    now = now or utcnow()
    due = list(
        Call.select().where(
            (Call.status == QUEUED) & Call.dialled_at.is_null() & (Call.scheduled_for <= now)
        )
    )
    for call in due:
        run_attempt(call)
    return len(due)
