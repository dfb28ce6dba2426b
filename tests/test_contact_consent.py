"""Consent per channel with its source and time (on the record, in the export, as a
candidate.consent event and webhook), checked before calls, texts and emails; the tenant's
do-not-call list (API and CLI import); the daily cap of calls per number across jobs; cancel and
reschedule of queued calls (REST, MCP, Idempotency-Key)."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from tests.call_factories import (
    application_for,
    create_application,
    create_candidate,
    create_job_with_questions,
)
from tests.call_factories import instant_call
from tests.test_call_reminders import EMAIL_NOW, SMS_NOW, get_call, run_due, scheduled_call
from tests.test_call_scheduling import calls_of, scheduled_job
from tests.webhook_helpers import create_webhook

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT


def consent(client, tenant, candidate_id, **channels):
    return client.put(
        f"/v1/candidates/{candidate_id}/consent", json=channels, headers=tenant.headers
    )


# ---- consent
# --------------------------------------------------------------------------------------------------


def reschedule(client, tenant, call: dict, when: str):
    """POST /v1/calls/{id}/reschedule to `when` as `tenant`: the response."""
    return client.post(
        f"/v1/calls/{call['id']}/reschedule", json={"scheduled_for": when}, headers=tenant.headers
    )


def test_a_new_candidate_consents_on_every_channel_through_their_ats(client, tenant_a):
    candidate = create_candidate(client, tenant_a)
    assert set(candidate["consent"]) == {"voice", "sms", "email"}
    for entry in candidate["consent"].values():
        assert (
            entry["granted"] is True
            and entry["source"] == "ats"
            and entry["changed_at"].endswith("Z")
        )


def test_revoking_one_channel_shows_its_source_and_time_and_is_an_event_and_a_webhook(
    client, tenant_a, httpserver
):
    httpserver.expect_request("/hooks").respond_with_data("ok")
    create_webhook(
        client,
        tenant_a,
        httpserver.url_for("/hooks"),
        triggered_event="candidate.consent",
        fields=["candidate_id", "changes", "contact_opt_out"],
    )
    candidate = create_candidate(client, tenant_a)
    revoked = consent(client, tenant_a, candidate["id"], sms=False, source="candidate_page")
    assert revoked.status_code == 200
    assert revoked.json["consent"]["sms"]["granted"] is False
    assert revoked.json["consent"]["sms"]["source"] == "candidate_page"
    assert revoked.json["consent"]["voice"] == candidate["consent"]["voice"]  # untouched
    assert revoked.json["contact_opt_out"] is False
    assert (
        consent(client, tenant_a, candidate["id"], sms=False).status_code == 200
    )  # no change, no event
    feed = client.get(
        "/v1/events",
        query_string={"size": 100, "type": "candidate.consent"},
        headers=tenant_a.headers,
    ).json["data"]
    (event,) = feed
    assert event["payload"]["changes"] == [
        {
            "channel": "sms",
            "granted": False,
            "source": "candidate_page",
            "changed_at": revoked.json["consent"]["sms"]["changed_at"],
        }
    ]
    ((request, _),) = [(request, response) for request, response in httpserver.log]
    assert request.get_json() == {
        "candidate_id": candidate["id"],
        "changes": event["payload"]["changes"],
        "contact_opt_out": False,
    }
    export = client.get(f"/v1/candidates/{candidate['id']}/export", headers=tenant_a.headers).json
    assert export["consent"]["current"]["sms"]["granted"] is False
    assert export["consent"]["changes"] == event["payload"]["changes"]


def test_consent_bodies_are_checked_naming_the_field(client, tenant_a, tenant_b):
    candidate = create_candidate(client, tenant_a)
    for body, field in (
        ({}, "voice"),
        ({"voice": "maybe"}, "voice"),
        ({"sms": True, "source": "robot"}, "source"),
        ({"fax": False}, "fax"),
    ):
        response = consent(client, tenant_a, candidate["id"], **body)
        assert response.status_code == 422 and field in response.json["error"]["fields"], (
            body,
            response.json,
        )
    assert consent(client, tenant_b, candidate["id"], voice=False).status_code == 404


def test_opting_out_revokes_every_channel_and_opting_in_grants_them(client, tenant_a):
    candidate = create_candidate(client, tenant_a)
    out = client.post(f"/v1/candidates/{candidate['id']}/opt-out", headers=tenant_a.headers).json
    assert out["contact_opt_out"] is True
    assert {entry["granted"] for entry in out["consent"].values()} == {False}
    assert {entry["source"] for entry in out["consent"].values()} == {"api"}
    back = client.delete(f"/v1/candidates/{candidate['id']}/opt-out", headers=tenant_a.headers).json
    assert back["contact_opt_out"] is False and {
        e["granted"] for e in back["consent"].values()
    } == {True}
    revoked_all = consent(
        client, tenant_a, candidate["id"], voice=False, sms=False, email=False
    ).json
    assert (
        revoked_all["contact_opt_out"] is True
    )  # no channel left: opted out, as the flag's clients read it


def test_without_voice_consent_no_call_is_made_or_kept(client, tenant_a):
    job = scheduled_job(client, tenant_a)
    candidate = create_candidate(client, tenant_a)
    application = create_application(client, tenant_a, job, candidate)
    (queued,) = calls_of(client, tenant_a, application)
    assert queued["status"] == "queued"
    consent(client, tenant_a, candidate["id"], voice=False)
    (canceled,) = calls_of(client, tenant_a, application)
    assert canceled["status"] == "canceled" and "consent" in canceled["error"]
    refused = instant_call(client, tenant_a, application)
    assert refused.status_code == 409 and "consent" in refused.json["error"]["message"]


def test_without_sms_or_email_consent_those_reminders_are_skipped(make_app, tenant_a):
    app = make_app()
    client = app.test_client()
    _, candidate, call = scheduled_call(client, tenant_a, **SMS_NOW, **EMAIL_NOW)
    consent(client, tenant_a, candidate["id"], sms=False, email=False)
    run_due(app)
    reminders = {r["channel"]: r for r in get_call(client, tenant_a, call["id"])["reminders"]}
    assert reminders["sms"]["status"] == "skipped" and "text messages" in reminders["sms"]["error"]
    assert reminders["email"]["status"] == "skipped" and "emails" in reminders["email"]["error"]


def test_a_text_due_in_quiet_hours_waits_for_the_calling_hours(make_app, tenant_a):
    app = make_app(CALLING_HOURS="08:00-21:00")
    client = app.test_client()
    _, candidate, call = scheduled_call(
        client, tenant_a, phone_no="+14155550100", **{**SMS_NOW, "sms_notify_minutes": 3000}
    )  # due now, the call 10 h on or more
    now_hour = dt.datetime.now(dt.timezone.utc).hour
    quiet = "Etc/GMT" + (
        lambda offset: f"-{offset}" if offset > 0 else f"+{-offset}" if offset else ""
    )((3 - now_hour + 12) % 24 - 12)
    client.put(
        f"/v1/candidates/{candidate['id']}/timezone",
        json={"timezone": quiet},
        headers=tenant_a.headers,
    )
    run_due(app)
    (sms,) = [
        r for r in get_call(client, tenant_a, call["id"])["reminders"] if r["channel"] == "sms"
    ]
    assert sms["status"] == "pending" and sms["sent_at"] is None and "calling hours" in sms["error"]
    opens = dt.datetime.fromisoformat(sms["due_at"].replace("Z", "+00:00")).astimezone(
        ZoneInfo(quiet)
    )
    assert (opens.hour, opens.minute) == (8, 0)


# ---- the do-not-call list
# ---------------------------------------------------------------------------------------------


def test_do_not_call_numbers_are_added_listed_removed_and_checked(client, tenant_a, tenant_b):
    added = client.post(
        "/v1/do-not-call",
        json={"phone_no": "+1 415 555 0100", "note": "asked by phone"},
        headers=tenant_a.headers,
    )
    assert added.status_code == 201 and added.json["phone_no"] == "+14155550100"
    listed = client.get("/v1/do-not-call?page=1&size=10", headers=tenant_a.headers).json
    assert [entry["phone_no"] for entry in listed["data"]] == ["+14155550100"] and listed[
        "total"
    ] == 1
    assert client.get("/v1/do-not-call?page=1&size=10", headers=tenant_b.headers).json["total"] == 0
    application = application_for(client, tenant_a, phone_no="+14155550100")
    refused = instant_call(client, tenant_a, application)
    assert refused.status_code == 409 and "do-not-call" in refused.json["error"]["message"]
    other_tenant = application_for(client, tenant_b, phone_no="+14155550100")
    assert instant_call(client, tenant_b, other_tenant).status_code == 202
    assert (
        client.delete("/v1/do-not-call/%2B14155550100", headers=tenant_a.headers).status_code == 204
    )
    assert (
        client.delete("/v1/do-not-call/%2B14155550100", headers=tenant_a.headers).status_code == 404
    )
    assert instant_call(client, tenant_a, application).status_code == 202


def test_a_do_not_call_entry_that_is_not_e164_is_422_naming_the_field(client, tenant_a):
    for number in ("4155550100", "not a number", "+1 415", "", None):
        response = client.post(
            "/v1/do-not-call", json={"phone_no": number}, headers=tenant_a.headers
        )
        assert response.status_code == 422 and "phone_no" in response.json["error"]["fields"], (
            number
        )


def test_the_cli_imports_a_file_of_numbers_reporting_refused_lines(app, tenant_a, tmp_path):
    listing = tmp_path / "dnc.csv"
    listing.write_text(
        "phone_no,note\n+14155550100,x\n+33 6 12 34 56 78\nnonsense\n+14155550100\n\n"
    )
    result = app.test_cli_runner().invoke(
        args=["candidates", "do-not-call", "import", tenant_a.id, str(listing)]
    )
    assert result.exit_code == 0, result.output
    assert (
        "2 number(s) added, 1 already listed, 1 refused" in result.output
        and "line 4" in result.output
    )
    client = app.test_client()
    listed = client.get("/v1/do-not-call?page=1&size=10", headers=tenant_a.headers).json["data"]
    assert [entry["phone_no"] for entry in listed] == ["+14155550100", "+33612345678"]
    strict = app.test_cli_runner().invoke(
        args=["candidates", "do-not-call", "import", "--strict", tenant_a.id, str(listing)]
    )
    assert strict.exit_code == 1


# ---- the daily cap
# --------------------------------------------------------------------------------------------------


def test_the_daily_cap_counts_calls_to_one_number_across_jobs(client, tenant_a):
    assert (
        client.put(
            "/v1/tenant/contact-settings", json={"daily_call_limit": 1}, headers=tenant_a.headers
        ).status_code
        == 200
    )
    first = application_for(client, tenant_a, phone_no="+14155550100")
    assert instant_call(client, tenant_a, first).status_code == 202
    second = application_for(
        client, tenant_a, phone_no="+14155550100"
    )  # another job, the same number
    refused = instant_call(client, tenant_a, second)
    assert refused.status_code == 409 and "cap of 1 call" in refused.json["error"]["message"]
    following = refused.json["error"]["next_allowed"]
    zone = ZoneInfo(following["timezone"])
    tomorrow = dt.datetime.now(zone).date() + dt.timedelta(days=1)
    assert dt.datetime.fromisoformat(following["local"]).date() == tomorrow
    assert (
        instant_call(
            client, tenant_a, application_for(client, tenant_a, phone_no="+14155550101")
        ).status_code
        == 202
    )


CAPPED = "+14155550100"


def zone_at_noon() -> str:
    """A zone where it is now about noon: the local day holds every moment of these tests."""
    from tests.test_calling_hours import zone_with_local_hour

    return zone_with_local_hour(12)


def capped_call(client, tenant, **setting) -> dict:
    """The tenant's cap of one call a day to a number, that number called once today (an instant
    call, completed), and a call of another application to the same number, queued on a job with
    `setting`, for a candidate living where it is now about noon."""
    assert (
        client.put(
            "/v1/tenant/contact-settings", json={"daily_call_limit": 1}, headers=tenant.headers
        ).status_code
        == 200
    )
    placed = instant_call(client, tenant, application_for(client, tenant, phone_no=CAPPED))
    assert get_call(client, tenant, placed.json["id"])["status"] == "completed"
    job = scheduled_job(client, tenant, **setting)
    candidate = create_candidate(client, tenant, phone_no=CAPPED)
    zoned = client.put(
        f"/v1/candidates/{candidate['id']}/timezone",
        json={"timezone": zone_at_noon()},
        headers=tenant.headers,
    )
    assert zoned.status_code == 200
    (call,) = calls_of(client, tenant, create_application(client, tenant, job, candidate))
    assert call["status"] == "queued"
    return call


def local_date(instant: str, zone: str) -> dt.date:
    moment = dt.datetime.fromisoformat(instant.replace("Z", "+00:00"))
    return moment.astimezone(ZoneInfo(zone)).date()


def tomorrow_in(zone: str) -> dt.date:
    return dt.datetime.now(ZoneInfo(zone)).date() + dt.timedelta(days=1)


def test_the_daily_cap_moves_a_scheduled_attempt_due_today_to_the_next_local_day(app, tenant_a):
    client = app.test_client()
    call = capped_call(client, tenant_a)  # due now: any hour, any day
    assert run_due(app).startswith("1 scheduled call(s) run")
    waiting = get_call(client, tenant_a, call["id"])
    assert waiting["status"] == "queued" and waiting["started_at"] is None
    assert local_date(waiting["scheduled_for"], zone_at_noon()) == tomorrow_in(zone_at_noon())


def test_a_reschedule_past_the_daily_cap_is_422_naming_the_field_and_the_next_local_day(
    client, tenant_a
):
    call = capped_call(client, tenant_a, call_schedule_minutes=60 * 24 * 2)
    later_today = dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=2)
    refused = reschedule(client, tenant_a, call, later_today.isoformat())
    assert refused.status_code == 422 and "scheduled_for" in refused.json["error"]["fields"]
    assert "cap of 1 call" in refused.json["error"]["message"]
    following = refused.json["error"]["next_allowed"]
    assert local_date(following["utc"], zone_at_noon()) == tomorrow_in(zone_at_noon())
    assert get_call(client, tenant_a, call["id"])["scheduled_for"] == call["scheduled_for"]


def test_a_callback_asked_for_on_a_call_past_the_daily_cap_is_offered_the_next_local_day(
    app, tenant_a
):
    from app.data.db import database
    from plugins.calls.conversation.booking import book

    client = app.test_client()
    assert (
        client.put(
            "/v1/tenant/contact-settings", json={"daily_call_limit": 1}, headers=tenant_a.headers
        ).status_code
        == 200
    )
    candidate = create_candidate(client, tenant_a, phone_no=CAPPED)
    client.put(
        f"/v1/candidates/{candidate['id']}/timezone",
        json={"timezone": zone_at_noon()},
        headers=tenant_a.headers,
    )
    job = scheduled_job(client, tenant_a, scheduling=False)  # its window: any hour, any day
    application = create_application(client, tenant_a, job, candidate)
    on_the_phone = instant_call(client, tenant_a, application).json  # today's one call
    later_today = dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=2)
    with app.app_context(), database.connection_context():
        outcome = book(on_the_phone["id"], later_today)
    assert outcome.booked_for is None and "cap of 1 call" in outcome.reason
    assert outcome.next_allowed.astimezone(ZoneInfo(zone_at_noon())).date() == tomorrow_in(
        zone_at_noon()
    )
    assert [c["status"] for c in calls_of(client, tenant_a, application)] == ["completed"]


# ---- cancel and reschedule
# --------------------------------------------------------------------------------------------


def weekday_at(zone: str, hour: int, minute: int = 0) -> str:
    """The next Monday-Friday (a day ahead or more) at hour:minute in `zone`, ISO 8601 with its
    offset."""
    day = (dt.datetime.now(ZoneInfo(zone)) + dt.timedelta(days=1)).date()
    while day.isoweekday() > 5:
        day += dt.timedelta(days=1)
    return dt.datetime.combine(day, dt.time(hour, minute), tzinfo=ZoneInfo(zone)).isoformat()


def queued_call(client, tenant) -> dict:
    """A queued scheduled call of a candidate in Chicago, on a job with the default window
    (09:00-17:00, Mon-Fri)."""
    job = create_job_with_questions(client, tenant)
    assert (
        client.patch(
            f"/v1/jobs/{job['id']}/scheduling", json={"scheduling": True}, headers=tenant.headers
        ).status_code
        == 200
    )
    candidate = create_candidate(client, tenant, phone_no="+13125550100")
    (call,) = calls_of(client, tenant, create_application(client, tenant, job, candidate))
    assert call["status"] == "queued"
    return call


def test_reschedule_moves_a_queued_call_and_announces_it(client, tenant_a):
    call = queued_call(client, tenant_a)
    when = weekday_at("America/Chicago", 10, 30)
    moved = reschedule(client, tenant_a, call, when)
    assert moved.status_code == 200, moved.json
    assert moved.json["trigger"] == "callback" and moved.json["booked_by"] == "api"
    expected = dt.datetime.fromisoformat(when).astimezone(dt.timezone.utc)
    assert moved.json["scheduled_for"].startswith(expected.strftime("%Y-%m-%dT%H:%M:%S"))
    local = reschedule(client, tenant_a, call, when[:19])  # no offset: the candidate's own zone
    assert local.status_code == 200 and local.json["scheduled_for"] == moved.json["scheduled_for"]
    feed = client.get(
        "/v1/events", query_string={"size": 100, "type": "call_activity"}, headers=tenant_a.headers
    ).json["data"]
    assert any(event["payload"]["scheduled_for"] == moved.json["scheduled_for"] for event in feed)


def test_reschedule_outside_the_window_or_hours_is_422_naming_the_field_and_the_next_moment(
    client, tenant_a, tenant_b
):
    call = queued_call(client, tenant_a)
    for when in (
        weekday_at("America/Chicago", 18),
        weekday_at("America/Chicago", 6),
        "2020-01-01T10:00:00Z",
        "tomorrow",
    ):
        response = reschedule(client, tenant_a, call, when)
        assert (
            response.status_code == 422 and "scheduled_for" in response.json["error"]["fields"]
        ), (when, response.json)
    evening = reschedule(client, tenant_a, call, weekday_at("America/Chicago", 18)).json
    assert evening["error"]["next_allowed"]["local"][11:16] == "09:00"
    assert reschedule(client, tenant_b, call, weekday_at("America/Chicago", 10)).status_code == 404
    assert (
        client.get(f"/v1/calls/{call['id']}", headers=tenant_a.headers).json["scheduled_for"]
        == call["scheduled_for"]
    )


def test_cancel_ends_a_queued_call_and_a_finished_one_is_409(client, tenant_a, tenant_b):
    call = queued_call(client, tenant_a)
    assert (
        client.post(f"/v1/calls/{call['id']}/cancel", headers=tenant_b.headers).status_code == 404
    )
    keyed = {**tenant_a.headers, "Idempotency-Key": "cancel-1"}
    canceled = client.post(
        f"/v1/calls/{call['id']}/cancel", json={"reason": "filled the role"}, headers=keyed
    )
    assert canceled.status_code == 200 and canceled.json["status"] == "canceled"
    assert canceled.json["error"] == "filled the role"
    replay = client.post(
        f"/v1/calls/{call['id']}/cancel", json={"reason": "filled the role"}, headers=keyed
    )
    assert replay.status_code == 200 and replay.headers.get("Idempotent-Replayed") == "true"
    again = client.post(f"/v1/calls/{call['id']}/cancel", headers=tenant_a.headers)
    assert again.status_code == 409 and "already finished" in again.json["error"]["message"]
    moved = reschedule(client, tenant_a, call, weekday_at("America/Chicago", 10))
    assert moved.status_code == 409
    completed = instant_call(client, tenant_a, application_for(client, tenant_a)).json
    finished = client.post(f"/v1/calls/{completed['id']}/cancel", headers=tenant_a.headers)
    assert finished.status_code == 409 and "completed" in finished.json["error"]["message"]


def test_a_cancel_is_a_call_activity_event_with_its_status_and_reason(client, tenant_a):
    call = queued_call(client, tenant_a)
    canceled = client.post(
        f"/v1/calls/{call['id']}/cancel",
        json={"reason": "filled the role"},
        headers=tenant_a.headers,
    )
    assert canceled.status_code == 200
    feed = client.get(
        "/v1/events", query_string={"size": 100, "type": "call_activity"}, headers=tenant_a.headers
    ).json["data"]
    (event,) = [
        e for e in feed if e["payload"]["id"] == call["id"] and e["payload"]["status"] == "canceled"
    ]
    assert event["payload"]["error"] == "filled the role"
    assert event["payload"]["updated_at"] == canceled.json["updated_at"]


def test_a_reschedule_into_the_quiet_hours_alone_is_422_naming_the_field_and_when_they_end(
    client, tenant_a
):
    job = scheduled_job(
        client,
        tenant_a,
        window_start_time="06:00:00",
        window_end_time="23:00:00",
        call_schedule_minutes=60 * 24 * 3,
    )
    candidate = create_candidate(client, tenant_a, phone_no="+13125550100")  # Chicago
    (call,) = calls_of(client, tenant_a, create_application(client, tenant_a, job, candidate))
    hours = {"calling_hours_start": "08:00", "calling_hours_end": "21:00"}
    assert (
        client.put("/v1/tenant/contact-settings", json=hours, headers=tenant_a.headers).status_code
        == 200
    )
    seven = weekday_at("America/Chicago", 7)  # inside the job's window, before the calling hours
    refused = reschedule(client, tenant_a, call, seven)
    assert refused.status_code == 422 and "scheduled_for" in refused.json["error"]["fields"]
    assert "calling hours 08:00-21:00 America/Chicago" in refused.json["error"]["message"]
    following = refused.json["error"]["next_allowed"]
    assert following["local"] == seven.replace("T07:00:00", "T08:00:00")
    assert get_call(client, tenant_a, call["id"])["scheduled_for"] == call["scheduled_for"]
    moved = reschedule(client, tenant_a, call, following["local"])
    assert moved.status_code == 200


# ---- the same through MCP
# ---------------------------------------------------------------------------------------------


def test_mcp_tools_reschedule_cancel_and_queue_outside_the_hours(make_app, tenant_a, tenant_b):
    import jsonschema

    from tests.test_calling_hours import zone_with_local_hour
    from tests.test_mcp_jobs import listed_tools
    from tests.test_mcp_protocol import tool_result

    app = make_app(CALLING_HOURS="08:00-21:00")
    client = app.test_client()
    tools = listed_tools(client, tenant_a)
    for name in ("reschedule_call", "cancel_call"):
        jsonschema.Draft202012Validator.check_schema(tools[name]["inputSchema"])
        assert tools[name]["annotations"]["readOnlyHint"] is False
    assert "outside_calling_hours" in tools["start_instant_call"]["inputSchema"]["properties"]

    call = queued_call(client, tenant_a)
    when = weekday_at("America/Chicago", 11)
    moved = tool_result(
        client, tenant_a, "reschedule_call", {"call_id": call["id"], "scheduled_for": when}
    )
    assert moved["isError"] is False and moved["structuredContent"]["booked_by"] == "api"
    late = tool_result(
        client,
        tenant_a,
        "reschedule_call",
        {"call_id": call["id"], "scheduled_for": weekday_at("America/Chicago", 22)},
    )
    assert late["isError"] is True and "next allowed moment" in late["content"][0]["text"]
    assert tool_result(client, tenant_b, "cancel_call", {"call_id": call["id"]})["isError"] is True
    canceled = tool_result(
        client, tenant_a, "cancel_call", {"call_id": call["id"], "reason": "role filled"}
    )
    assert canceled["structuredContent"]["status"] == "canceled"
    assert (
        tool_result(client, tenant_a, "cancel_call", {"call_id": call["id"]})["isError"] is True
    )  # finished

    candidate = create_candidate(client, tenant_a)
    client.put(
        f"/v1/candidates/{candidate['id']}/timezone",
        json={"timezone": zone_with_local_hour(3)},
        headers=tenant_a.headers,
    )
    application = create_application(
        client, tenant_a, create_job_with_questions(client, tenant_a), candidate
    )
    refused = tool_result(
        client, tenant_a, "start_instant_call", {"application_id": application["id"]}
    )
    assert refused["isError"] is True and "next allowed moment" in refused["content"][0]["text"]
    queued = tool_result(
        client,
        tenant_a,
        "start_instant_call",
        {"application_id": application["id"], "outside_calling_hours": "queue"},
    )
    assert queued["isError"] is False and queued["structuredContent"]["scheduled_for"]


def test_a_reschedule_at_the_edges_of_time_is_422_not_500(client, tenant_a):
    call = queued_call(client, tenant_a)
    for when in ("9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+05:00", "2999-01-04T10:00:00Z"):
        response = reschedule(client, tenant_a, call, when)
        assert (
            response.status_code == 422 and "scheduled_for" in response.json["error"]["fields"]
        ), (when, response.json)


def test_no_text_reminder_reaches_a_number_on_the_do_not_call_list(make_app, tenant_a):
    app = make_app()
    client = app.test_client()
    _, candidate, call = scheduled_call(client, tenant_a, **SMS_NOW, **EMAIL_NOW)
    client.post(
        "/v1/do-not-call", json={"phone_no": candidate["phone_no"]}, headers=tenant_a.headers
    )
    run_due(app)
    reminders = {r["channel"]: r for r in get_call(client, tenant_a, call["id"])["reminders"]}
    assert reminders["sms"]["status"] == "skipped" and "do-not-call" in reminders["sms"]["error"]
    assert reminders["email"]["status"] == "sent"  # an email is not a call or a text


def test_a_scheduled_attempt_due_in_quiet_hours_moves_to_the_next_allowed_moment(
    make_app, tenant_a
):
    from tests.test_calling_hours import zone_with_local_hour

    app = make_app()
    client = app.test_client()
    job = scheduled_job(client, tenant_a)  # any hour, any day
    candidate = create_candidate(client, tenant_a)
    (call,) = calls_of(client, tenant_a, create_application(client, tenant_a, job, candidate))
    assert call["status"] == "queued"
    client.put(
        f"/v1/candidates/{candidate['id']}/timezone",
        json={"timezone": zone_with_local_hour(3)},
        headers=tenant_a.headers,
    )
    client.put(
        "/v1/tenant/contact-settings",
        json={"calling_hours_start": "08:00", "calling_hours_end": "21:00"},
        headers=tenant_a.headers,
    )
    run_due(app)
    (waiting,) = calls_of(client, tenant_a, {"id": call["application_id"]})
    assert waiting["status"] == "queued" and waiting["scheduled_for"] > call["scheduled_for"]
    local = dt.datetime.fromisoformat(waiting["scheduled_for"].replace("Z", "+00:00")).astimezone(
        ZoneInfo(zone_with_local_hour(3))
    )
    assert (local.hour, local.minute) == (8, 0)
