"""When the next scheduled call attempt may happen: one pure function over a job's schedule setting,
the attempts so far and now."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from zoneinfo import ZoneInfo

# every weekday occurs within a week, so a week and a day always finds an allowed day
SEARCH_DAYS = 8


class ScheduleError(ValueError):
    """The setting cannot be scheduled from (for instance a window that crosses midnight)."""


def parse_time(value: str) -> dt.time:
    try:
        return dt.time.fromisoformat(value)
    except (TypeError, ValueError):
        raise ScheduleError(f"window time {value!r} is not HH:MM:SS") from None


def _utc(local: dt.datetime) -> dt.datetime:
    return local.astimezone(dt.timezone.utc).replace(tzinfo=None)


def next_attempt_at(
    setting: Mapping,
    *,
    triggered_at: dt.datetime,
    attempts: Sequence[dt.datetime],
    now: dt.datetime,
    timezone: str | dt.tzinfo = "UTC",
) -> dt.datetime | None:
    """The earliest allowed moment for the next attempt (naive UTC), or None when no attempt is
    left.

    - the first attempt waits call_schedule_minutes after the trigger; later ones retry_interval
      after the previous;
    - only on days_of_week (ISO 1 = Monday .. 7 = Sunday, in `timezone`), within [window_start_time,
      window_end_time);
    - at most daily_attempts on one local day and total_attempts in all; a day with no room rolls to
      the next allowed day.
    Datetimes in and out are naive UTC. A window that crosses midnight (start >= end) raises
    ScheduleError.
    """
    start, end = parse_time(setting["window_start_time"]), parse_time(setting["window_end_time"])
    if start >= end:
        raise ScheduleError(
            "window_start_time must be before window_end_time (windows may not cross midnight)"
        )
    zone = ZoneInfo(timezone) if isinstance(timezone, str) else timezone
    days = set(setting.get("days_of_week") or ())
    daily, total = int(setting.get("daily_attempts") or 0), int(setting.get("total_attempts") or 0)
    if not days or daily <= 0 or len(attempts) >= total:
        return None

    if attempts:
        earliest = max(attempts) + dt.timedelta(minutes=int(setting.get("retry_interval") or 0))
    else:
        earliest = triggered_at + dt.timedelta(
            minutes=int(setting.get("call_schedule_minutes") or 0)
        )
    earliest_local = max(earliest, now).replace(tzinfo=dt.timezone.utc).astimezone(zone)
    per_day: dict[dt.date, int] = {}
    for attempt in attempts:
        day = attempt.replace(tzinfo=dt.timezone.utc).astimezone(zone).date()
        per_day[day] = per_day.get(day, 0) + 1

    for offset in range(SEARCH_DAYS):
        day = earliest_local.date() + dt.timedelta(days=offset)
        if day.isoweekday() not in days or per_day.get(day, 0) >= daily:
            continue
        window_start = dt.datetime.combine(day, start, tzinfo=zone)
        window_end = dt.datetime.combine(day, end, tzinfo=zone)
        candidate = max(window_start, earliest_local)
        if candidate < window_end:
            return _utc(candidate)
    return None
