"""Moving and canceling calls at someone's request: a callback the candidate asks for during a call,
a reschedule or cancel through the API, the candidate's page or a text. Every time is checked
against the job's window and days, the calling hours and the candidate's consent, in the candidate's
zone, before anything changes."""

from __future__ import annotations

import datetime as dt

from app.data.db import database, utcnow
from app.errors import ApiError, Conflict
from app.data.records import get_owned
from plugins.calls import reminders
from plugins.calls.calling_hours import (
    CallTimeNotAllowed,
    candidate_timezone,
    contact_refusal,
    daily_cap_next_day,
    daily_cap_reason,
    hours_description,
    is_allowed_at,
    moment_record,
    next_allowed_at,
)
from plugins.calls.lifecycle import move_call, new_call
from plugins.calls.models import (
    ACTIVE_STATUSES,
    CALLBACK,
    FINAL_STATUSES,
    QUEUED,
    REMINDER_CHANNELS,
    SCHEDULED,
    Call,
    CallPlan,
)
from plugins.candidates.consent import API, VOICE

PAST_SLACK = dt.timedelta(
    seconds=60
)  # "now" as a client's clock says it may be a little behind ours
FARTHEST_AHEAD = dt.timedelta(days=366)  # a call is booked within a year


def movable(call: Call) -> bool:
    """Queued and not yet handed to the telephony provider."""
    return call.status == QUEUED and call.dialled_at is None


def pending_call_of(application_id) -> Call | None:
    """The application's queued call that has not been dialled yet, soonest first."""
    return (
        Call.select()
        .where(
            (Call.application == application_id)
            & (Call.status == QUEUED)
            & Call.dialled_at.is_null()
        )
        .order_by(Call.scheduled_for.asc(nulls="first"), Call.created_at)
        .first()
    )


def check_call_time(call: Call, when: dt.datetime, schedule: dict) -> None:
    """Raise CallTimeNotAllowed unless the candidate may be called about this job at `when` (naive
    UTC)."""
    candidate = call.candidate
    now = utcnow()
    zone = candidate_timezone(candidate)
    if when < now - PAST_SLACK:
        raise CallTimeNotAllowed(
            "the time has passed", next_allowed_at(candidate, schedule, now), zone
        )
    if when > now + FARTHEST_AHEAD:
        raise CallTimeNotAllowed(
            "more than a year ahead", next_allowed_at(candidate, schedule, now), zone
        )
    when = max(when, now)
    if not is_allowed_at(candidate, schedule, when):
        raise CallTimeNotAllowed(
            f"outside the {hours_description(candidate, schedule)}",
            next_allowed_at(candidate, schedule, when),
            zone,
        )
    # every call dialled that day counts, `call` too when it is the one on the phone now (a callback
    # asked for on it would be the day's next call); a call still to be moved was never dialled
    later = daily_cap_next_day(candidate, call.phone_no, when, schedule)
    if later is not None:
        raise CallTimeNotAllowed(daily_cap_reason(candidate), later, zone)


def job_schedule_of(call: Call) -> dict:
    from plugins.calls.scheduling import job_schedule

    return job_schedule(call.job_id)


def book_callback(call: Call, when: dt.datetime, *, source: str) -> Call:
    """Have the candidate called back at `when` (naive UTC) about the call's application: the call
    itself moves when it is still queued, else the application's next queued attempt moves, else a
    new callback is queued. Checks the job's window and days and the calling hours in the
    candidate's zone (CallTimeNotAllowed, with the next allowed moment) and consent and the
    do-not-call list (409). Answers the queued call."""
    schedule = job_schedule_of(call)
    candidate = call.candidate
    refusal = contact_refusal(candidate, VOICE)
    if refusal:
        raise Conflict(f"no call can be booked: {refusal}")
    check_call_time(call, when, schedule)
    when = max(when, utcnow())
    with database.atomic():
        target = call if movable(call) else pending_call_of(call.application_id)
        if target is not None:
            moved = move_call(target, when, trigger=CALLBACK, booked_by=source)
            if moved is None:
                raise Conflict(f"call {target.id} started meanwhile; ask again")
            booked = moved
        else:
            booked = new_call(
                call.application,
                trigger=CALLBACK,
                attempt=call.attempt + 1,
                series=call.series,
                scheduled_for=when,
                booked_by=source,
            )
        enqueue_booked(booked, schedule)
    return booked


def enqueue_booked(call: Call, schedule: dict) -> None:
    """Hand the call at its new time to the queue (the old scheduled job finds nothing to do), with
    its reminders (planned again; a reply waiting for the calling hours keeps its time)."""
    from plugins.calls import dispatch

    dispatch.forget(call.id, reminders.pending_job_ids(call.id, REMINDER_CHANNELS))
    dispatch.place_at(call.id, call.scheduled_for.replace(tzinfo=dt.timezone.utc))
    reminders.plan_reminders(call, schedule)


def refuse_unless_queued(call: Call, action: str) -> None:
    """409 for a call already with the provider or finished."""
    if call.status in FINAL_STATUSES:
        raise Conflict(f"call {call.id} is already finished ({call.status}): it cannot be {action}")
    if call.status in ACTIVE_STATUSES and not movable(call):
        raise Conflict(f"call {call.id} is in progress ({call.status}): it cannot be {action}")


def time_not_allowed_error(error: CallTimeNotAllowed, field: str = "scheduled_for") -> ApiError:
    """The 422 for a time the candidate may not be called at, naming the field and the next allowed
    moment."""
    zone = error.zone
    following = moment_record(error.next_allowed, zone) if zone else None
    hint = (
        f"; the next allowed moment is {following['local']} ({following['timezone']}), "
        f"{following['utc']}"
        if following
        else "; no allowed moment in the next two weeks"
    )
    return ApiError(
        422,
        f"{field}: not allowed: {error.reason}{hint}",
        fields={field: [error.reason + hint]},
        extra={"next_allowed": following},
    )


def reschedule(tenant_id: str, call_id, when: dt.datetime, *, source: str) -> Call:
    """POST /v1/calls/{id}/reschedule: move the queued call to `when`."""
    call = get_owned(Call, tenant_id, call_id)
    refuse_unless_queued(call, "rescheduled")
    try:
        return book_callback(call, when, source=source)
    except CallTimeNotAllowed as error:
        raise time_not_allowed_error(error) from None


def reschedule_request(tenant_id: str, call_id, when: dt.datetime) -> Call:
    """The API's reschedule: an instant with an offset as given, a time without one in the
    candidate's zone."""
    call = get_owned(Call, tenant_id, call_id)
    if when.tzinfo is None:
        when = when.replace(tzinfo=candidate_timezone(call.candidate).zone)
    try:
        when = when.astimezone(dt.timezone.utc).replace(tzinfo=None)
    except OverflowError:
        raise ApiError(
            422, "scheduled_for: out of range", fields={"scheduled_for": ["Out of range."]}
        ) from None
    return reschedule(tenant_id, call.id, when, source=API)


def cancel(tenant_id: str, call_id, *, reason: str) -> Call:
    """POST /v1/calls/{id}/cancel: cancel the queued call with its reminders; a scheduled series it
    belongs to stops."""
    from plugins.calls.scheduling import cancel_call

    call = get_owned(Call, tenant_id, call_id)
    refuse_unless_queued(call, "canceled")
    with database.atomic():
        cancel_call(call, reason)
        if call.series is not None and call.trigger in (SCHEDULED, CALLBACK):
            (
                CallPlan.update(series=None)
                .where(
                    (CallPlan.application == call.application_id) & (CallPlan.series == call.series)
                )
                .execute()
            )
    call = Call.get(Call.id == call.id)
    if call.status == QUEUED:  # dialled between the read and the cancel
        refuse_unless_queued(call, "canceled")
    return call
