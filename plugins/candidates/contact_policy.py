"""A tenant's contact policy: its default time zone, its calling hours (quiet hours outside them)
and its daily call cap per phone number; one row per tenant that changed any of them, the server's
defaults otherwise."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import peewee as pw
from flask import current_app

from app.data.db import TimestampedModel, database
from app.data.tenancy import Tenant

# a calling-hours end of 24:00 reaches midnight: "00:00"-"24:00" allows every hour
END_OF_DAY = "24:00"


class ContactPolicy(TimestampedModel):
    """The tenant's own contact settings (null: the server's default applies)."""

    tenant = pw.ForeignKeyField(
        Tenant, primary_key=True, on_delete="CASCADE", column_name="tenant_id"
    )
    timezone = pw.CharField(max_length=64, null=True)
    calling_hours_start = pw.CharField(max_length=5, null=True)
    calling_hours_end = pw.CharField(max_length=5, null=True)
    daily_call_limit = pw.IntegerField(null=True)

    class Meta:
        table_name = "contact_policies"


@dataclass(frozen=True)
class Policy:
    """The contact policy in force for a tenant: every value resolved (tenant's own, else the
    server's)."""

    tenant_id: str
    # the tenant's own default zone, None when it has none (the server's zone applies)
    timezone: str | None
    calling_hours_start: str  # HH:MM, local to the candidate
    calling_hours_end: str  # HH:MM, or 24:00
    daily_call_limit: int  # calls to one number per local day across the tenant's jobs; 0: no cap

    @property
    def start(self) -> dt.time:
        return parse_clock(self.calling_hours_start)

    def end_on(self, day: dt.date, zone: dt.tzinfo) -> dt.datetime:
        """The end of the calling hours on a local day (midnight after it for 24:00)."""
        if self.calling_hours_end == END_OF_DAY:
            return dt.datetime.combine(day + dt.timedelta(days=1), dt.time(0), tzinfo=zone)
        return dt.datetime.combine(day, parse_clock(self.calling_hours_end), tzinfo=zone)


def parse_clock(value: str) -> dt.time:
    return dt.time.fromisoformat(value)


def clock_problem(value) -> str | None:
    """Why `value` is not an HH:MM time of day (24:00 allowed), or None."""
    if value == END_OF_DAY:
        return None
    try:
        dt.time.fromisoformat(value)
    except (TypeError, ValueError):
        return "Not a time of day as HH:MM (00:00 to 24:00)."
    return None if len(value) == 5 else "Not a time of day as HH:MM (00:00 to 24:00)."


def zone_problem(name) -> str | None:
    """Why `name` is not an IANA time zone name, or None."""
    if not isinstance(name, str) or not name or name != name.strip() or "\x00" in name:
        return "Not an IANA time zone name, e.g. America/New_York."
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return f"{name!r} is not an IANA time zone name, e.g. America/New_York."
    return None


def server_calling_hours() -> tuple[str, str]:
    start, _, end = str(current_app.config["CALLING_HOURS"]).partition("-")
    return start.strip(), end.strip()


def policy_for(tenant_id: str) -> Policy:
    """The tenant's policy in force."""
    row = ContactPolicy.get_or_none(ContactPolicy.tenant == tenant_id)
    start, end = server_calling_hours()
    limit = current_app.config["DAILY_CALL_LIMIT"]
    if row is not None:
        start, end = row.calling_hours_start or start, row.calling_hours_end or end
        limit = row.daily_call_limit if row.daily_call_limit is not None else limit
    return Policy(
        tenant_id=tenant_id,
        timezone=row.timezone if row else None,
        calling_hours_start=start,
        calling_hours_end=end,
        daily_call_limit=int(limit or 0),
    )


def policy_record(policy: Policy) -> dict:
    return {
        "timezone": policy.timezone,
        "effective_timezone": policy.timezone or current_app.config["TIMEZONE"],
        "calling_hours_start": policy.calling_hours_start,
        "calling_hours_end": policy.calling_hours_end,
        "daily_call_limit": policy.daily_call_limit,
    }


def set_policy(tenant_id: str, values: dict) -> Policy:
    """Store the sent settings (null: back to the server's default)."""
    with database.atomic():
        row = ContactPolicy.get_or_none(ContactPolicy.tenant == tenant_id) or ContactPolicy(
            tenant=tenant_id
        )
        for name, value in values.items():
            setattr(row, name, value)
        if ContactPolicy.get_or_none(ContactPolicy.tenant == tenant_id) is None:
            row.save(force_insert=True)
        else:
            row.save()
    return policy_for(tenant_id)


def check_server_calling_hours(value: str) -> None:
    """Start-up check of HIREKIT_CALLING_HOURS: HH:MM-HH:MM with the start before the end."""
    start, separator, end = str(value).partition("-")
    start, end = start.strip(), end.strip()
    if (
        not separator
        or clock_problem(start)
        or clock_problem(end)
        or start == END_OF_DAY
        or not start < end
    ):
        raise ValueError(
            f"HIREKIT_CALLING_HOURS must be HH:MM-HH:MM with the start first (e.g. 08:00-21:00), "
            f"not {value!r}"
        )
