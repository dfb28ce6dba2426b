"""Two-way SMS: a candidate's reply to a reminder moves, confirms or stops their pending call ("call
me at 5pm", "tomorrow morning", "now", "later", "wrong number"), read with dateparser in the
candidate's own zone, and is answered with one short text saying what was done. What is not
understood gets one short help text per call, never more; a number with no pending call gets no
answer at all.

What is asked is done at once; the answer never goes in the candidate's quiet hours: it waits for
their calling hours, as a text reminder does (reminders.hold_reply)."""

from __future__ import annotations

import datetime as dt
import logging
import re
from dataclasses import dataclass, replace
from xml.sax.saxutils import escape

import dateparser

from app.data.db import database, utcnow
from plugins.calls import dispatch, reminders
from plugins.calls.calling_hours import (
    CallTimeNotAllowed,
    candidate_timezone,
    contact_refusal,
    is_quiet_at,
    local_call_time,
    next_allowed_at,
)
from plugins.calls.models import QUEUED, Call
from plugins.calls.rescheduling import book_callback, job_schedule_of
from plugins.candidates import consent as contact_consent
from plugins.candidates.models import Candidate

log = logging.getLogger("hirekit.calls")

EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response />'
MAX_REPLY_TEXT = 160  # longer texts are not replies to a reminder
LATER = dt.timedelta(
    hours=2
)  # "later": the first allowed moment at least this long after the time it had
NOW_WORDS = {
    "now",
    "call now",
    "call me now",
    "now please",
    "call me now please",
    "ready",
    "i'm ready",
    "im ready",
}
LATER_WORDS = {
    "later",
    "call later",
    "call me later",
    "later please",
    "not now",
    "busy",
    "i'm busy",
    "im busy",
}
CONFIRM_WORDS = {
    "ok",
    "okay",
    "confirm",
    "confirmed",
    "sounds good",
    "great",
    "perfect",
    "fine",
    "sure",
    "k",
    "thanks",
    "thank you",
    "see you then",
}
WRONG_NUMBER = re.compile(r"\b(wrong (number|person)|not me)\b")
FILLER = re.compile(
    r"\b(please|pls|call me|call|ring me|ring|can you|could you|how about|instead|maybe|at about|"
    r"around|at)\b"
)
PARTS_OF_DAY = {
    "morning": "9am",
    "noon": "12pm",
    "midday": "12pm",
    "lunchtime": "12pm",
    "afternoon": "2pm",
    "evening": "6pm",
    "tonight": "6pm",
}
HAS_TIME = re.compile(
    r"\d\s*(am|pm)\b|\d:\d\d|\b(noon|midday|morning|afternoon|evening|tonight|now)\b|\bin \d+ "
    r"(minutes?|hours?)\b|\d{3,4}\s*h"
)


@dataclass(frozen=True)
class Reply:
    """What the service texts back, or None for nothing."""

    text: str | None
    call: Call | None = None  # the pending call the text was about

    def twiml(self) -> str:
        if not self.text:
            return EMPTY_TWIML
        return (
            f'<?xml version="1.0" encoding="UTF-8"?><Response><Message>{escape(self.text)}'
            '</Message></Response>'
        )


def pending_call_for(phone_no: str) -> Call | None:
    """The soonest queued, not yet dialled call to this number, in any tenant."""
    return (
        Call.select()
        .where((Call.phone_no == phone_no) & (Call.status == QUEUED) & Call.dialled_at.is_null())
        .order_by(Call.scheduled_for.asc(nulls="first"), Call.created_at)
        .first()
    )


def normalized(text: str) -> str:
    return " ".join(re.sub(r"[^\w:' ]+", " ", text.lower()).split())


def reply_to(sender: str, body: str) -> Reply:
    """Act on a text from `sender` (not a STOP or START keyword) and answer what to text back
    now: nothing in the candidate's quiet hours, when the answer is kept to go once their calling
    hours open."""
    reply = answer(sender, body)
    if reply.text is None or reply.call is None or not is_quiet_at(reply.call.candidate, utcnow()):
        return reply
    reminders.hold_reply(reply.call, reply.text)
    return Reply(None, reply.call)


def answer(sender: str, body: str) -> Reply:
    """Act on a text from `sender` (not a STOP or START keyword) and say what to text back,
    whatever the hour."""
    call = pending_call_for(sender)
    if call is None:
        return Reply(None)
    return replace(act_on(call, sender, body), call=call)


def act_on(call: Call, sender: str, body: str) -> Reply:
    candidate = call.candidate
    text = normalized(body or "")
    # no consent to texts, or the number is on the do-not-call list: nothing is texted back
    refused = contact_refusal(candidate, contact_consent.SMS, sender)
    if WRONG_NUMBER.search(text):
        stopped = wrong_number(sender)  # calls and texts stop whatever the number refused before
        return Reply(None) if refused else stopped
    if refused:
        return Reply(None)  # and nothing more is acted on
    if len(body or "") > MAX_REPLY_TEXT or not text:
        return help_once(call)
    if text in CONFIRM_WORDS:
        return Reply(f"Thanks, we will call you on {when_text(call)}.")
    if text in NOW_WORDS:
        return move(call, utcnow(), right_away=True)
    if text in LATER_WORDS:
        return move(call, later_than(call), nearest=True)
    when = parse_time(text, candidate)
    if when is None:
        return help_once(call)
    return move(call, when)


def when_text(call: Call) -> str:
    return local_call_time(call.scheduled_for or utcnow(), candidate_timezone(call.candidate).name)


def later_than(call: Call) -> dt.datetime:
    return max(call.scheduled_for or utcnow(), utcnow()) + LATER


def parse_time(text: str, candidate: Candidate) -> dt.datetime | None:
    """The moment the text names, read in the candidate's zone (naive UTC), or None. A day without a
    time means the first allowed moment of that day."""
    zone = candidate_timezone(candidate)
    cleaned = FILLER.sub(" ", text)
    for part, clock in PARTS_OF_DAY.items():
        cleaned = re.sub(rf"\b(this )?{part}\b", clock, cleaned)
    cleaned = " ".join(cleaned.split())
    if not cleaned:
        return None
    local_now = utcnow().replace(tzinfo=dt.timezone.utc).astimezone(zone.zone)
    parsed = dateparser.parse(
        cleaned,
        languages=["en"],
        settings={
            "TIMEZONE": zone.name,
            "RETURN_AS_TIMEZONE_AWARE": True,
            "PREFER_DATES_FROM": "future",
            "RELATIVE_BASE": local_now.replace(tzinfo=None, microsecond=0),
        },
    )
    if parsed is None:
        return None
    if not HAS_TIME.search(text) and not HAS_TIME.search(cleaned):
        parsed = parsed.replace(hour=0, minute=0, second=0, microsecond=0)
    elif parsed < local_now - dt.timedelta(minutes=5) and parsed.date() == local_now.date():
        parsed += dt.timedelta(days=1)  # "5pm" after 5pm: tomorrow's
    return parsed.astimezone(dt.timezone.utc).replace(tzinfo=None)


def move(
    call: Call, when: dt.datetime, *, right_away: bool = False, nearest: bool = False
) -> Reply:
    """Book the call at `when` (or, for a day named without a time or "later", the first allowed
    moment from then)."""
    schedule = job_schedule_of(call)
    if nearest or when.time() == dt.time(0) and not right_away:
        when = next_allowed_at(call.candidate, schedule, max(when, utcnow())) or when
    try:
        with database.atomic():
            booked = book_callback(call, when, source=contact_consent.CANDIDATE_SMS)
            if right_away:
                dispatch.place_soon(booked.id)
    except CallTimeNotAllowed as refused:
        zone = candidate_timezone(call.candidate)
        if refused.next_allowed is None:
            return Reply("Sorry, we cannot call at that time. Reply with another day and time.")
        following = local_call_time(refused.next_allowed, zone.name)
        return Reply(
            f"Sorry, we cannot call then. The next time we can is {following}. Reply with a time, "
            f"or OK to keep {when_text(call)}."
        )
    except Exception as error:  # noqa: BLE001 - a refusal (consent, a call that started) is told, never a 500
        log.info("text reply for call %s not acted on: %s", call.id, error)
        return Reply("Sorry, we could not change your call. Please use the link in your reminder.")
    if right_away:
        return Reply("Calling you now.")
    return Reply(f"Done: we will call you on {when_text(booked)}.")


def wrong_number(sender: str) -> Reply:
    """Not the candidate's phone: calls and texts to every candidate with this number stop."""
    with database.atomic():
        for candidate in Candidate.select().where(Candidate.phone_no == sender):
            contact_consent.change_consent(
                candidate,
                {contact_consent.VOICE: False, contact_consent.SMS: False},
                contact_consent.CANDIDATE_SMS,
            )
    return Reply("Sorry about that. We will not call or text this number again.")


def help_once(call: Call) -> Reply:
    """One help text per call; any later text not understood gets nothing back."""
    now = utcnow()
    first = (
        Call.update(sms_help_sent_at=now)
        .where((Call.id == call.id) & Call.sms_help_sent_at.is_null())
        .execute()
    )
    if not first:
        return Reply(None)
    return Reply(
        f"Your call is on {when_text(call)}. Reply with a time to move it "
        '(e.g. "tomorrow 10am"), NOW to be called now, or STOP to opt out.'
    )
