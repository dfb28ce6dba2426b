"""The calls family's jobs by name, with their queue and options, in one place: an instant call
placed once its transaction commits, a scheduled attempt and its stored reminders at their times,
and dropping those when the attempt ends early. Jobs are named, never imported: this module sits
below plugins.calls.tasks."""

from __future__ import annotations

import datetime as dt

from app.background.queue import enqueue, enqueue_at, get_queue

QUEUE = "calls"
CALL_JOB_TIMEOUT = 600


def place_soon(call_id) -> None:
    """Place the instant call once the transaction that made it commits."""
    enqueue("plugins.calls.tasks.run_call", str(call_id), queue=QUEUE, job_timeout=CALL_JOB_TIMEOUT)


def place_at(call_id, when: dt.datetime) -> None:
    """Run the scheduled attempt at `when` (aware UTC); without a scheduler, `flask calls run-due`
    does."""
    enqueue_at(
        when,
        "plugins.calls.tasks.run_scheduled_call",
        str(call_id),
        queue=QUEUE,
        job_id=f"call-{call_id}",
        job_timeout=CALL_JOB_TIMEOUT,
    )


def complete_all_soon(ends: list[tuple]) -> None:
    """Make the ends conversations wrote their calls' statuses (the assessment, the event and the
    webhook) on a worker, in one job, so a relay's turns never wait on them; inline without Redis.
    Each end is (call id, status, error, voicemail_left)."""
    enqueue("plugins.calls.tasks.complete_conversations", [list(end) for end in ends], queue=QUEUE)


def reminder_job_id(reminder_id, attempts: int) -> str:
    """One job id per try of a reminder: a retry is a new job, scheduled while the failed try's job
    still runs."""
    return f"reminder-{reminder_id}-{attempts}"


def remind_at(reminder_id, attempts: int, when: dt.datetime) -> None:
    """Send the stored reminder (its try after `attempts` failed ones) at `when` (aware UTC);
    without a scheduler, `flask calls run-due` does."""
    enqueue_at(
        when,
        "plugins.calls.tasks.send_reminder",
        str(reminder_id),
        queue=QUEUE,
        job_id=reminder_job_id(reminder_id, attempts),
    )


def forget(call_id, reminder_job_ids=()) -> None:
    """Drop the attempt's and its reminders' scheduled jobs (the jobs also check what they would
    send when they run)."""
    get_queue().cancel_scheduled([f"call-{call_id}", *reminder_job_ids], queue=QUEUE)
