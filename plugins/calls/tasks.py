"""Background jobs of the calls family on the `calls` queue: place an instant call, run a scheduled attempt, remind,
and the reaper of calls whose worker died."""

from __future__ import annotations

from app import periodic
from app.queue import task
from plugins.calls.models import QUEUED

QUEUE = "calls"
REAPER_JOB_ID = "hirekit-calls-reaper"


@task
def run_call(call_id: str) -> str:
    from plugins.calls.services import place_call, wait_for_call

    call = wait_for_call(call_id)
    if call is None or call.status != QUEUED:
        return "skipped"
    place_call(call)
    return "placed"


@task
def run_scheduled_call(call_id: str) -> str:
    from plugins.calls.scheduling import run_attempt
    from plugins.calls.services import wait_for_call

    call = wait_for_call(call_id)
    if call is None or call.status != QUEUED:
        return "skipped"
    run_attempt(call)
    return "done"


@task
def send_reminder(call_id: str, channel: str) -> bool:
    from plugins.calls.scheduling import send_reminder as remind
    from plugins.calls.services import wait_for_call

    call = wait_for_call(call_id)
    return call is not None and remind(call, channel)


@task
def reap_stalled_calls() -> int:
    """Fail calls stuck ringing, in progress or never started, then schedule the next pass (one chain: a fixed job id)."""
    from plugins.calls.reaper import reap_stalled_calls as reap

    try:
        return reap()
    finally:
        periodic.schedule_next(reap_stalled_calls, queue=QUEUE, job_id=REAPER_JOB_ID, interval_setting="CALL_REAPER_INTERVAL")
