"""The candidate's own page for a scheduled call: a signed link (in the reminders) that expires and
works once, behind which the candidate moves the call to an offered time, asks to be called now,
cancels it, or stops calls or texts. Each use of a link replaces it with a new one (the page shown
next carries it); a forged, expired, used or finished call's link opens nothing."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
from dataclasses import dataclass

from flask import current_app

from app.data.db import database, utcnow
from app.security import tokens
from plugins.calls import dispatch
from plugins.calls.calling_hours import (
    candidate_timezone,
    is_allowed_at,
    local_call_time,
    next_allowed_at,
)
from plugins.calls.models import QUEUED, Call
from plugins.calls.page_links import TOKEN_KIND, link_ttl
from plugins.calls.rescheduling import book_callback, cancel, job_schedule_of
from plugins.candidates import consent as contact_consent

OFFER_DAYS = 7
OFFERS_PER_DAY = 4
SLOT = dt.timedelta(hours=1)
RESCHEDULE, CALL_NOW, CANCEL, STOP_CALLS, STOP_TEXTS = (
    "reschedule",
    "call_now",
    "cancel",
    "stop_calls",
    "stop_texts",
)
ACTIONS = (RESCHEDULE, CALL_NOW, CANCEL, STOP_CALLS, STOP_TEXTS)
DONE_MESSAGES = {
    RESCHEDULE: "Your call has been moved.",
    CALL_NOW: "We will call you in a moment.",
    CANCEL: "Your call has been canceled.",
    STOP_CALLS: "We will not call you again.",
    STOP_TEXTS: "We will not text you again.",
}


def call_behind(token: str) -> Call | None:
    """The queued call a genuine, unexpired, unused link opens; None for anything else."""
    try:
        payload = tokens.verify(TOKEN_KIND, token, max_age=link_ttl())
    except tokens.InvalidToken:
        return None
    if (
        not isinstance(payload, dict)
        or not isinstance(payload.get("c"), str)
        or not payload.get("n")
    ):
        return None
    try:
        call = Call.get_or_none(Call.id == payload["c"])
    except (ValueError, TypeError):
        return None
    if (
        call is None
        or call.page_nonce != payload["n"]
        or call.status != QUEUED
        or call.dialled_at is not None
    ):
        return None
    return call


def use_link(call: Call) -> bool:
    """Spend the link that opened the page (one action per link): a new nonce replaces the old one,
    so the old link opens nothing; answers whether this request won (two submits of one page: the
    second finds nothing)."""
    return bool(
        Call.update(page_nonce=secrets.token_urlsafe(12))
        .where((Call.id == call.id) & (Call.page_nonce == call.page_nonce))
        .execute()
    )


@dataclass(frozen=True)
class Offer:
    value: str  # naive UTC, ISO, as the form sends it back
    label: str  # in the candidate's zone


def offered_times(call: Call, now: dt.datetime | None = None) -> list[Offer]:
    """Times the call may move to over the next 7 days: on the hour, inside the job's window and
    days and the calling hours in the candidate's zone, at most OFFERS_PER_DAY a local day, the
    current time left out."""
    now = now or utcnow()
    candidate, schedule = call.candidate, job_schedule_of(call)
    zone = candidate_timezone(candidate)
    horizon = now + dt.timedelta(days=OFFER_DAYS)
    offers, per_day = [], {}
    moment = next_allowed_at(candidate, schedule, now + dt.timedelta(minutes=30))
    while moment is not None and moment <= horizon and len(offers) < OFFER_DAYS * OFFERS_PER_DAY:
        local = moment.replace(tzinfo=dt.timezone.utc).astimezone(zone.zone)
        if local.minute or local.second or local.microsecond:  # on the hour only
            rounded = local.replace(minute=0, second=0, microsecond=0) + SLOT
            moment = next_allowed_at(
                candidate, schedule, rounded.astimezone(dt.timezone.utc).replace(tzinfo=None)
            )
            continue
        day = local.date()
        if per_day.get(day, 0) < OFFERS_PER_DAY and moment != call.scheduled_for:
            per_day[day] = per_day.get(day, 0) + 1
            offers.append(
                Offer(
                    value=moment.isoformat(timespec="minutes"),
                    label=local_call_time(moment, zone.name),
                )
            )
        moment = next_allowed_at(candidate, schedule, moment + SLOT)
    return offers


def may_call_now(call: Call) -> bool:
    return is_allowed_at(call.candidate, job_schedule_of(call), utcnow().replace(microsecond=0))


def page_context(call: Call) -> dict:
    job, candidate = call.job, call.candidate
    return {
        "job_title": job.title,
        "company": job.client_name,
        "first_name": candidate.first_name,
        "call_time": local_call_time(
            call.scheduled_for or utcnow(), candidate_timezone(candidate).name
        ),
        "offers": offered_times(call),
        "may_call_now": may_call_now(call),
        "texts_allowed": contact_consent.has_consent(candidate, contact_consent.SMS),
    }


class PageActionRefused(Exception):
    """The action cannot be done (a time no longer offered): the page says so and offers again."""


def act(call: Call, action: str, slot: str | None) -> Call | None:
    """Do what the candidate chose; answers the call if it is still queued afterwards."""
    source = contact_consent.CANDIDATE_PAGE
    if action == RESCHEDULE:
        offered = {offer.value for offer in offered_times(call)}
        if not slot or slot not in offered:
            raise PageActionRefused("Please choose one of the times offered.")
        when = dt.datetime.fromisoformat(slot)
        with database.atomic():
            if not use_link(call):
                return None
            return book_callback(call, when, source=source)
    if action == CALL_NOW:
        if not may_call_now(call):
            raise PageActionRefused("We cannot call you right now; please choose a time.")
        with database.atomic():
            if not use_link(call):
                return None
            booked = book_callback(call, utcnow(), source=source)
            dispatch.place_soon(booked.id)
        return None
    with database.atomic():
        if not use_link(call):
            return None
        if action == CANCEL:
            cancel(call.tenant_id, call.id, reason="canceled by the candidate on their page")
            return None
        channel = contact_consent.VOICE if action == STOP_CALLS else contact_consent.SMS
        contact_consent.change_consent(call.candidate, {channel: False}, source)
    return Call.get_or_none((Call.id == call.id) & (Call.status == QUEUED))


def csrf_value(cookie: str) -> str:
    """The form's anti-forgery value for the browser's CSRF cookie: only this server can derive
    it."""
    key = current_app.config["SECRET_KEY"]
    return hmac.new(
        key.encode(), b"candidate-page-csrf|" + cookie.encode(), hashlib.sha256
    ).hexdigest()


def csrf_matches(cookie: str | None, sent: str | None) -> bool:
    return bool(cookie and sent) and hmac.compare_digest(csrf_value(cookie), sent)
