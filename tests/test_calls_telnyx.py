"""The Telnyx provider end to end: calls placed through a local stand-in for Telnyx's TeXML REST API
and answered by the ConversationRelay markup Twilio's calls get, Telnyx's Ed25519-signed callbacks
moving the call, its relay socket (authenticated by the call's token in the URL) holding the real
dialogue over a real WebSocket, machine detection, recordings, SMS reminders, and texts to the
number read from Telnyx's signed messaging webhook and answered through its Messaging API."""

from __future__ import annotations

import datetime as dt
import json
import time
import xml.etree.ElementTree as ElementTree
from zoneinfo import ZoneInfo
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from websockets.exceptions import InvalidStatus

from app.security import tokens
from plugins.calls.telephony.telnyx import RELAY_TOKEN_KIND, RELAY_TOKEN_SECONDS
from tests.call_factories import application_for, instant_call
from tests.relay_stand_in import (
    SCREENING_ANSWERS,
    RelayInThread,
    TwilioSocket,
    deployed_relay,
    hold_screening,
    signed_headers as twilio_signed_headers,
)
from tests.telnyx_stand_in import (
    API_KEY,
    AUDIO,
    CALL_SID,
    CALLS_PATH,
    CONNECTION_ID,
    FROM_NUMBER,
    PUBLIC_BASE,
    RECORDING_PATH,
    RECORDING_SID,
    message_event,
    post_callback,
    post_message,
    serve_telnyx,
    signed_headers,
    status_form,
    telnyx_settings,
)
from tests.test_call_reminders import SMS_NOW, reminder_of, run_due, scheduled_call
from tests.test_calling_hours import zone_with_local_hour
from tests.test_calls_relay import read_call, relay_rows, wait_for
from tests.test_sms_replies import NUMBER, call_in_zone, held_reply, naive_utc, sweep_at

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

CALLBACK_PATH = "/v1/calls/callbacks/telnyx"


@pytest.fixture
def telnyx_api(httpserver):
    return serve_telnyx(httpserver)


@pytest.fixture
def telnyx_app(make_app, telnyx_api):
    return make_app(
        **telnyx_settings(telnyx_api, RELAY_SILENCE_SECONDS=30.0, RELAY_SWEEP_INTERVAL=0.2)
    )


@pytest.fixture
def relay(telnyx_app):
    with RelayInThread(telnyx_app) as running:
        yield running


def placed_call(client, tenant, *, phone_no="+14155550100") -> dict:
    return instant_call(client, tenant, application_for(client, tenant, phone_no=phone_no)).json


def answered_call(client, tenant, **options) -> dict:
    """A placed call that Telnyx reports initiated, ringing, then answered (signed callbacks)."""
    call = placed_call(client, tenant, **options)
    for sequence, status in enumerate(("initiated", "ringing", "in-progress")):
        response = post_callback(
            client, f"{CALLBACK_PATH}?call_id={call['id']}", status_form(status, call, sequence)
        )
        assert response.status_code == 200, response.json
    return call


def relay_element(placed_request) -> ElementTree.Element:
    return ElementTree.fromstring(placed_request.get_json()["Texml"]).find(
        "./Connect/ConversationRelay"
    )


def relay_query(telnyx_api, n: int = -1) -> str:
    """The query of the relay URL the n-th placed call's TeXML gave Telnyx (its token)."""
    return urlsplit(relay_element(telnyx_api.placed[n]).attrib["url"]).query


def open_socket(relay, call_id: str, query: str) -> TwilioSocket:
    return TwilioSocket(relay.port, call_id, provider="telnyx", query=query)


# -- placing the call ----------------------------------------------------------------------------


def test_the_call_is_placed_through_texml_and_answered_by_conversation_relay(
    telnyx_app, telnyx_api, tenant_a
):
    client = telnyx_app.test_client()
    call = placed_call(client, tenant_a, phone_no="+14155550142")
    (request,) = telnyx_api.placed
    assert request.headers["Authorization"] == f"Bearer {API_KEY}"
    body = request.get_json()
    assert body["ApplicationSid"] == CONNECTION_ID and body["From"] == FROM_NUMBER
    assert body["To"] == "+14155550142"
    assert body["StatusCallback"] == f"{PUBLIC_BASE}{CALLBACK_PATH}?call_id={call['id']}"
    assert body["StatusCallbackEvent"] == "initiated ringing answered completed"
    assert body["MachineDetection"] == "Enable" and body["AsyncAmd"] is True
    assert (
        body["AsyncAmdStatusCallback"]
        == f"{PUBLIC_BASE}{CALLBACK_PATH}?call_id={call['id']}&event=amd&voicemail=0"
    )
    assert "Record" not in body  # recording is off until the tenant turns it on
    element = relay_element(request)
    url = urlsplit(element.attrib["url"])
    assert (url.scheme, url.netloc, url.path) == (
        "wss",
        "hirekit.example.com",
        f"/v1/calls/relay/telnyx/{call['id']}",
    )
    assert list(parse_qs(url.query)) == ["token"]
    assert element.attrib["language"] == "en-US" and element.attrib["interruptible"] == "any"
    assert element.attrib["dtmfDetection"] == "true"
    assert "hints" not in element.attrib  # TeXML's ConversationRelay takes no recognition hints
    assert read_call(client, tenant_a, call["id"])["status"] == "queued"


def test_a_tenant_that_records_has_both_channels_recorded(telnyx_app, telnyx_api, tenant_a):
    client = telnyx_app.test_client()
    client.put("/v1/call-settings", json={"recording": True}, headers=tenant_a.headers)
    call = placed_call(client, tenant_a)
    body = telnyx_api.placed[0].get_json()
    assert body["Record"] is True and body["RecordingChannels"] == "dual"
    assert (
        body["RecordingStatusCallback"]
        == f"{PUBLIC_BASE}{CALLBACK_PATH}?call_id={call['id']}&event=recording"
    )


def test_telnyx_refusing_the_call_fails_it_with_its_reason(make_app, httpserver, tenant_a):
    httpserver.expect_request(CALLS_PATH, method="POST").respond_with_json(
        {
            "errors": [
                {
                    "code": "10015",
                    "title": "Invalid phone number",
                    "detail": "The 'To' number is not a valid phone number.",
                }
            ]
        },
        status=422,
    )
    client = make_app(**telnyx_settings(httpserver)).test_client()
    call = placed_call(client, tenant_a)
    failed = read_call(client, tenant_a, call["id"])
    assert failed["status"] == "failed" and "not a valid phone number" in failed["error"]


# -- signed callbacks ----------------------------------------------------------------------------


def test_signed_status_callbacks_move_the_call_through_its_statuses(telnyx_app, tenant_a):
    client = telnyx_app.test_client()
    call = placed_call(client, tenant_a)
    seen = []
    for sequence, status in enumerate(("initiated", "ringing", "in-progress", "completed")):
        response = post_callback(
            client, f"{CALLBACK_PATH}?call_id={call['id']}", status_form(status, call, sequence)
        )
        assert response.status_code == 200 and response.mimetype == "text/xml"
        seen.append(read_call(client, tenant_a, call["id"])["status"])
    # `completed` is the line closing: with no relay socket ever connected, nothing was screened
    assert seen == ["queued", "ringing", "in_progress", "failed"]
    assert (
        read_call(client, tenant_a, call["id"])["error"]
        == "the call ended before its relay socket connected"
    )


@pytest.mark.parametrize(
    "reported, status, end_reason",
    [
        ("busy", "busy", "busy"),
        ("no-answer", "no_answer", "no_answer"),
        ("failed", "failed", "failed"),
        ("canceled", "canceled", None),
    ],
)
def test_a_call_that_ends_unanswered_ends_with_telnyxs_status(
    telnyx_app, tenant_a, reported, status, end_reason
):
    client = telnyx_app.test_client()
    call = placed_call(client, tenant_a)
    assert (
        post_callback(
            client, f"{CALLBACK_PATH}?call_id={call['id']}", status_form(reported, call, 1)
        ).status_code
        == 200
    )
    ended = read_call(client, tenant_a, call["id"])
    assert ended["status"] == status and ended["end_reason"] == end_reason
    if status in ("failed", "canceled"):
        assert ended["error"] == f"Telnyx reported {reported}"


@pytest.mark.parametrize(
    "forgery", ["missing", "other-key", "stale", "future", "other-body", "not-base64"]
)
def test_a_forged_missing_or_stale_signature_is_403_and_changes_nothing(
    telnyx_app, tenant_a, forgery
):
    client = telnyx_app.test_client()
    call = placed_call(client, tenant_a)
    form = status_form("completed", call, 1)
    body = urlencode(form).encode()
    headers = {
        "missing": {},
        "other-key": signed_headers(body, key=Ed25519PrivateKey.generate()),
        "stale": signed_headers(body, timestamp=int(time.time()) - 600),
        "future": signed_headers(body, timestamp=int(time.time()) + 600),
        "other-body": signed_headers(urlencode(status_form("ringing", call, 1)).encode()),
        "not-base64": {**signed_headers(body), "telnyx-signature-ed25519": "not a signature!"},
    }[forgery]
    response = post_callback(client, f"{CALLBACK_PATH}?call_id={call['id']}", form, headers=headers)
    assert response.status_code == 403 and response.json["error"]["type"] == "permission_error"
    assert read_call(client, tenant_a, call["id"])["status"] == "queued"


def test_callbacks_are_404_for_an_unknown_call_and_while_telnyx_is_not_configured(
    make_app, telnyx_app, telnyx_api, tenant_a
):
    client = telnyx_app.test_client()
    call = placed_call(client, tenant_a)
    for call_id in ("6f1c1c1e-0000-4000-8000-000000000000", "not-a-call"):
        response = post_callback(
            client, f"{CALLBACK_PATH}?call_id={call_id}", status_form("ringing", call, 1)
        )
        assert response.status_code == 404
    unconfigured = make_app(**telnyx_settings(telnyx_api, TELNYX_PUBLIC_KEY="")).test_client()
    response = post_callback(
        unconfigured, f"{CALLBACK_PATH}?call_id={call['id']}", status_form("ringing", call, 1)
    )
    assert response.status_code == 404 and "TELNYX_PUBLIC_KEY" in response.json["error"]["message"]


def test_a_form_larger_than_telnyx_sends_is_413_before_its_signature_is_checked(
    telnyx_app, tenant_a
):
    client = telnyx_app.test_client()
    call = placed_call(client, tenant_a)
    oversized = {**status_form("completed", call, 1), "Padding": "x" * 40_000}
    response = post_callback(client, f"{CALLBACK_PATH}?call_id={call['id']}", oversized)
    assert response.status_code == 413
    assert read_call(client, tenant_a, call["id"])["status"] == "queued"


def test_the_call_id_is_kept_from_the_first_callback_when_placing_answered_none(
    make_app, httpserver, tenant_a
):
    telnyx_api = serve_telnyx(httpserver, call_sid=None)
    client = make_app(**telnyx_settings(telnyx_api)).test_client()
    call = answered_call(client, tenant_a)
    amd(client, call, "machine_start", voicemail=False)
    assert telnyx_api.updates == [{"Status": "completed"}]  # hung up on the call Telnyx named


# -- the conversation over the relay socket ------------------------------------------------------


def test_a_screening_over_the_telnyx_relay_completes_the_call_with_its_answers(
    telnyx_app, telnyx_api, relay, tenant_a
):
    client = telnyx_app.test_client()
    call = answered_call(client, tenant_a)
    socket = open_socket(relay, call["id"], relay_query(telnyx_api))
    hold_screening(socket, CALL_SID)
    done = wait_for(
        lambda: (
            (record := read_call(client, tenant_a, call["id"]))["status"] == "completed" and record
        )
    )
    assert done["end_reason"] == "completed"
    assert [answer["value"] for answer in done["answers"]][:2] == [6, True]
    said = [turn["text"] for turn in done["transcript"] if turn["speaker"] == "candidate"]
    assert said[2:5] == list(SCREENING_ANSWERS)
    assert relay_rows(telnyx_app, call["id"]) == 1


def test_an_answered_telnyx_call_whose_socket_never_comes_fails_and_is_hung_up_at_telnyx(
    make_app, telnyx_api, tenant_a
):
    app = make_app(
        **telnyx_settings(telnyx_api, RELAY_CONNECT_TIMEOUT=0.5, RELAY_SWEEP_INTERVAL=0.2)
    )
    client = app.test_client()
    with RelayInThread(app):
        call = answered_call(client, tenant_a)
        wait_for(lambda: telnyx_api.updates)
    failed = read_call(client, tenant_a, call["id"])
    assert (failed["status"], telnyx_api.updates) == ("failed", [{"Status": "completed"}])
    assert "never connected" in failed["error"]


@pytest.mark.slow
def test_the_deployed_relay_process_holds_a_telnyx_screening_and_refuses_a_tokenless_socket(
    make_app, telnyx_api, db_url, tmp_path, tenant_a
):
    with deployed_relay(make_app, telnyx_settings(telnyx_api), db_url, tmp_path) as (app, relay):
        client = app.test_client()
        call = answered_call(client, tenant_a)
        with pytest.raises(InvalidStatus) as refused:
            open_socket(relay, call["id"], "")
        assert refused.value.response.status_code == 403
        hold_screening(open_socket(relay, call["id"], relay_query(telnyx_api)), CALL_SID)
        done = wait_for(
            lambda: (
                (record := read_call(client, tenant_a, call["id"]))["status"] == "completed"
                and record
            )
        )
    assert done["end_reason"] == "completed" and done["answers"][0]["value"] == 6


def expired_token(call_id: str, monkeypatch) -> str:
    """A token for the call signed longer ago than a relay URL's token verifies."""
    signed_at = time.time() - RELAY_TOKEN_SECONDS - 60
    with monkeypatch.context() as patched:
        patched.setattr(time, "time", lambda: signed_at)
        return tokens.sign(RELAY_TOKEN_KIND, call_id)


@pytest.mark.parametrize(
    "presented", ["none", "forged", "other-call", "expired", "twilio-signed", "twice"]
)
def test_a_socket_without_the_calls_valid_token_is_refused_and_records_nothing(
    telnyx_app, telnyx_api, relay, tenant_a, presented, monkeypatch
):
    client = telnyx_app.test_client()
    call = answered_call(client, tenant_a)
    genuine = relay_query(telnyx_api)
    headers = {}
    with telnyx_app.app_context():
        query = {
            "none": "",
            "forged": "token=" + genuine.split("=", 1)[1][:-4] + "AAAA",
            "other-call": "token="
            + tokens.sign(RELAY_TOKEN_KIND, "6f1c1c1e-0000-4000-8000-000000000000"),
            "expired": "token=" + expired_token(call["id"], monkeypatch),
            "twilio-signed": "",
            "twice": f"{genuine}&{genuine}",
        }[presented]
    if presented == "twilio-signed":
        headers = twilio_signed_headers(PUBLIC_BASE, "telnyx", call["id"], "f" * 32)
    with pytest.raises(InvalidStatus) as refused:
        TwilioSocket(relay.port, call["id"], provider="telnyx", query=query, headers=headers)
    assert refused.value.response.status_code == 403
    assert relay_rows(telnyx_app, call["id"]) == 0
    assert read_call(client, tenant_a, call["id"])["transcript"] == []


def test_an_unknown_call_a_second_socket_and_a_finished_call_are_refused(
    telnyx_app, telnyx_api, relay, tenant_a
):
    client = telnyx_app.test_client()
    unknown = "6f1c1c1e-0000-4000-8000-000000000000"
    with telnyx_app.app_context():
        unknown_query = "token=" + tokens.sign(RELAY_TOKEN_KIND, unknown)
    with pytest.raises(InvalidStatus) as missing:
        open_socket(relay, unknown, unknown_query)
    assert missing.value.response.status_code == 404
    call = answered_call(client, tenant_a)
    query = relay_query(telnyx_api)
    first = open_socket(relay, call["id"], query)
    first.setup(CALL_SID)
    assert "Am I speaking with Jane?" in first.agent_turn()
    with pytest.raises(InvalidStatus) as second:
        open_socket(relay, call["id"], query)
    assert second.value.response.status_code == 409
    first.close()  # Jane hung up after the opening
    ended = wait_for(
        lambda: (
            (record := read_call(client, tenant_a, call["id"]))["status"] != "in_progress"
            and record
        )
    )
    assert ended["end_reason"] == "hung_up"
    with pytest.raises(InvalidStatus) as finished:
        open_socket(relay, call["id"], query)
    assert finished.value.response.status_code == 409


def test_a_setup_for_another_telnyx_call_closes_the_socket_with_nothing_recorded(
    telnyx_app, telnyx_api, relay, tenant_a
):
    client = telnyx_app.test_client()
    call = answered_call(client, tenant_a)
    socket = open_socket(relay, call["id"], relay_query(telnyx_api))
    socket.setup("v3:" + "x" * 54)
    assert socket.wait_closed() == 1008
    assert read_call(client, tenant_a, call["id"])["transcript"] == []


# -- answering machines --------------------------------------------------------------------------


def amd(client, call, answered_by, *, voicemail):
    form = {
        **status_form("in-progress", call, 9),
        "AnsweredBy": answered_by,
        "MachineDetectionDuration": "4100",
    }
    path = f"{CALLBACK_PATH}?call_id={call['id']}&event=amd&voicemail={int(voicemail)}"
    assert post_callback(client, path, form).status_code == 200


@pytest.mark.parametrize(
    "job_voicemail, verdicts",
    [
        (True, ("machine_start", "machine_end_beep")),  # the message waits for the greeting's beep
        (False, ("human", "machine_start")),  # a person is left alone; a machine is hung up on
    ],
)
def test_machine_detection_leaves_a_voicemail_after_the_beep_or_hangs_up(
    telnyx_app, telnyx_api, tenant_a, job_voicemail, verdicts
):
    client = telnyx_app.test_client()
    call = answered_call(client, tenant_a)
    amd(client, call, verdicts[0], voicemail=job_voicemail)
    assert telnyx_api.updates == []
    assert read_call(client, tenant_a, call["id"])["status"] == "in_progress"
    amd(client, call, verdicts[1], voicemail=job_voicemail)
    (update,) = telnyx_api.updates
    done = read_call(client, tenant_a, call["id"])
    assert done["status"] == "no_answer" and done["voicemail_left"] is job_voicemail
    if not job_voicemail:
        assert update == {"Status": "completed"}
        return
    texml = ElementTree.fromstring(update["Texml"])
    said = texml.find("./Say").text
    assert "Registered Nurse" in said and "Rita Recruiter" in said and "+14155550100" in said
    assert texml.find("./Hangup") is not None and done["transcript"][-1]["text"] == said


# -- recordings ----------------------------------------------------------------------------------


def test_a_recording_is_kept_by_reference_streamed_to_the_tenant_and_erased_at_telnyx(
    telnyx_app, telnyx_api, tenant_a, tenant_b
):
    client = telnyx_app.test_client()
    client.put("/v1/call-settings", json={"recording": True}, headers=tenant_a.headers)
    call = answered_call(client, tenant_a)
    form = {
        "AccountSid": telnyx_settings(telnyx_api)["TELNYX_ACCOUNT_SID"],
        "CallSid": CALL_SID,
        "RecordingSid": RECORDING_SID,
        "RecordingStatus": "completed",
        "RecordingChannels": "2",
        "RecordingDuration": "73",
        "RecordingSource": "OutboundAPI",
    }
    path = f"{CALLBACK_PATH}?call_id={call['id']}&event=recording"
    assert post_callback(client, path, {**form, "RecordingSid": "../../x"}).status_code == 422
    assert post_callback(client, path, form).status_code == 200
    record = read_call(client, tenant_a, call["id"])
    assert record["recording"]["channels"] == 2 and record["recording"]["duration_seconds"] == 73
    audio = client.get(f"/v1/calls/{call['id']}/recording", headers=tenant_a.headers)
    assert audio.status_code == 200 and audio.mimetype == "audio/mpeg" and audio.data == AUDIO
    assert telnyx_api.recording_reads == [f"Bearer {API_KEY}"]
    assert (
        client.get(f"/v1/calls/{call['id']}/recording", headers=tenant_b.headers).status_code == 404
    )
    erased = client.delete(f"/v1/candidates/{call['candidate_id']}", headers=tenant_a.headers)
    assert erased.status_code in (200, 204), erased.get_data(as_text=True)
    assert telnyx_api.recording_deletes == [RECORDING_PATH]


# -- text messages -------------------------------------------------------------------------------


def test_sms_reminders_go_through_telnyxs_messaging_api(make_app, telnyx_api, tenant_a):
    app = make_app(**telnyx_settings(telnyx_api))
    client = app.test_client()
    _, candidate, call = scheduled_call(client, tenant_a, phone_no="+12125550100", **SMS_NOW)
    assert run_due(app) == "0 scheduled call(s) run, 1 reminder(s) sent"
    (request,) = telnyx_api.messages
    assert request.headers["Authorization"] == f"Bearer {API_KEY}"
    body = request.get_json()
    assert set(body) == {"from", "to", "text"}
    assert body["from"] == FROM_NUMBER and body["to"] == candidate["phone_no"]
    assert "Reply STOP" in body["text"]
    assert reminder_of(client, tenant_a, call, "sms")["status"] == "sent"


def test_telnyx_refusing_an_opted_out_number_fails_the_reminder_and_opts_the_candidate_out(
    make_app, telnyx_api, tenant_a
):
    app = make_app(REMINDER_RETRY_SCHEDULE=[0, 0], **telnyx_settings(telnyx_api))
    client = app.test_client()
    _, candidate, call = scheduled_call(client, tenant_a, phone_no="+12125550199", **SMS_NOW)
    run_due(app)
    failed = reminder_of(client, tenant_a, call, "sms")
    assert failed["status"] == "failed" and failed["attempts"] == 1 and "40300" in failed["error"]
    opted_out = client.get(f"/v1/candidates/{candidate['id']}", headers=tenant_a.headers).json
    assert opted_out["contact_opt_out"] is True


def read_candidate(client, tenant, candidate_id) -> dict:
    return client.get(f"/v1/candidates/{candidate_id}", headers=tenant.headers).json


def test_a_signed_text_moves_the_call_and_the_answer_goes_through_telnyx(
    make_app, telnyx_api, tenant_a
):
    client = make_app(**telnyx_settings(telnyx_api)).test_client()
    call = call_in_zone(client, tenant_a, "America/Chicago", call_schedule_minutes=60 * 24)
    taken = post_message(client, message_event("Can you call me at 5pm instead?", NUMBER))
    assert taken.status_code == 204, taken.json
    moved = read_call(client, tenant_a, call["id"])
    when = dt.datetime.fromisoformat(moved["scheduled_for"].replace("Z", "+00:00"))
    assert when.astimezone(ZoneInfo("America/Chicago")).time() == dt.time(17)
    assert moved["booked_by"] == "candidate_sms" and moved["status"] == "queued"
    (request,) = telnyx_api.messages
    assert request.headers["Authorization"] == f"Bearer {API_KEY}"
    sent = request.get_json()
    assert (sent["from"], sent["to"]) == (FROM_NUMBER, NUMBER)
    assert sent["text"].startswith("Done: we will call you on") and "17:00" in sent["text"]


@pytest.mark.parametrize("forgery", ["missing", "other-key", "other-body"])
def test_an_unsigned_or_forged_text_is_403_and_acts_on_nothing(
    make_app, telnyx_api, tenant_a, forgery
):
    client = make_app(**telnyx_settings(telnyx_api)).test_client()
    call = call_in_zone(client, tenant_a, "America/Chicago", call_schedule_minutes=60 * 24)
    event = message_event("STOP", NUMBER)
    body = json.dumps(event).encode()
    headers = {
        "missing": {},
        "other-key": signed_headers(body, key=Ed25519PrivateKey.generate()),
        "other-body": signed_headers(json.dumps(message_event("START", NUMBER)).encode()),
    }[forgery]
    refused = post_message(client, event, headers=headers)
    assert refused.status_code == 403 and refused.json["error"]["type"] == "permission_error"
    assert read_call(client, tenant_a, call["id"]) == {**call, "reminders": []}
    assert read_candidate(client, tenant_a, call["candidate_id"])["contact_opt_out"] is False
    assert telnyx_api.messages == []


def test_stop_by_text_revokes_consent_to_texts_and_sends_nothing(make_app, telnyx_api, tenant_a):
    client = make_app(**telnyx_settings(telnyx_api)).test_client()
    call = call_in_zone(client, tenant_a, "America/Chicago", call_schedule_minutes=60 * 24)
    assert post_message(client, message_event(" Stop ", NUMBER)).status_code == 204
    candidate = read_candidate(client, tenant_a, call["candidate_id"])
    assert candidate["consent"]["sms"]["granted"] is False and candidate["contact_opt_out"] is True
    assert read_call(client, tenant_a, call["id"])["status"] == "canceled"
    assert telnyx_api.messages == []  # Telnyx confirms STOP itself
    assert post_message(client, message_event("UNSTOP", NUMBER)).status_code == 204
    assert read_candidate(client, tenant_a, call["candidate_id"])["consent"]["sms"]["granted"]


def test_the_answer_to_a_text_at_3am_goes_through_telnyx_at_8am(make_app, telnyx_api, tenant_a):
    app = make_app(CALLING_HOURS="08:00-21:00", **telnyx_settings(telnyx_api))
    client = app.test_client()
    call = call_in_zone(client, tenant_a, zone_with_local_hour(3), call_schedule_minutes=60 * 24)
    assert post_message(client, message_event("ok", NUMBER)).status_code == 204
    assert telnyx_api.messages == []
    reply = held_reply(client, tenant_a, call)
    assert sweep_at(app, naive_utc(reply["due_at"])) == 1
    (request,) = telnyx_api.messages
    assert request.get_json()["text"] == reply["text"]
    assert reply["text"].startswith("Thanks, we will call you on")


def test_other_events_are_taken_and_a_message_without_a_sender_is_422(
    make_app, telnyx_api, tenant_a
):
    client = make_app(**telnyx_settings(telnyx_api)).test_client()
    call = call_in_zone(client, tenant_a, "America/Chicago", call_schedule_minutes=60 * 24)
    finalized = message_event("now", NUMBER, event_type="message.finalized")
    assert post_message(client, finalized).status_code == 204
    assert read_call(client, tenant_a, call["id"])["status"] == "queued"
    nameless = message_event("now", NUMBER)
    del nameless["data"]["payload"]["from"]
    refused = post_message(client, nameless)
    assert refused.status_code == 422
    assert "data.payload.from.phone_number" in refused.json["error"]["fields"]
    body = b"not json"
    garbled = client.post(
        "/v1/calls/callbacks/telnyx/sms",
        data=body,
        content_type="application/json",
        headers=signed_headers(body),
    )
    assert garbled.status_code == 400 and garbled.json["error"]["message"].startswith("The body")
    assert telnyx_api.messages == []


def test_the_message_webhook_is_404_while_telnyx_is_not_configured(make_app, telnyx_api, tenant_a):
    client = make_app(**telnyx_settings(telnyx_api, TELNYX_PUBLIC_KEY="")).test_client()
    call = call_in_zone(client, tenant_a, "America/Chicago", call_schedule_minutes=60 * 24)
    refused = post_message(client, message_event("STOP", NUMBER))
    assert refused.status_code == 404 and "TELNYX_PUBLIC_KEY" in refused.json["error"]["message"]
    assert read_call(client, tenant_a, call["id"])["status"] == "queued"
