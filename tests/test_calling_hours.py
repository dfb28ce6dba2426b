"""Calls in the candidate's own hours: the zone (explicit, phone, location, tenant, server), the
job's window and the calling hours in that zone across daylight-saving changes in both hemispheres
and in a zone without them, instant calls refused or queued outside the hours, and callbacks booked
through book_callback."""

from __future__ import annotations

import datetime as dt

import pytest

from app.data.db import database, utcnow
from app.errors import ApiError
from tests.call_factories import (
    create_application,
    create_candidate,
    create_job_with_questions,
    instant_call,
)

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

EVERY_DAY = [1, 2, 3, 4, 5, 6, 7]
NINE_TO_FIVE = {
    "window_start_time": "09:00:00",
    "window_end_time": "17:00:00",
    "days_of_week": EVERY_DAY,
}


@pytest.fixture
def hours_app(make_app):
    """The server's default calling hours, 08:00-21:00 in the candidate's zone."""
    return make_app(CALLING_HOURS="08:00-21:00")


def set_zone(client, tenant, candidate_id, zone):
    return client.put(
        f"/v1/candidates/{candidate_id}/timezone", json={"timezone": zone}, headers=tenant.headers
    )


def zone_with_local_hour(hour: int) -> str:
    """A fixed-offset IANA zone (Etc/GMT-N is UTC+N) where it is now `hour` o'clock, give or take
    the minutes."""
    offset = (hour - utcnow().hour + 12) % 24 - 12
    return "Etc/GMT" + (f"-{offset}" if offset > 0 else f"+{-offset}" if offset < 0 else "")


def candidate_row(app, candidate_id):
    from plugins.candidates.models import Candidate

    with app.app_context(), database.connection_context():
        return Candidate.get_by_id(candidate_id)


def at(text: str) -> dt.datetime:
    """Naive UTC from an ISO text with an offset."""
    return dt.datetime.fromisoformat(text).astimezone(dt.timezone.utc).replace(tzinfo=None)


# ---- the zone
# --------------------------------------------------------------------------------------------------


def test_zone_comes_from_the_phone_number_then_the_location_then_the_tenant_then_the_server(
    make_app, make_tenant
):
    app = make_app(TIMEZONE="Europe/Paris")
    client, tenant = app.test_client(), make_tenant("zones")
    by_phone = create_candidate(client, tenant, phone_no="+14155550100")
    assert (by_phone["timezone"], by_phone["timezone_source"]) == ("America/Los_Angeles", "phone")
    # an Australian mobile spans several zones: the candidate's state picks one
    by_state = create_candidate(client, tenant, phone_no="+61412345678", state_name="Victoria")
    assert (by_state["timezone"], by_state["timezone_source"]) == (
        "Australia/Melbourne",
        "location",
    )
    toll_free = create_candidate(client, tenant, phone_no="+18005550100", state_name="TX")
    assert (toll_free["timezone"], toll_free["timezone_source"]) == ("America/Chicago", "location")
    unplaced = create_candidate(client, tenant, phone_no="+18005550101")
    assert (unplaced["timezone"], unplaced["timezone_source"]) == ("Europe/Paris", "server")
    settings = client.put(
        "/v1/tenant/contact-settings", json={"timezone": "America/Denver"}, headers=tenant.headers
    )
    assert settings.status_code == 200 and settings.json["timezone"] == "America/Denver"
    shown = client.get(f"/v1/candidates/{unplaced['id']}", headers=tenant.headers).json
    assert (shown["timezone"], shown["timezone_source"]) == ("America/Denver", "tenant")
    moved = client.patch(
        f"/v1/candidates/{by_phone['id']}",
        headers=tenant.headers,
        json={
            "first_name": "Jane",
            "email": by_phone["email"],
            "phone_no": "+33612345678",
            "source": "referral",
            "source_id": by_phone["source_id"],
        },
    )
    assert moved.status_code == 200 and (moved.json["timezone"], moved.json["timezone_source"]) == (
        "Europe/Paris",
        "phone",
    )


@pytest.mark.parametrize(
    "city, state_name, country, expected",
    [
        ("Vancouver", None, "CA", "America/Vancouver"),  # the city, in the country named
        ("Vancouver", None, "US", "America/Los_Angeles"),  # Vancouver, Washington
        ("Calgary", None, "Canada", "America/Edmonton"),  # a city no zone is named after
        (None, None, "Jamaica", "America/Jamaica"),  # a country of one zone
        (None, None, "CA", "America/Toronto"),  # of several: the one most of its numbers are in
        (None, "Manitoba", "CA", "America/Winnipeg"),  # a province, in its own country's zone
    ],
)
def test_a_number_spanning_several_zones_is_narrowed_by_city_and_country(
    client, tenant_a, city, state_name, country, expected
):
    location = {"city": city, "state_name": state_name, "country": country}
    spanning = create_candidate(client, tenant_a, phone_no="+15005550100", **location)
    assert (spanning["timezone"], spanning["timezone_source"]) == (expected, "location")


def test_an_explicit_zone_wins_and_null_goes_back_to_the_inferred_one(client, tenant_a):
    candidate = create_candidate(client, tenant_a, phone_no="+14155550100")
    explicit = set_zone(client, tenant_a, candidate["id"], "Asia/Kolkata")
    assert explicit.status_code == 200
    assert (explicit.json["timezone"], explicit.json["timezone_source"]) == (
        "Asia/Kolkata",
        "explicit",
    )
    cleared = set_zone(client, tenant_a, candidate["id"], None)
    assert (cleared.json["timezone"], cleared.json["timezone_source"]) == (
        "America/Los_Angeles",
        "phone",
    )


@pytest.mark.parametrize("zone", ["Mars/Olympus", "america/new_york ", "", "../etc/passwd", 5])
def test_a_zone_that_is_not_an_iana_name_is_422_naming_the_field(client, tenant_a, zone):
    candidate = create_candidate(client, tenant_a)
    response = set_zone(client, tenant_a, candidate["id"], zone)
    assert response.status_code == 422 and "timezone" in response.json["error"]["fields"]
    if zone != "":  # a blank optional setting means none, as everywhere
        settings = client.put(
            "/v1/tenant/contact-settings", json={"timezone": zone}, headers=tenant_a.headers
        )
        assert settings.status_code == 422 and "timezone" in settings.json["error"]["fields"]


def test_contact_settings_refuse_bad_hours_naming_the_field(client, tenant_a):
    for body, field in (
        ({"calling_hours_start": "8am"}, "calling_hours_start"),
        ({"calling_hours_end": "25:00"}, "calling_hours_end"),
        ({"calling_hours_start": "22:00", "calling_hours_end": "21:00"}, "calling_hours_start"),
        ({"daily_call_limit": -1}, "daily_call_limit"),
    ):
        response = client.put("/v1/tenant/contact-settings", json=body, headers=tenant_a.headers)
        assert response.status_code == 422 and field in response.json["error"]["fields"], (
            body,
            response.json,
        )
    shown = client.get("/v1/tenant/contact-settings", headers=tenant_a.headers).json
    assert (shown["calling_hours_start"], shown["calling_hours_end"]) == (
        "00:00",
        "24:00",
    )  # the suite's default


# ---- windows and daylight saving
# ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "zone, after, expected",
    [
        # New York leaves daylight saving on Sunday 1 November 2026: 09:00 is 13:00Z on Saturday,
        # 14:00Z on Sunday
        ("America/New_York", "2026-10-31T17:30:00-04:00", "2026-11-01T09:00:00-05:00"),
        ("America/New_York", "2026-10-31T08:30:00-04:00", "2026-10-31T09:00:00-04:00"),
        # Sydney enters daylight saving on Sunday 4 October 2026: 09:00 is 23:00Z on Saturday,
        # 22:00Z on Sunday
        ("Australia/Sydney", "2026-10-03T17:30:00+10:00", "2026-10-04T09:00:00+11:00"),
        # London enters summer time on Sunday 29 March 2026
        ("Europe/London", "2026-03-28T18:00:00+00:00", "2026-03-29T09:00:00+01:00"),
        # Kolkata keeps +05:30 all year
        ("Asia/Kolkata", "2026-11-01T17:30:00+05:30", "2026-11-02T09:00:00+05:30"),
    ],
)
def test_the_window_is_read_in_the_candidates_zone_across_daylight_saving(
    hours_app, tenant_a, zone, after, expected
):
    from plugins.calls.calling_hours import is_allowed_at, next_allowed_at

    client = hours_app.test_client()
    candidate = create_candidate(client, tenant_a)
    assert set_zone(client, tenant_a, candidate["id"], zone).status_code == 200
    row = candidate_row(hours_app, candidate["id"])
    with hours_app.app_context(), database.connection_context():
        found = next_allowed_at(row, NINE_TO_FIVE, at(after))
        assert found == at(expected)
        assert is_allowed_at(row, NINE_TO_FIVE, found)
        assert not is_allowed_at(row, NINE_TO_FIVE, found - dt.timedelta(seconds=1))


def test_calling_hours_bind_whatever_the_window_says(hours_app, tenant_a):
    from plugins.calls.calling_hours import next_allowed_at

    client = hours_app.test_client()
    candidate = create_candidate(client, tenant_a)
    set_zone(client, tenant_a, candidate["id"], "America/Los_Angeles")
    row = candidate_row(hours_app, candidate["id"])
    always = {
        "window_start_time": "00:00:00",
        "window_end_time": "23:59:59",
        "days_of_week": EVERY_DAY,
    }
    with hours_app.app_context(), database.connection_context():
        assert next_allowed_at(row, always, at("2026-12-01T05:00:00-08:00")) == at(
            "2026-12-01T08:00:00-08:00"
        )
        assert next_allowed_at(row, always, at("2026-12-01T21:00:00-08:00")) == at(
            "2026-12-02T08:00:00-08:00"
        )
        assert next_allowed_at(row, None, at("2026-12-01T20:59:00-08:00")) == at(
            "2026-12-01T20:59:00-08:00"
        )
        weekend_only = {**NINE_TO_FIVE, "days_of_week": [6, 7]}  # 1 December 2026 is a Tuesday
        assert next_allowed_at(row, weekend_only, at("2026-12-01T10:00:00-08:00")) == at(
            "2026-12-05T09:00:00-08:00"
        )
        assert (
            next_allowed_at(
                row, {**NINE_TO_FIVE, "days_of_week": []}, at("2026-12-01T10:00:00-08:00")
            )
            is None
        )


def test_a_series_across_the_change_keeps_local_hours(hours_app, tenant_a):
    """The scheduler's next attempt for a Sydney candidate on a 09:00-10:00 window, around Sydney's
    change."""
    from plugins.calls.scheduling import allowed_attempt_at

    client = hours_app.test_client()
    candidate = create_candidate(client, tenant_a)
    set_zone(client, tenant_a, candidate["id"], "Australia/Sydney")
    row = candidate_row(hours_app, candidate["id"])
    setting = {
        "window_start_time": "09:00:00",
        "window_end_time": "10:00:00",
        "days_of_week": EVERY_DAY,
        "daily_attempts": 1,
        "total_attempts": 3,
        "retry_interval": 0,
        "call_schedule_minutes": 0,
    }
    first = at("2026-10-03T09:30:00+10:00")
    with hours_app.app_context(), database.connection_context():
        second = allowed_attempt_at(row, setting, triggered_at=first, attempts=[first], now=first)
        third = allowed_attempt_at(
            row, setting, triggered_at=first, attempts=[first, second], now=second
        )
    assert second == at("2026-10-04T09:00:00+11:00") and third == at("2026-10-05T09:00:00+11:00")
    assert second - first == dt.timedelta(
        hours=22, minutes=30
    )  # a 23-hour day: local 09:00 came an hour sooner


def test_a_window_outside_the_calling_hours_ends_the_series_with_a_reason(hours_app, tenant_a):
    client = hours_app.test_client()
    job = create_job_with_questions(client, tenant_a)
    setting = {
        "window_start_time": "05:00:00",
        "window_end_time": "07:00:00",
        "days_of_week": EVERY_DAY,
        "daily_attempts": 2,
        "total_attempts": 2,
    }
    assert (
        client.put(
            f"/v1/jobs/{job['id']}/schedule-setting", json=setting, headers=tenant_a.headers
        ).status_code
        == 200
    )
    assert (
        client.patch(
            f"/v1/jobs/{job['id']}/scheduling", json={"scheduling": True}, headers=tenant_a.headers
        ).status_code
        == 200
    )
    application = create_application(client, tenant_a, job, create_candidate(client, tenant_a))
    calls = client.get(
        f"/v1/calls?page=1&size=10&application_id={application['id']}", headers=tenant_a.headers
    ).json
    (call,) = calls["data"]
    assert (
        call["status"] == "canceled"
        and "calling hours 08:00-21:00 America/Los_Angeles" in call["error"]
    )


# ---- instant calls in quiet hours
# ---------------------------------------------------------------------------------


def test_an_instant_call_in_quiet_hours_is_409_naming_the_next_moment_in_both_zones(
    hours_app, tenant_a
):
    client = hours_app.test_client()
    job = create_job_with_questions(client, tenant_a)
    candidate = create_candidate(client, tenant_a)
    zone = zone_with_local_hour(3)
    set_zone(client, tenant_a, candidate["id"], zone)
    application = create_application(client, tenant_a, job, candidate)
    refused = instant_call(client, tenant_a, application)
    assert refused.status_code == 409, refused.json
    following = refused.json["error"]["next_allowed"]
    assert following["timezone"] == zone and following["local"][11:16] == "08:00"
    assert (
        following["utc"] in refused.json["error"]["message"]
        and following["local"] in refused.json["error"]["message"]
    )
    assert dt.datetime.fromisoformat(following["local"]) == dt.datetime.fromisoformat(
        following["utc"]
    )
    listed = client.get(
        f"/v1/calls?page=1&size=10&application_id={application['id']}", headers=tenant_a.headers
    )
    assert listed.json["total"] == 0  # nothing placed, nothing queued

    queued = client.post(
        f"/v1/applications/{application['id']}/instant-call?outside_calling_hours=queue",
        headers=tenant_a.headers,
    )
    assert queued.status_code == 202 and queued.json["status"] == "queued"
    assert queued.json["scheduled_for"][:19] == following["utc"][:19]
    bad = client.post(
        f"/v1/applications/{application['id']}/instant-call?outside_calling_hours=later",
        headers=tenant_a.headers,
    )
    assert bad.status_code == 422 and "outside_calling_hours" in bad.json["error"]["fields"]


def test_an_instant_call_inside_the_hours_goes_at_once(hours_app, tenant_a):
    client = hours_app.test_client()
    candidate = create_candidate(client, tenant_a)
    set_zone(client, tenant_a, candidate["id"], zone_with_local_hour(13))
    application = create_application(
        client, tenant_a, create_job_with_questions(client, tenant_a), candidate
    )
    response = instant_call(client, tenant_a, application)
    assert response.status_code == 202 and response.json["scheduled_for"] is None
    call = client.get(f"/v1/calls/{response.json['id']}", headers=tenant_a.headers).json
    assert call["status"] == "completed"


def test_the_queued_instant_call_waits_for_its_moment_then_goes(hours_app, tenant_a):
    from plugins.calls.scheduling import run_due_calls

    client = hours_app.test_client()
    candidate = create_candidate(client, tenant_a)
    set_zone(client, tenant_a, candidate["id"], zone_with_local_hour(3))
    application = create_application(
        client, tenant_a, create_job_with_questions(client, tenant_a), candidate
    )
    queued = client.post(
        f"/v1/applications/{application['id']}/instant-call?outside_calling_hours=queue",
        headers=tenant_a.headers,
    ).json
    with hours_app.app_context(), database.connection_context():
        assert run_due_calls() == 0
        assert (
            client.get(f"/v1/calls/{queued['id']}", headers=tenant_a.headers).json["status"]
            == "queued"
        )
        due = dt.datetime.fromisoformat(queued["scheduled_for"].replace("Z", "")) + dt.timedelta(
            seconds=1
        )
        from plugins.calls.models import Call

        Call.update(scheduled_for=utcnow() - dt.timedelta(seconds=1)).where(
            Call.id == queued["id"]
        ).execute()
        set_zone(
            client, tenant_a, candidate["id"], zone_with_local_hour(10)
        )  # the moment has come, in effect
        assert run_due_calls() == 1
    assert due > utcnow()
    assert (
        client.get(f"/v1/calls/{queued['id']}", headers=tenant_a.headers).json["status"]
        == "completed"
    )


# ---- callbacks
# --------------------------------------------------------------------------------------------------


def completed_call(client, tenant, zone="America/Chicago") -> dict:
    """A completed instant call (made where it is midday now) to a candidate then living in
    `zone`."""
    candidate = create_candidate(client, tenant)
    set_zone(client, tenant, candidate["id"], zone_with_local_hour(12))
    application = create_application(
        client, tenant, create_job_with_questions(client, tenant), candidate
    )
    call = instant_call(client, tenant, application).json
    assert (
        client.get(f"/v1/calls/{call['id']}", headers=tenant.headers).json["status"] == "completed"
    )
    set_zone(client, tenant, candidate["id"], zone)
    return call


def next_weekday_at(zone: str, hour: int) -> dt.datetime:
    """Naive UTC of the next Monday-Friday at `hour`:00 in `zone`, at least a day ahead."""
    from zoneinfo import ZoneInfo

    day = (dt.datetime.now(ZoneInfo(zone)) + dt.timedelta(days=1)).date()
    while day.isoweekday() > 5:
        day += dt.timedelta(days=1)
    return at(dt.datetime.combine(day, dt.time(hour), tzinfo=ZoneInfo(zone)).isoformat())


def test_book_callback_queues_a_callback_at_the_time_asked(hours_app, tenant_a):
    from plugins.calls.models import Call
    from plugins.calls.rescheduling import book_callback

    client = hours_app.test_client()
    call = completed_call(client, tenant_a)
    when = next_weekday_at("America/Chicago", 10)
    with hours_app.app_context(), database.connection_context():
        booked = book_callback(Call.get_by_id(call["id"]), when, source="candidate_call")
    shown = client.get(f"/v1/calls/{booked.id}", headers=tenant_a.headers).json
    assert (
        shown["status"] == "queued"
        and shown["trigger"] == "callback"
        and shown["booked_by"] == "candidate_call"
    )
    assert shown["scheduled_for"].startswith(when.isoformat(timespec="seconds"))
    assert shown["application_id"] == call["application_id"] and shown["attempt"] == 2
    # asking again moves the same queued callback rather than adding one
    later = when + dt.timedelta(hours=2)
    with hours_app.app_context(), database.connection_context():
        again = book_callback(Call.get_by_id(call["id"]), later, source="candidate_call")
    assert again.id == booked.id
    listed = client.get(
        f"/v1/calls?page=1&size=10&application_id={call['application_id']}",
        headers=tenant_a.headers,
    )
    assert [c["status"] for c in listed.json["data"]] == ["completed", "queued"]


def test_a_callback_inside_the_window_but_in_the_quiet_hours_is_offered_when_they_end(
    hours_app, tenant_a
):
    """A job whose window opens at 06:00: a callback asked for at 07:00 is refused by the calling
    hours alone (08:00-21:00), and the conversation is given 08:00 that day to offer instead."""
    from tests.test_call_scheduling import scheduled_job
    from plugins.calls.conversation.booking import book

    client = hours_app.test_client()
    candidate = create_candidate(client, tenant_a)
    set_zone(client, tenant_a, candidate["id"], zone_with_local_hour(12))
    early = scheduled_job(
        client, tenant_a, scheduling=False, window_start_time="06:00:00", window_end_time="23:00:00"
    )
    application = create_application(client, tenant_a, early, candidate)
    call = instant_call(client, tenant_a, application).json
    set_zone(client, tenant_a, candidate["id"], "America/Chicago")
    seven = next_weekday_at("America/Chicago", 7)
    with hours_app.app_context(), database.connection_context():
        outcome = book(call["id"], seven.replace(tzinfo=dt.timezone.utc))
    assert outcome.booked_for is None and "calling hours 08:00-21:00" in outcome.reason
    assert outcome.next_allowed == (seven + dt.timedelta(hours=1)).replace(tzinfo=dt.timezone.utc)
    listed = client.get(
        f"/v1/calls?page=1&size=10&application_id={call['application_id']}",
        headers=tenant_a.headers,
    )
    assert [c["status"] for c in listed.json["data"]] == ["completed"]


def test_book_callback_refuses_a_time_outside_the_window_naming_the_next_allowed(
    hours_app, tenant_a
):
    from plugins.calls.calling_hours import CallTimeNotAllowed
    from plugins.calls.models import Call
    from plugins.calls.rescheduling import book_callback

    client = hours_app.test_client()
    call = completed_call(client, tenant_a)
    evening = next_weekday_at(
        "America/Chicago", 19
    )  # the job's default window is 09:00-17:00, Monday to Friday
    with hours_app.app_context(), database.connection_context():
        with pytest.raises(CallTimeNotAllowed) as refused:
            book_callback(Call.get_by_id(call["id"]), evening, source="candidate_call")
        past = utcnow() - dt.timedelta(hours=1)
        with pytest.raises(CallTimeNotAllowed):
            book_callback(Call.get_by_id(call["id"]), past, source="candidate_call")
    following = refused.value.next_allowed
    assert (
        following > evening and following.hour in (15, 14) and following.minute == 0
    )  # 09:00 Chicago
    assert "window" in refused.value.reason
    listed = client.get(
        f"/v1/calls?page=1&size=10&application_id={call['application_id']}",
        headers=tenant_a.headers,
    )
    assert listed.json["total"] == 1


def test_book_callback_refuses_without_consent_to_calls(hours_app, tenant_a):
    from plugins.calls.models import Call
    from plugins.calls.rescheduling import book_callback

    client = hours_app.test_client()
    call = completed_call(client, tenant_a)
    revoked = client.put(
        f"/v1/candidates/{call['candidate_id']}/consent",
        json={"voice": False},
        headers=tenant_a.headers,
    )
    assert revoked.status_code == 200 and revoked.json["consent"]["voice"]["granted"] is False
    with hours_app.app_context(), database.connection_context():
        with pytest.raises(ApiError) as refused:
            book_callback(
                Call.get_by_id(call["id"]),
                next_weekday_at("America/Chicago", 10),
                source="candidate_call",
            )
    assert refused.value.status == 409 and "consent" in refused.value.message
