"""Callbacks a candidate asks for on a call: the candidate's zone, booking the time as the
application's next attempt (plugins.calls.rescheduling, which checks the window, days and calling
hours), and saying a time aloud."""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from app.errors import Conflict
from plugins.calls.calling_hours import CallTimeNotAllowed, candidate_timezone, next_allowed_at
from plugins.calls.models import Call
from plugins.calls.rescheduling import book_callback, job_schedule_of
from plugins.candidates.consent import CANDIDATE_CALL

log = logging.getLogger("hirekit.calls")


@dataclass(frozen=True)
class Outcome:
    """A booked callback's time (aware UTC), or the next time that would be allowed (None: none
    is)."""

    booked_for: dt.datetime | None
    next_allowed: dt.datetime | None
    reason: str | None = None


def candidate_zone(call_id) -> str:
    """The candidate's IANA zone, where 'tomorrow at 10' is read and callbacks are said."""
    return candidate_timezone(Call.get(Call.id == call_id).candidate).name


def book(call_id, when: dt.datetime) -> Outcome:
    """Book `when` as the application's next attempt; a time the job's window and days or the
    candidate's calling hours do not allow comes back with the next allowed one, and a candidate who
    may not be called (consent, the do-not-call list) gets no booking."""
    call = Call.get(Call.id == call_id)
    try:
        booked = book_callback(call, _naive_utc(when), source=CANDIDATE_CALL)
    except CallTimeNotAllowed as refused:
        return Outcome(None, _aware(refused.next_allowed), refused.reason)
    except Conflict as refused:
        log.info("call %s: no callback booked: %s", call_id, refused)
        return Outcome(None, None, str(refused))
    return Outcome(_aware(booked.scheduled_for), None)


def next_allowed(call_id, after: dt.datetime) -> dt.datetime | None:
    """The first moment a callback may be booked from `after` on."""
    call = Call.get(Call.id == call_id)
    found = next_allowed_at(call.candidate, job_schedule_of(call), _naive_utc(after))
    return _aware(found)


def spoken_time(when: dt.datetime, zone: str) -> str:
    """'Tuesday, December 1 at 10:00 AM' in the candidate's zone."""
    local = _aware(when).astimezone(ZoneInfo(zone))
    clock = local.strftime("%I:%M %p").lstrip("0")
    return f"{local.strftime('%A, %B')} {local.day} at {clock}"


def _aware(value: dt.datetime | None) -> dt.datetime | None:
    if value is None:
        return None
    return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)


def _naive_utc(value: dt.datetime) -> dt.datetime:
    return _aware(value).astimezone(dt.timezone.utc).replace(tzinfo=None)
