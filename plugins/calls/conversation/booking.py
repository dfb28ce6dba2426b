"""Callbacks a candidate asks for on a call: the candidate's zone, booking the time as the application's next attempt
through the calls' scheduling, and saying a time aloud. The rules of when a call may be placed live in
plugins.calls.calling_hours; this module only asks them."""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from flask import current_app

from plugins.calls.models import Call

log = logging.getLogger("hirekit.calls")


@dataclass(frozen=True)
class Outcome:
    """A booked callback's time (aware UTC), or the next time that would be allowed (None: none is)."""

    booked_for: dt.datetime | None
    next_allowed: dt.datetime | None
    reason: str | None = None


def candidate_zone(call_id) -> str:
    """The candidate's IANA zone, where 'tomorrow at 10' is read and callbacks are said."""
    call = Call.get(Call.id == call_id)
    try:
        from plugins.calls.calling_hours import candidate_timezone
    except ImportError:
        return current_app.config.get("TIMEZONE") or "UTC"
    zone = candidate_timezone(call.candidate)
    return str(zone) if zone else (current_app.config.get("TIMEZONE") or "UTC")


def book(call_id, when: dt.datetime) -> Outcome:
    """Book `when` as the next attempt; a time the job's window, days or the candidate's hours do not allow comes
    back with the next allowed one."""
    call = Call.get(Call.id == call_id)
    try:
        from plugins.calls.rescheduling import CallTimeNotAllowed, book_callback
    except ImportError:
        return Outcome(None, None, "callbacks cannot be booked by this service")
    try:
        booked = book_callback(call, _utc(when), source="call")
    except CallTimeNotAllowed as refused:
        return Outcome(None, _aware(refused.next_allowed), refused.reason)
    return Outcome(_aware(booked.scheduled_for), None)


def next_allowed(call_id, after: dt.datetime) -> dt.datetime | None:
    """The first moment a callback may be booked after `after`."""
    call = Call.get(Call.id == call_id)
    try:
        from plugins.calls.calling_hours import next_allowed_at
    except ImportError:
        return None
    found = next_allowed_at(call, _utc(after))
    return _aware(found) if found else None


def spoken_time(when: dt.datetime, zone: str) -> str:
    """'Tuesday, December 1 at 10:00 AM' in the candidate's zone."""
    local = _aware(when).astimezone(ZoneInfo(zone))
    clock = local.strftime("%I:%M %p").lstrip("0")
    return f"{local.strftime('%A, %B')} {local.day} at {clock}"


def _aware(value: dt.datetime | None) -> dt.datetime | None:
    if value is None:
        return None
    return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)


def _utc(value: dt.datetime) -> dt.datetime:
    return _aware(value).astimezone(dt.timezone.utc)
