"""Background jobs of the calls family on the `calls` queue: place an instant call, run a scheduled
attempt, remind, complete a call whose conversation ended, and the reaper of calls whose worker
died. Nothing imports this module to enqueue: plugins.calls.dispatch names the jobs. A job starts
only once the transaction that made its call commits (app.background.queue), so it reads the call
once."""

from __future__ import annotations

import logging

from flask import current_app

from app.background import periodic
from app.background.queue import task
from plugins.calls import reaper, reminders, scheduling
from plugins.calls.dispatch import QUEUE
from plugins.calls.models import QUEUED, Call
from plugins.calls.relay.claims import sweep_with_provider

REAPER_JOB_ID = "hirekit-calls-reaper"
log = logging.getLogger("hirekit.calls")


def queued_call(call_id: str) -> Call | None:
    """The call if it still waits to be placed (not ended, canceled or placed by another run of the
    job)."""
    return Call.get_or_none((Call.id == call_id) & (Call.status == QUEUED))


@task
def run_call(call_id: str) -> str:
    call = queued_call(call_id)
    if call is None:
        return "skipped"
    scheduling.run_instant(call)
    return "placed"


@task
def complete_conversation(
    call_id: str, status: str, error: str | None, voicemail_left: bool
) -> str:
    """The status the end of a call's conversation means, with its assessment, event and webhook."""
    from plugins.calls.lifecycle import complete_end

    return "done" if complete_end(call_id, status, error, voicemail_left) is not None else "skipped"


@task
def complete_conversations(ends: list) -> str:
    """complete_conversation for each (call id, status, error, voicemail_left) a relay handed on in
    one go; one call's failure does not stop the others, and fails the job once they are done (a
    retry leaves the completed ones as they are)."""
    failed = []
    for call_id, status, error, voicemail_left in ends:
        try:
            complete_conversation(call_id, status, error, voicemail_left)
        except Exception:  # noqa: BLE001 - the others are still completed
            log.exception("completing call %s failed", call_id)
            failed.append(call_id)
    if failed:
        raise RuntimeError(
            f"completing {len(failed)} of {len(ends)} calls failed: {', '.join(failed)}"
        )
    return f"{len(ends)} completed"


@task
def run_scheduled_call(call_id: str) -> str:
    call = queued_call(call_id)
    if call is None:
        return "skipped"
    scheduling.run_attempt(call)
    return "done"


@task
def send_reminder(reminder_id: str) -> str:
    """Send the stored reminder if this run claims it: its status afterwards, or "not claimed" when
    another run had it (or it is no longer pending)."""
    return reminders.send_reminder(reminder_id) or "not claimed"


@periodic.chained(job_id=REAPER_JOB_ID, queue=QUEUE, interval_setting="CALL_REAPER_INTERVAL")
def reap_stalled_calls() -> int:
    """Fail calls stuck ringing, in progress or never started, and relay calls no relay holds;
    send reminders whose scheduled job was lost (with Redis) and fail those a dead run left
    claimed."""
    reminders.send_due_reminders()
    return reaper.reap_stalled_calls() + sweep_with_provider(current_app.config)
