"""Two-way SMS: replies to a reminder move, confirm or stop the pending call in the candidate's zone
and get a short answer; what is not understood gets one help text per call; STOP still opts out; a
number with no pending call gets nothing back; unsigned messages are refused.

What a text asks is done at once, but its answer never goes in the candidate's quiet hours: it
waits for their calling hours."""

from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo

import pytest

from app.data.db import database
from tests.call_factories import create_application, create_candidate, create_job_with_questions
from tests.test_call_reminders import get_call
from tests.test_call_scheduling import calls_of, scheduled_job
from tests.test_calling_hours import zone_with_local_hour
from tests.test_contact_opt_out import AUTH_TOKEN, PUBLIC_BASE, incoming_message

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

CHICAGO = ZoneInfo("America/Chicago")
NUMBER = "+13125550100"


@pytest.fixture
def sms_app(make_app):
    return make_app(TWILIO_AUTH_TOKEN=AUTH_TOKEN, TWILIO_CALLBACK_BASE_URL=PUBLIC_BASE)


def pending_call(client, tenant, phone_no=NUMBER) -> dict:
    """A queued scheduled call to a Chicago candidate about a job with the default window
    (09:00-17:00, Mon-Fri)."""
    job = create_job_with_questions(client, tenant)
    client.patch(
        f"/v1/jobs/{job['id']}/scheduling", json={"scheduling": True}, headers=tenant.headers
    )
    candidate = create_candidate(client, tenant, phone_no=phone_no)
    (call,) = calls_of(client, tenant, create_application(client, tenant, job, candidate))
    assert call["status"] == "queued"
    return call


def said(response) -> str | None:
    """The text the TwiML answer sends back, or None."""
    found = re.search(r"<Message>(.*)</Message>", response.get_data(as_text=True), re.S)
    return found.group(1) if found else None


def local(instant: str) -> dt.datetime:
    return dt.datetime.fromisoformat(instant.replace("Z", "+00:00")).astimezone(CHICAGO)


def next_weekday() -> dt.date:
    day = dt.datetime.now(CHICAGO).date() + dt.timedelta(days=1)
    while day.isoweekday() > 5:
        day += dt.timedelta(days=1)
    return day


def test_a_time_in_words_moves_the_call_in_the_candidates_zone(sms_app, tenant_a):
    client = sms_app.test_client()
    call = pending_call(client, tenant_a)
    day = next_weekday()
    answer = incoming_message(client, f"Call me on {day:%B} {day.day} at 2:30pm please", NUMBER)
    assert answer.status_code == 200 and said(answer).startswith("Done: we will call you on")
    moved = get_call(client, tenant_a, call["id"])
    assert local(moved["scheduled_for"]) == dt.datetime.combine(
        day, dt.time(14, 30), tzinfo=CHICAGO
    )
    assert moved["booked_by"] == "candidate_sms" and moved["status"] == "queued"
    assert (
        "2:30" not in said(answer) and "14:30" in said(answer) and "America/Chicago" in said(answer)
    )


def test_a_day_part_and_later_pick_allowed_moments(sms_app, tenant_a):
    client = sms_app.test_client()
    call = pending_call(client, tenant_a)
    day = next_weekday()
    answer = incoming_message(client, f"{day:%A} morning", NUMBER)
    assert said(answer).startswith("Done")
    morning = local(get_call(client, tenant_a, call["id"])["scheduled_for"])
    assert morning.date() == day and morning.time() == dt.time(9, 0)
    later = incoming_message(client, "later", NUMBER)
    assert said(later).startswith("Done")
    after = local(get_call(client, tenant_a, call["id"])["scheduled_for"])
    assert after - morning >= dt.timedelta(hours=2) and 9 <= after.hour < 17


def test_a_time_outside_the_window_is_refused_naming_the_next_allowed(sms_app, tenant_a):
    client = sms_app.test_client()
    call = pending_call(client, tenant_a)
    day = next_weekday()
    answer = incoming_message(client, f"{day:%B} {day.day} at 11pm", NUMBER)
    assert said(answer).startswith("Sorry, we cannot call then. The next time we can is")
    assert get_call(client, tenant_a, call["id"])["scheduled_for"] == call["scheduled_for"]


def test_ok_confirms_and_wrong_number_stops_calls_and_texts(sms_app, tenant_a):
    client = sms_app.test_client()
    call = pending_call(client, tenant_a)
    assert said(incoming_message(client, "OK!", NUMBER)).startswith("Thanks, we will call you on")
    stopped = incoming_message(client, "Sorry, wrong number", NUMBER)
    assert "not call or text this number again" in said(stopped)
    candidate = client.get(f"/v1/candidates/{call['candidate_id']}", headers=tenant_a.headers).json
    assert (
        candidate["consent"]["voice"]["granted"] is False
        and candidate["consent"]["sms"]["source"] == "candidate_sms"
    )
    assert get_call(client, tenant_a, call["id"])["status"] == "canceled"
    assert (
        said(incoming_message(client, "hello?", NUMBER)) is None
    )  # no pending call now: nothing back


@pytest.mark.parametrize("refusal", ["do-not-call", "no consent to texts"])
def test_wrong_number_from_a_number_refusing_texts_stops_calls_but_gets_no_text(
    sms_app, tenant_a, refusal
):
    from plugins.calls.telephony import get_provider

    client = sms_app.test_client()
    call = pending_call(client, tenant_a)
    if refusal == "do-not-call":
        listed = client.post("/v1/do-not-call", json={"phone_no": NUMBER}, headers=tenant_a.headers)
        assert listed.status_code == 201
    else:
        revoked = client.put(
            f"/v1/candidates/{call['candidate_id']}/consent",
            json={"sms": False},
            headers=tenant_a.headers,
        )
        assert revoked.status_code == 200
    answer = incoming_message(client, "wrong number", NUMBER)
    assert answer.status_code == 200 and said(answer) is None
    with sms_app.app_context():
        assert list(get_provider().messages) == []
    candidate = client.get(f"/v1/candidates/{call['candidate_id']}", headers=tenant_a.headers).json
    # the action is still taken: no more calls
    assert candidate["consent"]["voice"]["granted"] is False
    assert get_call(client, tenant_a, call["id"])["status"] == "canceled"


def test_what_is_not_understood_gets_one_help_text_only(sms_app, tenant_a):
    client = sms_app.test_client()
    pending_call(client, tenant_a)
    first = said(incoming_message(client, "banana", NUMBER))
    assert first.startswith("Your call is on") and "STOP" in first
    for text in ("banana", "what?", "x" * 300):
        assert said(incoming_message(client, text, NUMBER)) is None


def test_stop_still_opts_out_and_a_number_without_a_pending_call_gets_nothing(sms_app, tenant_a):
    client = sms_app.test_client()
    stranger = incoming_message(client, "tomorrow 10am", "+13125550199")
    assert stranger.status_code == 200 and said(stranger) is None
    create_candidate(client, tenant_a, phone_no="+13125550198")  # a candidate, but no call pending
    assert said(incoming_message(client, "tomorrow 10am", "+13125550198")) is None
    call = pending_call(client, tenant_a)
    stop = incoming_message(client, "STOP", NUMBER)
    assert said(stop) is None and get_call(client, tenant_a, call["id"])["status"] == "canceled"


def test_an_unsigned_reply_is_403_and_moves_nothing(sms_app, tenant_a):
    client = sms_app.test_client()
    call = pending_call(client, tenant_a)
    refused = incoming_message(client, "tomorrow 10am", NUMBER, sign=False)
    assert refused.status_code == 403
    assert get_call(client, tenant_a, call["id"])["scheduled_for"] == call["scheduled_for"]


# ---- the candidate's hours: answers never go in their quiet hours --------------------------------


@pytest.fixture
def night_app(make_app):
    """Texts answered as sms_app's are, under calling hours of 08:00-21:00 in the candidate's
    zone."""
    return make_app(
        TWILIO_AUTH_TOKEN=AUTH_TOKEN,
        TWILIO_CALLBACK_BASE_URL=PUBLIC_BASE,
        CALLING_HOURS="08:00-21:00",
    )


def call_in_zone(client, tenant, zone: str, **setting) -> dict:
    """The queued call to NUMBER of a candidate living in `zone`, on a job whose window is always
    open (the calling hours alone bind), scheduled by `setting`."""
    job = scheduled_job(client, tenant, **setting)
    candidate = create_candidate(client, tenant, phone_no=NUMBER)
    zoned = client.put(
        f"/v1/candidates/{candidate['id']}/timezone",
        json={"timezone": zone},
        headers=tenant.headers,
    )
    assert zoned.status_code == 200
    (call,) = calls_of(client, tenant, create_application(client, tenant, job, candidate))
    assert call["status"] == "queued"
    return call


def held_reply(client, tenant, call: dict) -> dict:
    (reply,) = [
        r for r in get_call(client, tenant, call["id"])["reminders"] if r["channel"] == "reply"
    ]
    return reply


def naive_utc(instant: str) -> dt.datetime:
    return dt.datetime.fromisoformat(instant.replace("Z", "+00:00")).replace(tzinfo=None)


def sweep_at(app, now: dt.datetime) -> int:
    """The reminders' sweep (`flask calls run-due`'s) run as if it were `now`: the texts it sent."""
    from plugins.calls.reminders import send_due_reminders

    with app.app_context(), database.connection_context():
        return send_due_reminders(now=now)


def sent_texts(app) -> list[dict]:
    from plugins.calls.telephony import get_provider

    with app.app_context():
        return list(get_provider().messages)


def test_a_reply_at_3am_moves_the_call_at_once_and_its_answer_waits_until_8am(night_app, tenant_a):
    client = night_app.test_client()
    zone = zone_with_local_hour(3)
    call = call_in_zone(client, tenant_a, zone)
    answer = incoming_message(client, "Call me tomorrow at 10am", NUMBER)
    assert answer.status_code == 200 and said(answer) is None  # nothing goes back at 03:00
    assert sent_texts(night_app) == []

    moved = get_call(client, tenant_a, call["id"])
    when = dt.datetime.fromisoformat(moved["scheduled_for"].replace("Z", "+00:00"))
    today = dt.datetime.now(ZoneInfo(zone)).date()
    assert when.astimezone(ZoneInfo(zone)) == dt.datetime.combine(
        today + dt.timedelta(days=1), dt.time(10), tzinfo=ZoneInfo(zone)
    )
    assert moved["booked_by"] == "candidate_sms"
    reply = held_reply(client, tenant_a, call)
    assert reply["status"] == "pending" and reply["text"].startswith("Done: we will call you on")
    opens = dt.datetime.fromisoformat(reply["due_at"].replace("Z", "+00:00")).astimezone(
        ZoneInfo(zone)
    )
    assert (opens.date(), opens.time()) == (today, dt.time(8))

    due = naive_utc(reply["due_at"])
    assert sweep_at(night_app, due - dt.timedelta(minutes=1)) == 0  # 07:59: still quiet
    assert sent_texts(night_app) == []
    assert sweep_at(night_app, due) == 1  # 08:00
    (text,) = sent_texts(night_app)
    assert text["to"] == NUMBER and text["body"] == reply["text"]
    assert held_reply(client, tenant_a, call)["status"] == "sent"


def test_a_held_answer_is_not_sent_once_the_number_texted_stop(night_app, tenant_a):
    client = night_app.test_client()
    call = call_in_zone(client, tenant_a, zone_with_local_hour(3), call_schedule_minutes=60 * 24)
    incoming_message(client, "ok", NUMBER)
    reply = held_reply(client, tenant_a, call)
    assert reply["status"] == "pending" and reply["text"].startswith("Thanks, we will call you on")
    assert said(incoming_message(client, "STOP", NUMBER)) is None
    sweep_at(night_app, naive_utc(reply["due_at"]))
    assert sent_texts(night_app) == []
    assert held_reply(client, tenant_a, call)["status"] == "canceled"  # with the call


def test_wrong_number_at_3am_stops_calls_at_once_and_is_never_answered(night_app, tenant_a):
    client = night_app.test_client()
    call = call_in_zone(client, tenant_a, zone_with_local_hour(3), call_schedule_minutes=60 * 24)
    assert said(incoming_message(client, "wrong number", NUMBER)) is None
    assert get_call(client, tenant_a, call["id"])["status"] == "canceled"
    reply = held_reply(client, tenant_a, call)
    assert reply["status"] == "canceled" and reply["sent_at"] is None  # with the call it was about
    assert sweep_at(night_app, naive_utc(reply["due_at"]) + dt.timedelta(hours=6)) == 0
    assert sent_texts(night_app) == []


def test_now_places_the_call_at_once_when_the_candidate_may_be_called(sms_app, tenant_a):
    client = sms_app.test_client()
    call = call_in_zone(client, tenant_a, "America/Chicago", call_schedule_minutes=600)
    answer = incoming_message(client, "now please", NUMBER)
    assert said(answer) == "Calling you now."
    called = get_call(client, tenant_a, call["id"])
    assert called["status"] == "completed" and called["booked_by"] == "candidate_sms"


def test_now_in_quiet_hours_calls_nobody_and_says_when_it_can(night_app, tenant_a):
    client = night_app.test_client()
    zone = zone_with_local_hour(3)
    call = call_in_zone(client, tenant_a, zone, call_schedule_minutes=60 * 24)
    assert said(incoming_message(client, "now", NUMBER)) is None
    kept = get_call(client, tenant_a, call["id"])
    assert kept["status"] == "queued" and kept["scheduled_for"] == call["scheduled_for"]
    reply = held_reply(client, tenant_a, call)
    assert reply["text"].startswith("Sorry, we cannot call then. The next time we can is")
    assert "08:00" in reply["text"] and zone in reply["text"]
