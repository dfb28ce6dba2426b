"""Twilio's signed status callbacks against the route, and the Twilio provider against a local
server playing Twilio's REST API (the relay conversation itself: tests/test_calls_relay.py)."""

import pytest
from twilio.request_validator import RequestValidator

from tests.call_factories import application_for, instant_call
from tests.twilio_stand_in import answer_creates

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

ACCOUNT_SID = "AC" + "0" * 31 + "1"
AUTH_TOKEN = "12345678901234567890123456789012"
PUBLIC_BASE = "https://hirekit.example.com"
CALL_SID = "CA" + "f" * 32
CALLBACK_PATH = "/v1/calls/callbacks/twilio"


@pytest.fixture
def twilio_api(httpserver):
    """Twilio's Calls.json create, answering what Twilio answers (201 and the call resource);
    requests are kept."""
    httpserver.placed = answer_creates(
        httpserver,
        f"/2010-04-01/Accounts/{ACCOUNT_SID}/Calls.json",
        lambda form, _: {
            "sid": CALL_SID,
            "account_sid": ACCOUNT_SID,
            "to": form["To"],
            "from": form["From"],
            "status": "queued",
            "direction": "outbound-api",
            "api_version": "2010-04-01",
            "date_created": None,
            "price": None,
            "uri": f"/2010-04-01/Accounts/{ACCOUNT_SID}/Calls/{CALL_SID}.json",
        },
    )
    return httpserver


@pytest.fixture
def twilio_app(make_app, twilio_api):
    return make_app(
        TELEPHONY="twilio",
        TWILIO_ACCOUNT_SID=ACCOUNT_SID,
        TWILIO_AUTH_TOKEN=AUTH_TOKEN,
        TWILIO_FROM_NUMBER="+14155550000",
        TWILIO_CALLBACK_BASE_URL=PUBLIC_BASE,
        TWILIO_API_BASE_URL=twilio_api.url_for("/"),
    )


def get_call(client, tenant, call_id) -> dict:
    response = client.get(f"/v1/calls/{call_id}", headers=tenant.headers)
    assert response.status_code == 200
    return response.json


def callback(
    client,
    path_with_query: str,
    form: dict,
    *,
    signature: str | None = "sign",
    token: str = AUTH_TOKEN,
):
    """POST a Twilio callback; by default signed as Twilio signs it (the public URL plus the form
    parameters)."""
    headers = {}
    if signature == "sign":
        headers["X-Twilio-Signature"] = RequestValidator(token).compute_signature(
            PUBLIC_BASE + path_with_query, form
        )
    elif signature is not None:
        headers["X-Twilio-Signature"] = signature
    return client.post(path_with_query, data=form, headers=headers)


def status_form(status: str, call: dict, sequence: int) -> dict:
    """The fields of Twilio's status callback (call progress events), as Twilio posts them."""
    return {
        "AccountSid": ACCOUNT_SID,
        "ApiVersion": "2010-04-01",
        "CallSid": CALL_SID,
        "CallStatus": status,
        "Called": call["phone_no"],
        "CallbackSource": "call-progress-events",
        "Caller": "+14155550000",
        "Direction": "outbound-api",
        "From": "+14155550000",
        "SequenceNumber": str(sequence),
        "Timestamp": "Mon, 02 Mar 2026 10:00:0%d +0000" % sequence,
        "To": call["phone_no"],
    }


@pytest.mark.parametrize("signature", [None, "bm90IGEgc2lnbmF0dXJl", "wrong-token"])
def test_a_missing_or_wrong_signature_is_403_and_changes_nothing(twilio_app, tenant_a, signature):
    client = twilio_app.test_client()
    call = instant_call(client, tenant_a, application_for(client, tenant_a)).json
    form = status_form("completed", call, 1)
    if signature == "wrong-token":
        response = callback(client, f"{CALLBACK_PATH}?call_id={call['id']}", form, token="f" * 32)
    else:
        response = callback(
            client, f"{CALLBACK_PATH}?call_id={call['id']}", form, signature=signature
        )
    assert response.status_code == 403 and response.json["error"]["type"] == "permission_error"
    assert get_call(client, tenant_a, call["id"])["status"] == "queued"


def test_a_signature_for_another_call_does_not_verify(twilio_app, tenant_a):
    client = twilio_app.test_client()
    call = instant_call(client, tenant_a, application_for(client, tenant_a)).json
    form = status_form("completed", call, 1)
    signed_elsewhere = RequestValidator(AUTH_TOKEN).compute_signature(
        f"{PUBLIC_BASE}{CALLBACK_PATH}?call_id=6f1c1c1e-0000-4000-8000-000000000000", form
    )
    response = callback(
        client, f"{CALLBACK_PATH}?call_id={call['id']}", form, signature=signed_elsewhere
    )
    assert response.status_code == 403


def test_an_unknown_call_is_404_even_when_signed(twilio_app, tenant_a):
    client = twilio_app.test_client()
    call = instant_call(client, tenant_a, application_for(client, tenant_a)).json
    for call_id in ("6f1c1c1e-0000-4000-8000-000000000000", "not-a-call"):
        response = callback(
            client, f"{CALLBACK_PATH}?call_id={call_id}", status_form("ringing", call, 1)
        )
        assert response.status_code == 404


def test_twilio_refusing_the_call_fails_it_with_the_reason(make_app, httpserver, tenant_a):
    httpserver.expect_request(f"/2010-04-01/Accounts/{ACCOUNT_SID}/Calls.json").respond_with_json(
        {
            "code": 21211,
            "message": "The 'To' number +14155550143 is not a valid phone number.",
            "status": 400,
        },
        status=400,
    )
    app = make_app(
        TELEPHONY="twilio",
        TWILIO_ACCOUNT_SID=ACCOUNT_SID,
        TWILIO_AUTH_TOKEN=AUTH_TOKEN,
        TWILIO_FROM_NUMBER="+14155550000",
        TWILIO_CALLBACK_BASE_URL=PUBLIC_BASE,
        TWILIO_API_BASE_URL=httpserver.url_for("/"),
    )
    client = app.test_client()
    call = instant_call(
        client, tenant_a, application_for(client, tenant_a, phone_no="+14155550143")
    ).json
    failed = get_call(client, tenant_a, call["id"])
    assert failed["status"] == "failed" and "not a valid phone number" in failed["error"]


def test_a_call_job_run_twice_dials_the_candidate_once(twilio_app, twilio_api, tenant_a):
    """RQ runs a job at least once (a dead worker's job re-queued, a job moved twice by a
    scheduler): a second run of the same call's job, even one that read the call while it was still
    queued, must not dial again."""
    from app.data.db import database
    from plugins.calls.models import Call
    from plugins.calls.placing import place_call

    client = twilio_app.test_client()
    call = instant_call(client, tenant_a, application_for(client, tenant_a)).json
    assert len(twilio_api.placed) == 1
    with twilio_app.app_context(), database.connection_context():
        stale = Call.get(Call.id == call["id"])
        assert stale.status == "queued"  # Twilio has not called back yet
        place_call(stale)
    assert len(twilio_api.placed) == 1
