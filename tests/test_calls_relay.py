"""Calls over ConversationRelay: the Twilio provider's TwiML, machine detection and recording
parameters against a local stand-in for Twilio's REST API, and the relay over real WebSockets,
signed as Twilio signs them, with a scripted dialogue (tests/conversation_double.py) behind the
relay's contract."""

from __future__ import annotations

import datetime as dt
import json
import ssl
import time
import xml.etree.ElementTree as ElementTree

import pytest
from websockets.exceptions import InvalidStatus
from werkzeug import Response

from app.data.db import database, utcnow
from plugins.calls.models import Call
from plugins.calls.relay.claims import CallRelay, sweep
from tests.call_factories import JOB_QUESTIONS, application_for, instant_call
from tests.conversation_double import CLOSED, OPENING, open_scripted
from tests.nginx_site import MISSING as NGINX_MISSING, nginx_site
from tests.relay_stand_in import RelayInThread, TwilioSocket, signed_headers
from tests.test_calls_twilio import (
    ACCOUNT_SID,
    AUTH_TOKEN,
    CALL_SID,
    CALLBACK_PATH,
    PUBLIC_BASE,
    callback,
    status_form,
)
from tests.twilio_stand_in import answer_creates

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

CALLS_PATH = f"/2010-04-01/Accounts/{ACCOUNT_SID}/Calls.json"
CALL_PATH = f"/2010-04-01/Accounts/{ACCOUNT_SID}/Calls/{CALL_SID}.json"
RECORDING_SID = "RE" + "a" * 32
RECORDING_PATH = f"/2010-04-01/Accounts/{ACCOUNT_SID}/Recordings/{RECORDING_SID}"
AUDIO = b"ID3" + bytes(range(256)) * 40
# the candidate's side of a whole scripted conversation (tests/conversation_double.py asks four
# questions)
ANSWERS = [
    "Yes, now is fine.",
    "Six years.",
    "Yes, renewed in March.",
    "A night with three admissions.",
]


def call_resource(form, _n) -> dict:
    return {
        "sid": CALL_SID,
        "account_sid": ACCOUNT_SID,
        "to": form.get("To"),
        "from": form.get("From"),
        "status": "queued",
        "direction": "outbound-api",
        "api_version": "2010-04-01",
        "uri": f"/2010-04-01/Accounts/{ACCOUNT_SID}/Calls/{CALL_SID}.json",
    }


@pytest.fixture
def twilio_api(httpserver):
    """Twilio's REST API as the provider uses it: create a call, update it (new TwiML, or hang up),
    fetch a recording's audio and delete it. Requests are kept."""
    httpserver.placed = answer_creates(httpserver, CALLS_PATH, call_resource)
    httpserver.updates = []

    def update(request):
        httpserver.updates.append(request.form.to_dict())
        return Response(
            status=200,
            content_type="application/json",
            response=json.dumps(call_resource(request.form, 0)),
        )

    httpserver.expect_request(CALL_PATH, method="POST").respond_with_handler(update)
    httpserver.recording_reads = []
    httpserver.recording_deletes = []

    def audio(request):
        httpserver.recording_reads.append(request.authorization)
        return Response(AUDIO, status=200, content_type="audio/mpeg")

    def delete(request):
        httpserver.recording_deletes.append(request.path)
        return Response(status=204)

    httpserver.expect_request(RECORDING_PATH + ".mp3", method="GET").respond_with_handler(audio)
    httpserver.expect_request(RECORDING_PATH + ".json", method="DELETE").respond_with_handler(
        delete
    )
    return httpserver


@pytest.fixture
def twilio_app(make_app, twilio_api):
    app = make_app(
        TELEPHONY="twilio",
        TWILIO_ACCOUNT_SID=ACCOUNT_SID,
        TWILIO_AUTH_TOKEN=AUTH_TOKEN,
        TWILIO_FROM_NUMBER="+14155550000",
        TWILIO_CALLBACK_BASE_URL=PUBLIC_BASE,
        TWILIO_API_BASE_URL=twilio_api.url_for("/"),
        RELAY_SILENCE_SECONDS=30.0,
        RELAY_SWEEP_INTERVAL=0.2,
    )
    app.extensions["hirekit_conversation_factory"] = open_scripted
    return app


@pytest.fixture
def relay(twilio_app):
    with RelayInThread(twilio_app) as running:
        yield running


def answered_call(client, tenant, *, phone_no="+14155550100", place=None) -> dict:
    """A placed call that Twilio reports ringing, then answered; `place(call)` places it first when
    a worker does (Redis configured)."""
    call = instant_call(client, tenant, application_for(client, tenant, phone_no=phone_no)).json
    if place is not None:
        place(call)
    for sequence, status in enumerate(("initiated", "ringing", "in-progress")):
        assert (
            callback(
                client, f"{CALLBACK_PATH}?call_id={call['id']}", status_form(status, call, sequence)
            ).status_code
            == 200
        )
    return call


def read_call(client, tenant, call_id) -> dict:
    response = client.get(f"/v1/calls/{call_id}", headers=tenant.headers)
    assert response.status_code == 200
    return response.json


def open_socket(relay, call_id, **options) -> TwilioSocket:
    return TwilioSocket(
        relay.port,
        call_id,
        headers=signed_headers(PUBLIC_BASE, "twilio", call_id, AUTH_TOKEN),
        **options,
    )


def relay_rows(app, call_id) -> int:
    with app.app_context(), database.connection_context():
        return CallRelay.select().where(CallRelay.call == call_id).count()


def wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("the condition did not hold in time")


# -- placing the call ----------------------------------------------------------------------------


def test_the_call_is_answered_by_conversation_relay_with_machine_detection(
    twilio_app, twilio_api, tenant_a
):
    client = twilio_app.test_client()
    call = instant_call(
        client, tenant_a, application_for(client, tenant_a, phone_no="+14155550142")
    ).json
    (request,) = twilio_api.placed
    form = request.form
    relay_element = ElementTree.fromstring(form["Twiml"]).find("./Connect/ConversationRelay")
    assert (
        relay_element.attrib["url"]
        == f"wss://hirekit.example.com/v1/calls/relay/twilio/{call['id']}"
    )
    assert (
        relay_element.attrib["language"] == "en-US"
        and relay_element.attrib["interruptible"] == "any"
    )
    assert relay_element.attrib["dtmfDetection"] == "true"
    hints = relay_element.attrib["hints"].split(",")
    assert hints[0].startswith("Registered Nurse") and "San Francisco" in hints and "Jane" in hints
    assert form["MachineDetection"] == "Enable" and form["AsyncAmd"] == "true"
    assert (
        form["AsyncAmdStatusCallback"]
        == f"{PUBLIC_BASE}{CALLBACK_PATH}?call_id={call['id']}&event=amd&voicemail=0"
    )
    assert "Record" not in form  # recording is off until the tenant turns it on


def test_a_tenant_that_records_has_both_channels_recorded(twilio_app, twilio_api, tenant_a):
    client = twilio_app.test_client()
    assert client.get("/v1/call-settings", headers=tenant_a.headers).json == {"recording": False}
    response = client.put("/v1/call-settings", json={"recording": True}, headers=tenant_a.headers)
    assert response.status_code == 200 and response.json == {"recording": True}
    assert (
        client.put(
            "/v1/call-settings", json={"recording": "yes"}, headers=tenant_a.headers
        ).status_code
        == 422
    )
    instant_call(client, tenant_a, application_for(client, tenant_a))
    form = twilio_api.placed[0].form
    assert form["Record"] == "true" and form["RecordingChannels"] == "dual"
    assert form["RecordingStatusCallback"].endswith("&event=recording")


# -- the conversation over the socket ------------------------------------------------------------


def test_a_conversation_over_the_relay_fills_the_call_record_and_completes_it(
    twilio_app, relay, tenant_a
):
    client = twilio_app.test_client()
    call = answered_call(client, tenant_a)
    socket = open_socket(relay, call["id"])
    socket.setup(CALL_SID)
    assert socket.agent_turn() == OPENING
    heard = []
    for answer in ANSWERS:
        socket.say(answer)
        heard.append(socket.agent_turn())
    assert heard == [*JOB_QUESTIONS, "Thank you, goodbye."]
    assert socket.wait_closed() == 1000
    assert socket.received[-1]["type"] == "end"
    done = wait_for(
        lambda: (
            (record := read_call(client, tenant_a, call["id"]))["status"] == "completed" and record
        )
    )
    said = [(turn["speaker"], turn["text"]) for turn in done["transcript"]]
    assert [text for speaker, text in said if speaker == "candidate"] == ANSWERS
    assert CLOSED[call["id"]] == "completed"
    assert done["recording"] is None


@pytest.mark.skipif(bool(NGINX_MISSING), reason=NGINX_MISSING)
def test_a_conversation_through_deploy_nginx_conf_reaches_the_relay_and_completes(
    twilio_app, relay, tenant_a, tmp_path
):
    client = twilio_app.test_client()
    call = answered_call(client, tenant_a)
    tls = ssl.create_default_context()
    # nginx's certificate is made for the test
    tls.check_hostname, tls.verify_mode = False, ssl.CERT_NONE
    with nginx_site(tmp_path, app_port=1, relay_ports=[relay.port]) as site:
        # the relay, not nginx, judges the signature nginx passed on
        with pytest.raises(InvalidStatus) as refused:
            TwilioSocket(
                site.tls_port, call["id"], tls=tls, headers={"X-Twilio-Signature": "forged"}
            )
        assert refused.value.response.status_code == 403
        socket = TwilioSocket(
            site.tls_port,
            call["id"],
            tls=tls,
            headers=signed_headers(PUBLIC_BASE, "twilio", call["id"], AUTH_TOKEN),
        )
        socket.setup(CALL_SID)
        assert socket.agent_turn() == OPENING
        for answer in ANSWERS:
            socket.say(answer)
            socket.agent_turn()
        assert socket.wait_closed() == 1000
        done = wait_for(
            lambda: (
                (record := read_call(client, tenant_a, call["id"]))["status"] == "completed"
                and record
            )
        )
        assert [
            turn["text"] for turn in done["transcript"] if turn["speaker"] == "candidate"
        ] == ANSWERS
        lines = wait_for(
            lambda: (
                len(logged := (site.directory / "hirekit.access.log").read_text().splitlines()) >= 2
                and [json.loads(line) for line in logged]
            )
        )
        assert [(line["path"], line["status"]) for line in lines] == [
            (f"/v1/calls/relay/twilio/{call['id']}", 403),
            (f"/v1/calls/relay/twilio/{call['id']}", 101),
        ]


def test_text_tokens_stream_as_the_dialogue_yields_them(twilio_app, relay, tenant_a):
    client = twilio_app.test_client()
    call = answered_call(client, tenant_a)
    socket = open_socket(relay, call["id"])
    socket.setup(CALL_SID)
    socket.agent_turn()
    tokens = [message for message in socket.received if message["type"] == "text"]
    assert len(tokens) == len(OPENING.split(" ")) and [t["last"] for t in tokens].count(True) == 1
    socket.close()


def test_keys_barge_in_and_silence_reach_the_dialogue(make_app, twilio_api, tenant_a):
    app = make_app(
        TELEPHONY="twilio",
        TWILIO_ACCOUNT_SID=ACCOUNT_SID,
        TWILIO_AUTH_TOKEN=AUTH_TOKEN,
        TWILIO_FROM_NUMBER="+14155550000",
        TWILIO_CALLBACK_BASE_URL=PUBLIC_BASE,
        TWILIO_API_BASE_URL=twilio_api.url_for("/"),
        RELAY_SILENCE_SECONDS=0.3,
    )
    app.extensions["hirekit_conversation_factory"] = open_scripted
    client = app.test_client()
    with RelayInThread(app) as relay:
        call = answered_call(client, tenant_a)
        socket = open_socket(relay, call["id"])
        socket.setup(CALL_SID)
        socket.agent_turn()
        assert socket.agent_turn().startswith(
            "Are you still there?"
        )  # nothing said for the silence timeout
        socket.send(
            {
                "type": "interrupt",
                "utteranceUntilInterrupt": "Are you",
                "durationUntilInterruptMs": "460",
            }
        )
        socket.send({"type": "dtmf", "digit": "1"})
        assert socket.agent_turn() == JOB_QUESTIONS[0]
        socket.close()
        done = wait_for(
            lambda: (
                (record := read_call(client, tenant_a, call["id"]))["status"] == "completed"
                and record
            )
        )
    agent_turns = [turn for turn in done["transcript"] if turn["speaker"] == "agent"]
    assert (
        agent_turns[1]["text"] == "Are you"
    )  # only what was spoken before the candidate barged in
    assert {"speaker": "candidate", "text": "yes"}.items() <= done["transcript"][2].items()
    assert CLOSED[call["id"]] == "hung_up"


# -- refusals: nothing recorded ------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers", [{}, {"X-Twilio-Signature": "bm90IGEgc2lnbmF0dXJl"}, "other-token"]
)
def test_a_forged_or_missing_signature_refuses_the_socket_and_records_nothing(
    twilio_app, relay, tenant_a, headers
):
    client = twilio_app.test_client()
    call = answered_call(client, tenant_a)
    if headers == "other-token":
        headers = signed_headers(PUBLIC_BASE, "twilio", call["id"], "f" * 32)
    with pytest.raises(InvalidStatus) as refused:
        TwilioSocket(relay.port, call["id"], headers=headers)
    assert refused.value.response.status_code == 403
    assert relay_rows(twilio_app, call["id"]) == 0
    assert read_call(client, tenant_a, call["id"])["transcript"] == []


def test_a_signature_for_another_call_or_an_unknown_call_is_refused(twilio_app, relay, tenant_a):
    client = twilio_app.test_client()
    call = answered_call(client, tenant_a)
    unknown = "6f1c1c1e-0000-4000-8000-000000000000"
    with pytest.raises(InvalidStatus) as forged:
        TwilioSocket(
            relay.port,
            call["id"],
            headers=signed_headers(PUBLIC_BASE, "twilio", unknown, AUTH_TOKEN),
        )
    assert forged.value.response.status_code == 403
    for call_id in (unknown, "not-a-call"):
        with pytest.raises(InvalidStatus) as missing:
            open_socket(relay, call_id)
        assert missing.value.response.status_code == 404
    assert relay_rows(twilio_app, call["id"]) == 0


def test_a_second_socket_and_a_socket_for_a_finished_call_are_refused(twilio_app, relay, tenant_a):
    client = twilio_app.test_client()
    call = answered_call(client, tenant_a)
    first = open_socket(relay, call["id"])
    first.setup(CALL_SID)
    first.agent_turn()
    with pytest.raises(InvalidStatus) as second:
        open_socket(relay, call["id"])
    assert second.value.response.status_code == 409
    first.say("Yes, go ahead.")
    assert first.agent_turn() == JOB_QUESTIONS[0]  # the first socket goes on
    first.close()
    wait_for(lambda: read_call(client, tenant_a, call["id"])["status"] == "completed")
    with pytest.raises(InvalidStatus) as finished:
        open_socket(relay, call["id"])
    assert finished.value.response.status_code == 409


def test_a_setup_for_another_call_closes_the_socket_with_nothing_recorded(
    twilio_app, relay, tenant_a
):
    client = twilio_app.test_client()
    call = answered_call(client, tenant_a)
    socket = open_socket(relay, call["id"])
    socket.setup("CA" + "1" * 32)
    assert socket.wait_closed() == 1008
    assert read_call(client, tenant_a, call["id"])["transcript"] == []
    wait_for(
        lambda: relay_rows(twilio_app, call["id"]) == 0
    )  # the call's own socket may still come
    socket = open_socket(relay, call["id"])
    socket.setup(CALL_SID)
    assert socket.agent_turn() == OPENING
    socket.close()


# -- bad frames ----------------------------------------------------------------------------------


def test_bad_frames_are_ignored_with_one_line_each_and_the_conversation_goes_on(
    twilio_app, relay, tenant_a, caplog
):
    client = twilio_app.test_client()
    call = answered_call(client, tenant_a)
    socket = open_socket(relay, call["id"])
    socket.say("Hello?")  # a prompt before setup
    socket.setup(CALL_SID)
    assert socket.agent_turn() == OPENING
    for frame in (
        "not json",
        "[1, 2]",
        '{"type": "mystery"}',
        '{"type": "prompt"}',
        '{"type": "dtmf", "digit": "12"}',
        '{"type": "setup", "callSid": "CA' + "0" * 32 + '"}',
    ):
        socket.send(frame)
    socket.send({"type": "error", "description": "Invalid message received"})
    socket.say("Yes.")
    assert socket.agent_turn() == JOB_QUESTIONS[0]
    relay_lines = [r.getMessage() for r in caplog.records if r.name == "hirekit.calls.relay"]
    assert sum("ignored" in line for line in relay_lines) == 7
    assert any("before setup" in line for line in relay_lines) and any(
        "second setup" in line for line in relay_lines
    )
    socket.close()
    done = wait_for(
        lambda: (
            (record := read_call(client, tenant_a, call["id"]))["status"] == "completed" and record
        )
    )
    assert [turn["text"] for turn in done["transcript"] if turn["speaker"] == "candidate"] == [
        "Yes."
    ]


def test_an_oversized_frame_closes_the_socket_and_the_call_ends_consistently(
    twilio_app, relay, tenant_a
):
    client = twilio_app.test_client()
    call = answered_call(client, tenant_a)
    socket = open_socket(relay, call["id"])
    socket.setup(CALL_SID)
    socket.agent_turn()
    socket.say("x" * 100_000)
    assert socket.wait_closed() == 1009
    done = wait_for(
        lambda: (
            (record := read_call(client, tenant_a, call["id"]))["status"] == "completed" and record
        )
    )
    assert [turn["speaker"] for turn in done["transcript"]] == ["agent"]
    assert CLOSED[call["id"]] == "hung_up"


# -- a relay that never comes, or goes -----------------------------------------------------------


def test_an_answered_call_whose_relay_never_connects_fails_and_is_hung_up(
    make_app, twilio_api, tenant_a
):
    app = make_app(
        TELEPHONY="twilio",
        TWILIO_ACCOUNT_SID=ACCOUNT_SID,
        TWILIO_AUTH_TOKEN=AUTH_TOKEN,
        TWILIO_FROM_NUMBER="+14155550000",
        TWILIO_CALLBACK_BASE_URL=PUBLIC_BASE,
        TWILIO_API_BASE_URL=twilio_api.url_for("/"),
        RELAY_CONNECT_TIMEOUT=0.5,
        RELAY_SWEEP_INTERVAL=0.2,
    )
    client = app.test_client()
    with RelayInThread(app):
        call = answered_call(client, tenant_a)
        failed = wait_for(
            lambda: (
                (record := read_call(client, tenant_a, call["id"]))["status"] == "failed" and record
            )
        )
    assert "never connected" in failed["error"]
    assert {"Status": "completed"} in twilio_api.updates


def test_a_call_whose_relay_process_died_fails_once_its_claim_goes_quiet(
    twilio_app, twilio_api, tenant_a
):
    client = twilio_app.test_client()
    call = answered_call(client, tenant_a)
    with twilio_app.app_context(), database.connection_context():
        CallRelay.create(
            call=call["id"]
        )  # held by a relay process that then died: no heartbeat follows
        assert sweep(connect_timeout=30, quiet_after=60) == 0
        assert (
            sweep(connect_timeout=30, quiet_after=60, now=utcnow() + dt.timedelta(seconds=61)) == 1
        )
    failed = read_call(client, tenant_a, call["id"])
    assert failed["status"] == "failed" and "stopped" in failed["error"]


def test_an_end_whose_completion_never_came_is_completed_by_the_sweep(twilio_app, tenant_a):
    """The relay wrote the conversation's end, then died before handing its completion to a worker:
    once the end has gone a quiet spell without it, a sweep makes what the end meant."""
    client = twilio_app.test_client()
    call = answered_call(client, tenant_a)
    answered = [{"question": "Can you work nights?", "status": "answered", "question_id": "q1"}]
    with twilio_app.app_context(), database.connection_context():
        Call.update(end_reason="hung_up", answers=answered).where(Call.id == call["id"]).execute()
        # its completion may still be on its way
        assert sweep(connect_timeout=3600, quiet_after=60) == 0
        assert (
            sweep(connect_timeout=3600, quiet_after=60, now=utcnow() + dt.timedelta(seconds=61))
            == 1
        )
    done = read_call(client, tenant_a, call["id"])
    # every question dealt with
    assert (done["status"], done["end_reason"]) == ("completed", "hung_up")


def provider_says_completed(client, call, sequence=3):
    assert (
        callback(
            client,
            f"{CALLBACK_PATH}?call_id={call['id']}",
            status_form("completed", call, sequence),
        ).status_code
        == 200
    )


def test_the_providers_completed_mid_conversation_fails_the_call_and_the_relays_close_keeps_it(
    twilio_app, relay, tenant_a
):
    """Twilio posts `completed` as soon as the line closes, which may be before the relay sees its
    socket go (or after the relay process died): the screening did not finish, so the call fails
    as a hang-up would, and is never marked completed with half its answers."""
    client = twilio_app.test_client()
    call = answered_call(client, tenant_a)
    socket = open_socket(relay, call["id"])
    socket.setup(CALL_SID)
    socket.agent_turn()
    socket.say(ANSWERS[0])
    socket.agent_turn()
    provider_says_completed(client, call)
    failed = read_call(client, tenant_a, call["id"])
    assert (failed["status"], failed["end_reason"]) == ("failed", "hung_up")
    assert failed["error"] == "the call ended before the screening finished"
    socket.close()
    wait_for(lambda: relay.server.stats()["live_calls"] == 0)
    after = read_call(client, tenant_a, call["id"])
    assert (after["status"], after["end_reason"], after["error"]) == (
        "failed",
        "hung_up",
        "the call ended before the screening finished",
    )


def test_the_providers_completed_for_a_call_whose_socket_never_connected_fails_it(
    twilio_app, tenant_a
):
    client = twilio_app.test_client()
    call = answered_call(client, tenant_a)
    provider_says_completed(client, call)
    failed = read_call(client, tenant_a, call["id"])
    assert failed["status"] == "failed"
    assert failed["error"] == "the call ended before its relay socket connected"


def test_the_providers_completed_after_the_conversation_wrote_its_end_leaves_it_to_its_completion(
    twilio_app, tenant_a
):
    client = twilio_app.test_client()
    call = answered_call(client, tenant_a)
    with twilio_app.app_context(), database.connection_context():
        CallRelay.create(call=call["id"])
        Call.update(end_reason="completed").where(Call.id == call["id"]).execute()
    provider_says_completed(client, call)
    record = read_call(client, tenant_a, call["id"])
    assert (record["status"], record["end_reason"]) == ("in_progress", "completed")


# -- answering machines --------------------------------------------------------------------------


def amd(client, call, answered_by, *, voicemail):
    form = {
        **status_form("in-progress", call, 9),
        "AnsweredBy": answered_by,
        "MachineDetectionDuration": "4100",
    }
    path = f"{CALLBACK_PATH}?call_id={call['id']}&event=amd&voicemail={int(voicemail)}"
    assert callback(client, path, form).status_code == 200


def test_a_machine_gets_a_voicemail_after_the_beep_when_the_job_allows_it(
    twilio_app, twilio_api, tenant_a
):
    client = twilio_app.test_client()
    call = answered_call(client, tenant_a)
    amd(client, call, "machine_start", voicemail=True)
    assert twilio_api.updates == []  # the greeting is still playing
    amd(client, call, "machine_end_beep", voicemail=True)
    (update,) = twilio_api.updates
    said = ElementTree.fromstring(update["Twiml"]).find("./Say").text
    assert "Registered Nurse" in said and "Rita Recruiter" in said and "+14155550100" in said
    done = read_call(client, tenant_a, call["id"])
    assert done["status"] == "no_answer" and done["voicemail_left"] is True
    assert done["transcript"][-1]["text"] == said


def test_a_machine_is_hung_up_on_without_voicemail_and_a_person_is_left_alone(
    twilio_app, twilio_api, tenant_a
):
    client = twilio_app.test_client()
    person = answered_call(client, tenant_a)
    amd(client, person, "human", voicemail=False)
    assert (
        twilio_api.updates == []
        and read_call(client, tenant_a, person["id"])["status"] == "in_progress"
    )
    amd(client, person, "machine_start", voicemail=False)
    assert twilio_api.updates == [{"Status": "completed"}]
    done = read_call(client, tenant_a, person["id"])
    assert done["status"] == "no_answer" and done["voicemail_left"] is False


# -- recordings ----------------------------------------------------------------------------------


def recording_callback(client, call):
    form = {
        "AccountSid": ACCOUNT_SID,
        "CallSid": CALL_SID,
        "RecordingSid": RECORDING_SID,
        "RecordingStatus": "completed",
        "RecordingUrl": f"https://api.twilio.com{RECORDING_PATH}",
        "RecordingChannels": "2",
        "RecordingDuration": "73",
        "RecordingSource": "OutboundAPI",
    }
    return callback(client, f"{CALLBACK_PATH}?call_id={call['id']}&event=recording", form)


def test_a_recording_is_kept_by_reference_streamed_to_the_tenant_exported_and_erased(
    twilio_app, twilio_api, tenant_a, tenant_b
):
    client = twilio_app.test_client()
    client.put("/v1/call-settings", json={"recording": True}, headers=tenant_a.headers)
    call = answered_call(client, tenant_a)
    assert (
        client.get(f"/v1/calls/{call['id']}/recording", headers=tenant_a.headers).status_code == 404
    )
    assert recording_callback(client, call).status_code == 200
    record = read_call(client, tenant_a, call["id"])
    assert record["recording"]["url"] == f"/v1/calls/{call['id']}/recording"
    assert record["recording"]["channels"] == 2 and record["recording"]["duration_seconds"] == 73
    audio = client.get(f"/v1/calls/{call['id']}/recording", headers=tenant_a.headers)
    assert audio.status_code == 200 and audio.mimetype == "audio/mpeg" and audio.data == AUDIO
    assert twilio_api.recording_reads[0].username == ACCOUNT_SID
    assert (
        client.get(f"/v1/calls/{call['id']}/recording", headers=tenant_b.headers).status_code == 404
    )

    candidate_id = call["candidate_id"]
    exported = client.get(f"/v1/candidates/{candidate_id}/export", headers=tenant_a.headers).json
    assert [r["call_id"] for r in exported["recordings"]] == [call["id"]]
    erased = client.delete(f"/v1/candidates/{candidate_id}", headers=tenant_a.headers)
    assert erased.status_code in (200, 204), erased.get_data(as_text=True)
    assert twilio_api.recording_deletes == [RECORDING_PATH + ".json"]
    assert (
        client.get(f"/v1/calls/{call['id']}/recording", headers=tenant_a.headers).status_code == 404
    )
