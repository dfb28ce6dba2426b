"""Reminders of scheduled calls, one stored row per (call, channel): planned with the attempt,
claimed by one job before it is sent (RQ runs a job at least once, and `flask calls run-due` may run
beside a worker), so a candidate hears once; sent by email (app.outbound.notify) or SMS (the
telephony provider); retried after a transport error while the call is still ahead; skipped with the
reason when the candidate has no usable address or opted out; canceled with the call.

The answer to a candidate's own text that may not go in their quiet hours is kept and sent the
same way (hold_reply).

A row's status: pending (waiting for its time) -> sending (claimed) -> sent | failed | skipped |
canceled, or back to pending with a later due_at after a transport error."""

from __future__ import annotations

import datetime as dt
import logging
import smtplib

import phonenumbers
from flask import current_app

from app.data.db import database, utcnow
from app.outbound.notify import get_notifier
from plugins.calls import dispatch
from plugins.calls.calling_hours import (
    contact_refusal,
    hours_description,
    is_quiet_at,
    next_allowed_at,
)
from plugins.calls.models import (
    CANCELED,
    FAILED,
    OPTED_OUT,
    PENDING,
    QUEUED,
    REMINDER_CHANNELS,
    REMINDER_EMAIL,
    REMINDER_REPLY,
    REMINDER_SMS,
    SENDING,
    SENT,
    SKIPPED,
    Call,
    CallReminder,
)
from plugins.calls.reminder_messages import email_message, sms_message
from plugins.calls.telephony import SmsRefused, get_provider
from plugins.candidates.models import Candidate
from plugins.candidates.services import opt_out_phone_number

log = logging.getLogger("hirekit.calls")

CLAIM_SLACK = dt.timedelta(
    seconds=5
)  # a job RQ's scheduler moved a moment early still finds its reminder due
BATCH = 500
NO_SMS_TYPES = {
    phonenumbers.PhoneNumberType.FIXED_LINE,
    phonenumbers.PhoneNumberType.TOLL_FREE,
    phonenumbers.PhoneNumberType.PREMIUM_RATE,
    phonenumbers.PhoneNumberType.SHARED_COST,
    phonenumbers.PhoneNumberType.UAN,
    phonenumbers.PhoneNumberType.VOICEMAIL,
    phonenumbers.PhoneNumberType.PAGER,
}


class ReminderRefused(Exception):
    """The channel refused this reminder for good: trying again would fail again."""


# ---- planning: with the attempt
# --------------------------------------------------------------------------------------


def wanted_channels(call: Call, schedule: dict) -> list[str]:
    """The channels the job's schedule setting reminds through for this attempt (the first, or every
    one with _repeat)."""
    return [
        channel
        for channel in REMINDER_CHANNELS
        if schedule.get(f"{channel}_enabled")
        and (call.attempt == 1 or schedule.get(f"{channel}_repeat"))
    ]


def plan_reminders(call: Call, schedule: dict) -> list[CallReminder]:
    """Store (or move, for an attempt moved to another time) the attempt's reminders, each
    `<channel>_notify_minutes` before the call (now, when that has passed), and hand the pending
    ones to the queue; answers them all."""
    now = utcnow()
    planned = []
    for channel in wanted_channels(call, schedule):
        due = max(
            call.scheduled_for
            - dt.timedelta(minutes=int(schedule.get(f"{channel}_notify_minutes") or 0)),
            now,
        )
        reminder = CallReminder.get_or_none(
            (CallReminder.call == call.id) & (CallReminder.channel == channel)
        )
        if reminder is None:
            address, reason = address_of(call.candidate, channel)
            reminder = CallReminder.create(
                tenant=call.tenant_id,
                call=call.id,
                channel=channel,
                address=address,
                due_at=due,
                status=SKIPPED if reason else PENDING,
                error=reason,
            )
        elif reminder.status == PENDING:
            CallReminder.update(due_at=due, updated_at=now).where(
                CallReminder.id == reminder.id
            ).execute()
            reminder.due_at = due
        if reminder.status == PENDING:
            dispatch.remind_at(reminder.id, reminder.attempts, due.replace(tzinfo=dt.timezone.utc))
        planned.append(reminder)
    return planned


def address_of(candidate: Candidate, channel: str) -> tuple[str | None, str | None]:
    """(the candidate's address on `channel`, why it cannot be used or None)."""
    if candidate.contact_opt_out:
        return None, OPTED_OUT
    refusal = contact_refusal(
        candidate, channel
    )  # consent on the channel; the do-not-call list for texts
    if refusal:
        return (candidate.email if channel == REMINDER_EMAIL else candidate.phone_no), refusal
    if channel == REMINDER_EMAIL:
        email = (candidate.email or "").strip()
        if "@" not in email:
            return email or None, "the candidate has no email address"
        return email, None
    phone = (candidate.phone_no or "").strip()
    if not phone:
        return None, "the candidate has no phone number"
    try:
        kind = phonenumbers.number_type(phonenumbers.parse(phone, None))
    except phonenumbers.NumberParseException:
        return phone, f"{phone} is not a phone number that can receive text messages"
    if kind in NO_SMS_TYPES:
        return phone, f"{phone} is a {kind_name(kind)} number: it cannot receive text messages"
    return phone, None


def kind_name(kind: int) -> str:
    names = {
        value: name for name, value in vars(phonenumbers.PhoneNumberType).items() if name.isupper()
    }
    return names.get(kind, "non-mobile").lower().replace("_", " ")


# ---- sending: one claim, one message
# -------------------------------------------------------------------------------


def send_reminder(reminder_id, now: dt.datetime | None = None) -> str:
    """Send the reminder if this run claims it; answers its status afterwards ("" when another run
    had it)."""
    now = now or utcnow()
    if not claim(reminder_id, now):
        return ""
    reminder = CallReminder.get(CallReminder.id == reminder_id)
    call = reminder.call
    if call.status != QUEUED:
        return finish(reminder, CANCELED, error=f"the call is {call.status}: nothing to remind of")
    candidate = call.candidate
    medium = medium_of(reminder.channel)
    address, reason = address_of(candidate, medium)
    if reason:
        return finish(reminder, SKIPPED, address=address, error=reason)
    if medium == REMINDER_SMS and is_quiet_at(candidate, now):
        return wait_for_calling_hours(reminder, call, candidate, address, now)
    try:
        message_id = deliver(reminder, address, call, candidate)
    except SmsRefused as exc:
        if exc.unsubscribed:
            opt_out_phone_number(address)
        return finish(reminder, FAILED, address=address, error=str(exc))
    except ReminderRefused as exc:
        return finish(reminder, FAILED, address=address, error=str(exc))
    except Exception as exc:  # noqa: BLE001 - a transport error: retried while the call is still ahead
        log.warning(
            "reminder %s (%s to %s) failed: %s", reminder.id, reminder.channel, address, exc
        )
        return retry_or_fail(reminder, call, address, f"{type(exc).__name__}: {exc}")
    return finish(
        reminder,
        SENT,
        address=address,
        sent_at=utcnow(),
        provider_message_id=message_id,
        error=None,
    )


def wait_for_calling_hours(
    reminder: CallReminder, call: Call, candidate: Candidate, address: str, now: dt.datetime
) -> str:
    """A text due in the candidate's quiet hours waits for their calling hours, if they open before
    the call; else it is skipped, saying why."""
    opens = next_allowed_at(candidate, None, now)
    if opens is None or not before_the_call(opens, call):
        return finish(
            reminder,
            SKIPPED,
            address=address,
            error="the candidate's quiet hours last until the call "
            f"({hours_description(candidate)})",
        )
    status = finish(
        reminder,
        PENDING,
        address=address,
        due_at=opens,
        error=f"waiting for the candidate's calling hours ({hours_description(candidate)})",
    )
    if status == PENDING:
        dispatch.remind_at(reminder.id, reminder.attempts, opens.replace(tzinfo=dt.timezone.utc))
    return status


def medium_of(channel: str) -> str:
    """How a row goes out: a reply as an SMS, a reminder through its own channel."""
    return REMINDER_SMS if channel == REMINDER_REPLY else channel


def before_the_call(moment: dt.datetime, call: Call) -> bool:
    """Whether `moment` is still ahead of the call (a queued instant call has no time: always)."""
    return call.scheduled_for is None or moment < call.scheduled_for


def claim(reminder_id, now: dt.datetime) -> bool:
    """Take the pending, due reminder in one conditional update: only the run that wins it sends."""
    return bool(
        CallReminder.update(
            status=SENDING, claimed_at=now, attempts=CallReminder.attempts + 1, updated_at=now
        )
        .where(
            (CallReminder.id == reminder_id)
            & (CallReminder.status == PENDING)
            & (CallReminder.due_at <= now + CLAIM_SLACK)
        )
        .execute()
    )


def deliver(reminder: CallReminder, address: str, call: Call, candidate: Candidate) -> str | None:
    """Send the reminder through its channel (a reply: its text by SMS); answers the provider's
    message id, when it gives one."""
    if reminder.channel == REMINDER_REPLY:
        return get_provider().send_sms(address, reminder.body)
    if reminder.channel == REMINDER_EMAIL:
        subject, text, html = email_message(call, candidate)
        try:
            get_notifier().send_email(address, subject, text, html)
        except (
            smtplib.SMTPRecipientsRefused
        ) as exc:  # a 4xx (greylisting, a full mailbox) is worth a retry
            if all(code >= 500 for code, _ in exc.recipients.values()):
                raise ReminderRefused(
                    f"the mail server refused the recipient: {exc.recipients}"
                ) from exc
            raise
        except smtplib.SMTPResponseException as exc:  # the sender or the message refused
            if exc.smtp_code >= 500:
                raise ReminderRefused(
                    f"the mail server refused the message ({exc.smtp_code}): {exc.smtp_error!r}"
                ) from exc
            raise
        return None
    return get_provider().send_sms(address, sms_message(call, candidate))


def retry_or_fail(reminder: CallReminder, call: Call, address: str, error: str) -> str:
    """After a transport error: pending again after the next delay of REMINDER_RETRY_SCHEDULE if
    that is still before the call, else failed with the error."""
    delays = [float(seconds) for seconds in current_app.config["REMINDER_RETRY_SCHEDULE"]]
    if reminder.attempts <= len(delays):
        retry_at = utcnow() + dt.timedelta(seconds=delays[reminder.attempts - 1])
        if before_the_call(retry_at, call):
            status = finish(
                reminder,
                PENDING,
                address=address,
                due_at=retry_at,
                error=f"attempt {reminder.attempts} failed ({error}); trying again at "
                f"{retry_at.isoformat(timespec='seconds')}Z",
            )
            if status == PENDING:
                dispatch.remind_at(
                    reminder.id, reminder.attempts, retry_at.replace(tzinfo=dt.timezone.utc)
                )
            return status
    return finish(
        reminder,
        FAILED,
        address=address,
        error=f"not sent after {reminder.attempts} attempt(s): {error}",
    )


def finish(reminder: CallReminder, status: str, **values) -> str:
    """Record the outcome of this run's claim; answers the status the row has now."""
    CallReminder.update(status=status, updated_at=utcnow(), **values).where(
        (CallReminder.id == reminder.id) & (CallReminder.status == SENDING)
    ).execute()
    return CallReminder.select(CallReminder.status).where(CallReminder.id == reminder.id).scalar()


# ---- answers to the candidate's texts ----------------------------------------------------------


def hold_reply(call: Call, text: str, now: dt.datetime | None = None) -> str:
    """Send the answer to the candidate's own text about `call` as the call's `reply` row, the
    way an SMS reminder goes: in their quiet hours it waits for their calling hours
    (wait_for_calling_hours), checked again for consent and the do-not-call list when it goes. A
    later answer replaces one still waiting: the candidate gets the latest. Answers the row's
    status."""
    now = now or utcnow()
    values = {
        "status": PENDING,
        "due_at": now,
        "body": text,
        "error": None,
        "sent_at": None,
        "provider_message_id": None,
        "updated_at": now,
    }
    with database.atomic():
        held = CallReminder.get_or_none(
            (CallReminder.call == call.id) & (CallReminder.channel == REMINDER_REPLY)
        )
        if held is None:
            held = CallReminder.create(
                tenant=call.tenant_id, call=call.id, channel=REMINDER_REPLY, **values
            )
        elif not (
            CallReminder.update(**values)
            .where((CallReminder.id == held.id) & (CallReminder.status != SENDING))
            .execute()
        ):
            return SENDING  # the earlier answer is going out this moment: it stands
        return send_reminder(held.id, now)


# ---- canceling, and the sweep
# --------------------------------------------------------------------------------------


def cancel_reminders(condition, reason: str) -> int:
    """Cancel the pending reminders matching `condition` (their jobs find nothing to claim when they
    run)."""
    return (
        CallReminder.update(status=CANCELED, error=reason, updated_at=utcnow())
        .where(condition & (CallReminder.status == PENDING))
        .execute()
    )


def pending_job_ids(call_id, channels=None) -> list[str]:
    """The queue's job ids of the call's pending reminders (of `channels` only, when given)."""
    query = CallReminder.select(CallReminder.id, CallReminder.attempts).where(
        (CallReminder.call == call_id) & (CallReminder.status == PENDING)
    )
    if channels is not None:
        query = query.where(CallReminder.channel.in_(channels))
    return [dispatch.reminder_job_id(reminder.id, reminder.attempts) for reminder in query]


def send_due_reminders(now: dt.datetime | None = None) -> int:
    """The sweep (`flask calls run-due`, without Redis): send every pending reminder whose time has
    come, and fail the ones a dead run left claimed; answers how many were sent."""
    now = now or utcnow()
    abandon_stale_claims(now)
    due = (
        CallReminder.select(CallReminder.id)
        .where((CallReminder.status == PENDING) & (CallReminder.due_at <= now))
        .order_by(CallReminder.due_at)
        .limit(BATCH)
    )
    return sum(send_reminder(reminder.id, now) == SENT for reminder in list(due))


def abandon_stale_claims(now: dt.datetime) -> int:
    """A reminder claimed REMINDER_LEASE_SECONDS ago with no outcome was being sent by a run that
    died: it may have gone, so it is failed, never sent again."""
    lease = dt.timedelta(seconds=float(current_app.config["REMINDER_LEASE_SECONDS"]))
    return (
        CallReminder.update(
            status=FAILED,
            updated_at=now,
            error="the run sending it stopped before recording the outcome; not sent again, "
            "since it may have gone",
        )
        .where((CallReminder.status == SENDING) & (CallReminder.claimed_at < now - lease))
        .execute()
    )
