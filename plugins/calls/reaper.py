"""Calls left ringing or in progress by a worker that died (or by provider callbacks that never came) end as failed,
so the application is not blocked from new calls forever and a scheduled series moves on to its next attempt."""

from __future__ import annotations

import datetime as dt
import logging

from flask import current_app

from app.db import database, utcnow
from plugins.calls.models import FAILED, IN_PROGRESS, RINGING, Call

log = logging.getLogger("hirekit.calls")

BATCH = 500


def stall_after() -> dt.timedelta:
    return dt.timedelta(seconds=float(current_app.config["CALL_STALL_SECONDS"]))


def reap_stalled_calls(now: dt.datetime | None = None) -> int:
    """Fail every call with no progress for CALL_STALL_SECONDS while ringing or in progress; returns how many."""
    from plugins.calls.scheduling import after_attempt
    from plugins.calls.services import emit_activity

    now = now or utcnow()
    quiet_since = now - stall_after()
    stalled = list(Call.select().where(Call.status.in_((RINGING, IN_PROGRESS)) & (Call.updated_at < quiet_since))
                   .order_by(Call.updated_at).limit(BATCH))
    reaped = 0
    for call in stalled:
        reason = (f"no progress since {call.updated_at.isoformat(timespec='seconds')}Z while {call.status}: "
                  "the worker or the provider's callbacks were lost")
        with database.atomic():
            # Only if it is still as we read it: a call that moved meanwhile is alive
            updated = (Call.update(status=FAILED, error=reason, ended_at=now, updated_at=now)
                       .where((Call.id == call.id) & (Call.status == call.status) & (Call.updated_at == call.updated_at))
                       .execute())
            if updated:
                emit_activity(Call.get(Call.id == call.id))
        if updated:
            reaped += 1
            log.warning("call %s failed by the reaper: %s", call.id, reason)
            after_attempt(Call.get(Call.id == call.id))
    return reaped
