"""Calls left ringing or in progress by a worker that died (or by provider callbacks that never
came), and calls still queued long after they should have started (their job lost with a worker or
Redis), end as failed, so the application is not blocked from new calls forever and a scheduled
series moves on to its next attempt. A lost call is failed, not re-queued: its job may still be
waiting somewhere, and a candidate must never be dialled twice for one call."""

from __future__ import annotations

import datetime as dt
import logging

from flask import current_app

from app.data.db import utcnow
from plugins.calls.lifecycle import end_call
from plugins.calls.models import FAILED, IN_PROGRESS, INSTANT, QUEUED, RINGING, SCHEDULED, Call

log = logging.getLogger("hirekit.calls")

BATCH = 500


def stall_after() -> dt.timedelta:
    return dt.timedelta(seconds=float(current_app.config["CALL_STALL_SECONDS"]))


def reap_stalled_calls(now: dt.datetime | None = None) -> int:
    """Fail every call with no progress for CALL_STALL_SECONDS while ringing or in progress, and
    every call that has waited that long past its start (instant: creation, scheduled: its time)
    without starting; returns how many. Each ends with its call_activity event, which moves a
    scheduled series on (plugins.calls.scheduling)."""
    now = now or utcnow()
    quiet_since = now - stall_after()
    never_started = (Call.status == QUEUED) & (
        ((Call.trigger == INSTANT) & (Call.updated_at < quiet_since))
        | ((Call.trigger == SCHEDULED) & (Call.scheduled_for < quiet_since))
    )
    stalled = list(
        Call.select()
        .where(
            (Call.status.in_((RINGING, IN_PROGRESS)) & (Call.updated_at < quiet_since))
            | never_started
        )
        .order_by(Call.updated_at)
        .limit(BATCH)
    )
    reaped = 0
    for call in stalled:
        reason = _reason(call)
        if end_call(call, FAILED, reason, as_read=True, now=now):
            reaped += 1
            log.warning("call %s failed by the reaper: %s", call.id, reason)
    return reaped


def _reason(call: Call) -> str:
    if call.status == QUEUED:
        since = call.scheduled_for if call.trigger == SCHEDULED else call.updated_at
        return (
            f"never started: queued for {since.isoformat(timespec='seconds')}Z and no worker took "
            "it "
            "(its job was lost with a worker or Redis)"
        )
    return (
        f"no progress since {call.updated_at.isoformat(timespec='seconds')}Z while {call.status}: "
        "the worker or the provider's callbacks were lost"
    )
