"""The calls family's jobs by name, with their queue and options, in one place: an instant call placed once its
transaction commits, a scheduled attempt and its reminders at their times, and dropping those when the attempt ends
early. Jobs are named, never imported: this module sits below plugins.calls.tasks."""

from __future__ import annotations

import datetime as dt

from app.queue import enqueue, enqueue_at, get_queue

QUEUE = "calls"
CALL_JOB_TIMEOUT = 600
REMINDER_CHANNELS = ("email", "sms")


def place_soon(call_id) -> None:
    """Place the instant call once the transaction that made it commits."""
    enqueue("plugins.calls.tasks.run_call", str(call_id), queue=QUEUE, job_timeout=CALL_JOB_TIMEOUT)


def place_at(call_id, when: dt.datetime) -> None:
    """Run the scheduled attempt at `when` (aware UTC); without a scheduler, `flask calls run-due` does."""
    enqueue_at(when, "plugins.calls.tasks.run_scheduled_call", str(call_id), queue=QUEUE, job_id=f"call-{call_id}",
               job_timeout=CALL_JOB_TIMEOUT)


def remind_at(call_id, channel: str, when: dt.datetime) -> None:
    """Remind the candidate of the attempt through `channel` (one of REMINDER_CHANNELS) at `when` (aware UTC)."""
    enqueue_at(when, "plugins.calls.tasks.send_reminder", str(call_id), channel, queue=QUEUE,
               job_id=f"reminder-{channel}-{call_id}")


def forget(call_id) -> None:
    """Drop the attempt's and its reminders' scheduled jobs (the jobs also check the call's status when they run)."""
    get_queue().cancel_scheduled([f"call-{call_id}", *(f"reminder-{channel}-{call_id}" for channel in REMINDER_CHANNELS)],
                                 queue=QUEUE)
