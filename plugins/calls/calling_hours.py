"""When a candidate may be called or texted, in their own time zone: inside the tenant's calling
hours (quiet hours outside them) and, for a call about a job, inside the job's window and days; plus
the other gates every call and text passes (consent on the channel, the tenant's do-not-call list,
the daily cap of calls per number). Datetimes in and out are naive UTC."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from plugins.calls.models import Call
from plugins.calls.schedule_rules import parse_time
from plugins.candidates import consent as contact_consent
from plugins.candidates.contact_policy import Policy, policy_for
from plugins.candidates.do_not_call import is_listed
from plugins.candidates.zones import zone_of

# two weeks and a day: every weekday of a window occurs twice, across any daylight-saving change
SEARCH_DAYS = 15


@dataclass(frozen=True)
class CandidateZone:
    """A candidate's IANA zone and where it came from: explicit, phone, location, tenant or
    server."""

    name: str
    source: str

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.name)


class CallTimeNotAllowed(Exception):
    """A call asked for at a moment the candidate may not be called: `reason` says why,
    `next_allowed` (naive UTC) is the earliest moment from then on that is allowed, or None when
    none is within the search horizon."""

    def __init__(
        self, reason: str, next_allowed: dt.datetime | None, zone: CandidateZone | None = None
    ):
        super().__init__(reason)
        self.reason = reason
        self.next_allowed = next_allowed
        self.zone = zone


def candidate_timezone(candidate) -> CandidateZone:
    """The candidate's zone as it stands now (explicit, else inferred, else the tenant's, else the
    server's)."""
    name, source = zone_of(candidate)
    return CandidateZone(name=name, source=source)


def _aware(when: dt.datetime, zone: dt.tzinfo) -> dt.datetime:
    return when.replace(tzinfo=dt.timezone.utc).astimezone(zone)


def _naive_utc(local: dt.datetime) -> dt.datetime:
    return local.astimezone(dt.timezone.utc).replace(tzinfo=None)


def window_of(schedule: dict | None) -> tuple[dt.time, dt.time, frozenset[int]] | None:
    """(start, end, ISO weekdays) of a job's schedule setting, or None without one."""
    if not schedule:
        return None
    days = frozenset(schedule.get("days_of_week") or ())
    return parse_time(schedule["window_start_time"]), parse_time(schedule["window_end_time"]), days


def next_allowed_in(
    zone: dt.tzinfo, policy: Policy, schedule: dict | None, after: dt.datetime
) -> dt.datetime | None:
    """The earliest moment >= `after` inside the calling hours and the schedule's window and days,
    in `zone`."""
    window = window_of(schedule)
    local_after = _aware(after, zone)
    for offset in range(SEARCH_DAYS):
        day = local_after.date() + dt.timedelta(days=offset)
        if window is not None and day.isoweekday() not in window[2]:
            continue
        opens = dt.datetime.combine(day, policy.start, tzinfo=zone)
        closes = policy.end_on(day, zone)
        if window is not None:
            opens = max(opens, dt.datetime.combine(day, window[0], tzinfo=zone))
            closes = min(closes, dt.datetime.combine(day, window[1], tzinfo=zone))
        opens_utc, closes_utc = _naive_utc(opens), _naive_utc(closes)
        moment = max(opens_utc, after)
        if moment < closes_utc:
            return moment
    return None


def next_allowed_at(candidate, schedule: dict | None, after: dt.datetime) -> dt.datetime | None:
    """The earliest moment >= `after` (naive UTC) inside the job schedule's window and days if
    given, and the tenant's calling hours, in the candidate's zone; None when there is none within
    the search horizon."""
    return next_allowed_in(
        candidate_timezone(candidate).zone, policy_for(candidate.tenant_id), schedule, after
    )


def is_allowed_at(candidate, schedule: dict | None, when: dt.datetime) -> bool:
    """Whether `when` (naive UTC) is inside the window, days and calling hours in the candidate's
    zone."""
    return next_allowed_at(candidate, schedule, when) == when


def is_quiet_at(candidate, when: dt.datetime) -> bool:
    """Whether `when` is outside the tenant's calling hours in the candidate's zone (no text goes
    then)."""
    return not is_allowed_at(candidate, None, when)


def hours_description(candidate, schedule: dict | None = None) -> str:
    """'08:00-21:00 America/Chicago (calling hours), window 09:00:00-17:00:00 on days 1-5': what the
    times obey."""
    policy, zone = policy_for(candidate.tenant_id), candidate_timezone(candidate)
    text = f"calling hours {policy.calling_hours_start}-{policy.calling_hours_end} {zone.name}"
    window = window_of(schedule)
    if window is not None:
        days = ",".join(str(day) for day in sorted(window[2]))
        text += f", the job's window {window[0]:%H:%M}-{window[1]:%H:%M} on ISO days {days}"
    return text


def local_call_time(when: dt.datetime, zone_name: str) -> str:
    """`when` (naive UTC) in the zone, with the zone's abbreviation and name: "Monday 30 November
    2026 at 10:00 CET (Europe/Paris)"; a zone whose abbreviation is its name (UTC) is named once."""
    local = when.replace(tzinfo=dt.timezone.utc).astimezone(ZoneInfo(zone_name))
    abbreviation = local.tzname()
    named = abbreviation if abbreviation == zone_name else f"{abbreviation} ({zone_name})"
    return f"{local:%A} {local.day} {local:%B %Y} at {local:%H:%M} {named}"


def moment_record(when: dt.datetime | None, zone: CandidateZone) -> dict | None:
    """A moment as an answer shows it: UTC, the candidate's local time with its offset, and the
    zone's name."""
    if when is None:
        return None
    local = _aware(when, zone.zone)
    return {
        "utc": when.isoformat(timespec="seconds") + "Z",
        "local": local.isoformat(timespec="seconds"),
        "timezone": zone.name,
    }


# ---- the gates beside time: consent, the do-not-call list, the daily cap
# ------------------------------------------


def contact_refusal(candidate, channel: str, phone_no: str | None = None) -> str | None:
    """Why the candidate may not be contacted on `channel` at all (no consent, the number on the
    tenant's do-not-call list), or None."""
    if candidate.contact_opt_out:
        return "the candidate opted out of contact"
    if not contact_consent.has_consent(candidate, channel):
        return f"the candidate has not consented to {CHANNEL_NAMES[channel]}"
    number = phone_no if phone_no is not None else candidate.phone_no
    if channel != contact_consent.EMAIL and is_listed(candidate.tenant_id, number):
        return f"{number} is on the tenant's do-not-call list"
    return None


CHANNEL_NAMES = {
    contact_consent.VOICE: "calls",
    contact_consent.SMS: "text messages",
    contact_consent.EMAIL: "emails",
}


def local_day_bounds(when: dt.datetime, zone: dt.tzinfo) -> tuple[dt.datetime, dt.datetime]:
    """(start, end) in naive UTC of the candidate's local day that holds `when`."""
    day = _aware(when, zone).date()
    start = dt.datetime.combine(day, dt.time(0), tzinfo=zone)
    end = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(0), tzinfo=zone)
    return _naive_utc(start), _naive_utc(end)


def calls_placed_on_day(
    tenant_id: str, phone_no: str, when: dt.datetime, zone: dt.tzinfo, *, besides=None
) -> int:
    """Calls of the tenant dialled to the number on the local day of `when` (any job)."""
    start, end = local_day_bounds(when, zone)
    query = Call.select().where(
        (Call.tenant == tenant_id)
        & (Call.phone_no == phone_no)
        & (Call.dialled_at >= start)
        & (Call.dialled_at < end)
    )
    if besides is not None:
        query = query.where(Call.id != besides)
    return query.count()


def daily_cap_next_day(
    candidate, phone_no: str, when: dt.datetime, schedule: dict | None, *, besides=None
) -> dt.datetime | None:
    """None when one more call to the number fits the tenant's daily cap on the local day of `when`;
    else the earliest allowed moment of the next local day (None past the horizon is reported as
    `when` unchanged)."""
    policy = policy_for(candidate.tenant_id)
    if not policy.daily_call_limit or not phone_no:
        return None
    zone = candidate_timezone(candidate).zone
    if (
        calls_placed_on_day(candidate.tenant_id, phone_no, when, zone, besides=besides)
        < policy.daily_call_limit
    ):
        return None
    _, day_end = local_day_bounds(when, zone)
    return next_allowed_in(zone, policy, schedule, day_end) or when


def daily_cap_reason(candidate) -> str:
    policy = policy_for(candidate.tenant_id)
    return (
        f"the tenant's cap of {policy.daily_call_limit} call(s) a day to {candidate.phone_no} is "
        "reached for "
        f"the candidate's local day"
    )
