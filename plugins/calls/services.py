"""Call operations the routes and MCP tools use: start an instant call (within the candidate's
calling hours), read one, list them; moving and canceling are plugins.calls.rescheduling."""

from __future__ import annotations

import datetime as dt

from app.http import listing
from app.data.db import database, utcnow
from app.errors import ApiError, Conflict
from app.background.queue import get_queue
from app.data.records import get_owned
from plugins.applications.models import Application
from plugins.calls import dispatch
from plugins.calls.lifecycle import active_call, new_call
from plugins.calls.calling_hours import (
    candidate_timezone,
    contact_refusal,
    daily_cap_next_day,
    daily_cap_reason,
    hours_description,
    moment_record,
    next_allowed_at,
)
from plugins.calls.models import INSTANT, Call, CallReminder
from plugins.candidates.consent import VOICE
from plugins.candidates.services import held_candidate

FILTER_COLUMNS = {
    "job_id": Call.job,
    "candidate_id": Call.candidate,
    "application_id": Call.application,
    "application_source_id": Call.application_source_id,
    "job_source_id": Call.job_source_id,
    "candidate_source_id": Call.candidate_source_id,
    "status": Call.status,
}


def get_call(tenant_id: str, call_id) -> Call:
    return get_owned(Call, tenant_id, call_id)


def get_call_with_reminders(tenant_id: str, call_id) -> Call:
    """The call (404 as get_call) with `reminders`, its stored reminders by due time, for
    CallWithRemindersSchema."""
    call = get_call(tenant_id, call_id)
    call.reminders = list(
        CallReminder.select()
        .where(CallReminder.call == call.id)
        .order_by(CallReminder.due_at, CallReminder.channel)
    )
    return call


def calls_query(tenant_id: str, **filters):
    """The tenant's calls matching the list filters (empty ones ignored)."""
    query = Call.owned_rows(tenant_id)
    for name, value in filters.items():
        if value is not None:
            query = query.where(FILTER_COLUMNS[name] == value)
    return query


def list_calls(tenant_id: str, **args) -> dict:
    """A page of the tenant's calls in either list mode (app.http.listing)."""
    window, filters = listing.split_window(args)
    return listing.answer(
        calls_query(tenant_id, **filters),
        window,
        tenant_id=tenant_id,
        list_name="calls",
        filters=filters,
    )


REFUSE, QUEUE = "refuse", "queue"  # what an instant call outside the candidate's calling hours does
OUTSIDE_HOURS_CHOICES = (REFUSE, QUEUE)


def start_instant_call(
    tenant_id: str, application_id, *, outside_calling_hours: str = REFUSE
) -> Call:
    """POST .../instant-call: queue a call now; 409 while the application has one queued, ringing or
    in progress, when the candidate withdrew consent to calls or their number is on the do-not-call
    list, and outside their calling hours (or past the daily cap): then the error names the next
    allowed moment, or with `outside_calling_hours=queue` the call is queued for that moment
    instead.

    The call is placed once its row commits. On Redis the queue is checked inside the transaction,
    so a Redis that is down answers 503 with nothing stored rather than a call that would wait for
    the reaper.
    """
    application = get_owned(Application, tenant_id, application_id)
    with database.atomic():
        # first: 404 once erased, and an erasure waits for this write
        candidate = held_candidate(tenant_id, application.candidate_id)
        refusal = contact_refusal(candidate, VOICE) if not candidate.contact_opt_out else None
        if refusal:
            raise Conflict(f"no call can be made: {refusal}")
        now = utcnow()
        allowed, reason = (
            next_allowed_at(candidate, None, now),
            f"outside the {hours_description(candidate)}",
        )
        if allowed == now and candidate.phone_no:
            capped = daily_cap_next_day(candidate, candidate.phone_no, now, None)
            if capped is not None:
                allowed, reason = capped, daily_cap_reason(candidate)
        existing = active_call(application.id)
        if existing is not None:
            raise Conflict(
                f"application {application.id} already has a call {existing.status}",
                existing_id=existing.id,
            )
        if allowed != now and not (outside_calling_hours == QUEUE and allowed is not None):
            raise not_now_error(candidate, reason, allowed)
        get_queue().check_reachable()
        if allowed != now:
            call = new_call(application, trigger=INSTANT, scheduled_for=allowed)
            dispatch.place_at(call.id, allowed.replace(tzinfo=dt.timezone.utc))
        else:
            call = new_call(application, trigger=INSTANT)
            dispatch.place_soon(call.id)
    return call


def not_now_error(candidate, reason: str, allowed) -> ApiError:
    """The 409 of an instant call that may not go now, naming the next allowed moment in the
    candidate's zone and UTC."""
    zone = candidate_timezone(candidate)
    following = moment_record(allowed, zone)
    when = (
        f"the next allowed moment is {following['local']} in {zone.name} ({following['utc']}); add "
        f"outside_calling_hours=queue to queue the call for it"
        if following
        else "no moment in the next two weeks is allowed"
    )
    return ApiError(
        409,
        f"the candidate cannot be called now: {reason}; {when}",
        extra={"next_allowed": following},
    )
