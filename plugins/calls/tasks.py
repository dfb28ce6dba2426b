"""Background jobs of the calls family on the `calls` queue: place an instant call, run a scheduled attempt, remind,
and the reaper of calls whose worker died. Nothing imports this module to enqueue: plugins.calls.dispatch names the
jobs. A job starts only once the transaction that made its call commits (app.background.queue), so it reads the call once."""

from __future__ import annotations

from app.background import periodic
from app.background.queue import task
from plugins.calls import reaper, reminders, scheduling
from plugins.calls.dispatch import QUEUE
from plugins.calls.models import QUEUED, Call

REAPER_JOB_ID = "hirekit-calls-reaper"


def queued_call(call_id: str) -> Call | None:
    """The call if it still waits to be placed (not ended, canceled or placed by another run of the job)."""
    return Call.get_or_none((Call.id == call_id) & (Call.status == QUEUED))


@task
def run_call(call_id: str) -> str:
    call = queued_call(call_id)
    if call is None:
        return "skipped"
    scheduling.run_instant(call)
    return "placed"


@task
def run_scheduled_call(call_id: str) -> str:
    call = queued_call(call_id)
    if call is None:
        return "skipped"
    scheduling.run_attempt(call)
    return "done"


@task
def send_reminder(reminder_id: str) -> str:
    """Send the stored reminder if this run claims it: its status afterwards, or "not claimed" when another run had it
    (or it is no longer pending)."""
    return reminders.send_reminder(reminder_id) or "not claimed"


@periodic.chained(job_id=REAPER_JOB_ID, queue=QUEUE, interval_setting="CALL_REAPER_INTERVAL")
def reap_stalled_calls() -> int:
    """Fail calls stuck ringing, in progress or never started; send reminders whose scheduled job was lost (with
    Redis) and fail those a dead run left claimed."""
    reminders.send_due_reminders()
    return reaper.reap_stalled_calls()
