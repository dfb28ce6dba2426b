"""A candidate's opt-out of contact: its own route (POST, and DELETE to opt back in), shown as
`contact_opt_out`; it stops reminders and scheduled calls and refuses instant calls with 409; an SMS
STOP to Twilio's incoming-message webhook (signature-checked) opts the sender's number out."""

from __future__ import annotations

import pytest
from twilio.request_validator import RequestValidator

from tests.call_factories import application_for, create_application, create_candidate, instant_call
from tests.smtp_sink import SmtpSink
from tests.test_call_reminders import (
    EMAIL_NOW,
    IN_TEN_HOURS,
    SMS_NOW,
    get_call,
    run_due,
    scheduled_call,
)
from tests.test_call_scheduling import calls_of, scheduled_job
from tests.test_calls_notify import smtp_config

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

AUTH_TOKEN = "12345678901234567890123456789012"
PUBLIC_BASE = "https://hirekit.example.com"
SMS_WEBHOOK = "/v1/calls/callbacks/twilio/sms"


def opt_out(client, tenant, candidate_id, **headers):
    return client.post(
        f"/v1/candidates/{candidate_id}/opt-out", headers={**tenant.headers, **headers}
    )


def opt_in(client, tenant, candidate_id, **headers):
    return client.delete(
        f"/v1/candidates/{candidate_id}/opt-out", headers={**tenant.headers, **headers}
    )


def read_candidate(client, tenant, candidate_id) -> dict:
    return client.get(f"/v1/candidates/{candidate_id}", headers=tenant.headers).json


def test_opting_out_shows_on_the_record_and_delete_opts_back_in(client, tenant_a):
    candidate = create_candidate(client, tenant_a)
    assert candidate["contact_opt_out"] is False and candidate["contact_opted_out_at"] is None
    out = opt_out(client, tenant_a, candidate["id"])
    assert (
        out.status_code == 200
        and out.json["contact_opt_out"] is True
        and out.json["contact_opted_out_at"]
    )
    assert read_candidate(client, tenant_a, candidate["id"])["contact_opt_out"] is True
    again = opt_out(client, tenant_a, candidate["id"])
    assert (
        again.status_code == 200
        and again.json["contact_opted_out_at"] == out.json["contact_opted_out_at"]
    )
    back = opt_in(client, tenant_a, candidate["id"])
    assert (
        back.status_code == 200
        and back.json["contact_opt_out"] is False
        and back.json["contact_opted_out_at"] is None
    )
    assert read_candidate(client, tenant_a, candidate["id"])["contact_opt_out"] is False


def test_another_tenants_or_an_unknown_candidate_is_404(client, tenant_a, tenant_b):
    candidate = create_candidate(client, tenant_a)
    for candidate_id in (candidate["id"], "6f1c1c1e-0000-4000-8000-000000000000", "not-an-id"):
        for answer in (
            opt_out(client, tenant_b, candidate_id),
            opt_in(client, tenant_b, candidate_id),
        ):
            assert answer.status_code == 404 and answer.json["error"]["type"] == "not_found"
    assert read_candidate(client, tenant_a, candidate["id"])["contact_opt_out"] is False


def test_the_create_and_update_bodies_stay_as_spec_has_them(client, tenant_a):
    candidate = create_candidate(client, tenant_a)
    body = {
        key: candidate[key] for key in ("first_name", "email", "phone_no", "source", "source_id")
    }
    patched = client.patch(
        f"/v1/candidates/{candidate['id']}",
        json={**body, "contact_opt_out": True},
        headers=tenant_a.headers,
    )
    assert patched.status_code == 422 and "contact_opt_out" in patched.json["error"]["fields"]
    assert read_candidate(client, tenant_a, candidate["id"])["contact_opt_out"] is False


def test_idempotency_keys_replay_the_opt_out_and_the_opt_in(client, tenant_a):
    candidate = create_candidate(client, tenant_a)
    first = opt_out(client, tenant_a, candidate["id"], **{"Idempotency-Key": "opt-out-1"})
    opt_in(client, tenant_a, candidate["id"])
    replayed = opt_out(client, tenant_a, candidate["id"], **{"Idempotency-Key": "opt-out-1"})
    assert replayed.headers.get("Idempotent-Replayed") == "true" and replayed.json == first.json
    # the replay ran nothing
    assert read_candidate(client, tenant_a, candidate["id"])["contact_opt_out"] is False
    back = opt_in(client, tenant_a, candidate["id"], **{"Idempotency-Key": "opt-in-1"})
    opt_out(client, tenant_a, candidate["id"])
    replayed = opt_in(client, tenant_a, candidate["id"], **{"Idempotency-Key": "opt-in-1"})
    assert replayed.headers.get("Idempotent-Replayed") == "true" and replayed.json == back.json
    assert read_candidate(client, tenant_a, candidate["id"])["contact_opt_out"] is True
    other = client.post(
        f"/v1/candidates/{candidate['id']}/opt-out",
        headers={**tenant_a.headers, "Idempotency-Key": "opt-in-1"},
    )
    assert other.status_code == 422  # the key was used for another request


def test_opting_out_cancels_pending_scheduled_calls_and_their_reminders(make_app, tenant_a):
    with SmtpSink() as sink:
        app = make_app(**smtp_config(sink, SMTP_USERNAME=""))
        client = app.test_client()
        _, candidate, call = scheduled_call(client, tenant_a, **EMAIL_NOW, **SMS_NOW)
        assert opt_out(client, tenant_a, candidate["id"]).status_code == 200
        assert run_due(app) == "0 scheduled call(s) run, 0 reminder(s) sent"
        assert sink.messages == []
    canceled = get_call(client, tenant_a, call["id"])
    assert canceled["status"] == "canceled" and "opted out" in canceled["error"]
    assert [r["status"] for r in canceled["reminders"]] == ["canceled", "canceled"]
    assert all("opted out" in r["error"] for r in canceled["reminders"])


def test_an_opted_out_candidate_gets_no_new_scheduled_calls(app, client, tenant_a):
    job = scheduled_job(client, tenant_a, **IN_TEN_HOURS, **EMAIL_NOW)
    candidate = create_candidate(client, tenant_a)
    opt_out(client, tenant_a, candidate["id"])
    application = create_application(client, tenant_a, job, candidate)
    assert calls_of(client, tenant_a, application) == []
    opt_in(client, tenant_a, candidate["id"])
    moved = [
        client.patch(
            f"/v1/applications/{application['id']}",
            headers=tenant_a.headers,
            json={"source_application_status": status, "application_stage": stage},
        )
        for status, stage in (("paused", "PASSIVE"), ("back", "ACTIVE"))
    ]
    assert [answer.status_code for answer in moved] == [200, 200]
    # back in, the next move to ACTIVE schedules again
    (call,) = calls_of(client, tenant_a, application)
    assert call["status"] == "queued" and call["trigger"] == "scheduled"


def test_an_instant_call_to_an_opted_out_candidate_is_409_saying_why(client, tenant_a):
    application = application_for(client, tenant_a)
    opt_out(client, tenant_a, application["candidate_id"])
    refused = instant_call(client, tenant_a, application)
    assert refused.status_code == 409 and refused.json["status"] == 409
    assert "opted out of contact" in refused.json["error"]["message"]
    assert (
        client.get(
            f"/v1/calls?page=1&size=10&application_id={application['id']}", headers=tenant_a.headers
        ).json["total"]
        == 0
    )
    opt_in(client, tenant_a, application["candidate_id"])
    assert instant_call(client, tenant_a, application).status_code == 202


def test_an_instant_call_queued_before_the_opt_out_is_not_dialled(make_app, redis_url, tenant_a):
    from tests.webhook_helpers import work_until

    app = make_app(REDIS_URL=redis_url)
    client = app.test_client()
    application = application_for(client, tenant_a)
    call = instant_call(client, tenant_a, application).json
    opt_out(client, tenant_a, application["candidate_id"])  # before a worker took the call
    work_until(app, lambda: get_call(client, tenant_a, call["id"])["status"] != "queued")
    ended = get_call(client, tenant_a, call["id"])
    assert (
        ended["status"] == "canceled"
        and "opted out" in ended["error"]
        and ended["transcript"] == []
    )


# ---- SMS STOP
# --------------------------------------------------------------------------------------------------


@pytest.fixture
def twilio_app(make_app):
    return make_app(TWILIO_AUTH_TOKEN=AUTH_TOKEN, TWILIO_CALLBACK_BASE_URL=PUBLIC_BASE)


def incoming_message(client, body: str, sender: str, *, sign: bool = True, **extra):
    """POST Twilio's incoming-message webhook, signed as Twilio signs it (the public URL plus the
    form)."""
    form = {
        "ToCountry": "US",
        "SmsMessageSid": "SM" + "a" * 32,
        "NumMedia": "0",
        "SmsSid": "SM" + "a" * 32,
        "SmsStatus": "received",
        "Body": body,
        "To": "+14155550000",
        "NumSegments": "1",
        "MessageSid": "SM" + "a" * 32,
        "AccountSid": "AC" + "0" * 32,
        "From": sender,
        "ApiVersion": "2010-04-01",
        **extra,
    }
    headers = (
        {
            "X-Twilio-Signature": RequestValidator(AUTH_TOKEN).compute_signature(
                PUBLIC_BASE + SMS_WEBHOOK, form
            )
        }
        if sign
        else {}
    )
    return client.post(SMS_WEBHOOK, data=form, headers=headers)


def test_stop_by_sms_opts_out_every_candidate_with_that_number(twilio_app, make_tenant):
    client = twilio_app.test_client()
    tenant_a, tenant_b = make_tenant("stop-a"), make_tenant("stop-b")
    same_number = [
        create_candidate(client, tenant, phone_no="+14155550166") for tenant in (tenant_a, tenant_b)
    ]
    other = create_candidate(client, tenant_a, phone_no="+14155550165")
    answer = incoming_message(client, "  stop ", "+14155550166")
    assert (
        answer.status_code == 200
        and answer.mimetype == "text/xml"
        and "<Message" not in answer.get_data(as_text=True)
    )
    for candidate, tenant in zip(same_number, (tenant_a, tenant_b)):
        assert read_candidate(client, tenant, candidate["id"])["contact_opt_out"] is True
    assert read_candidate(client, tenant_a, other["id"])["contact_opt_out"] is False
    incoming_message(client, "START", "+14155550166")
    assert read_candidate(client, tenant_a, same_number[0]["id"])["contact_opt_out"] is False


def test_an_sms_start_reverses_only_an_sms_opt_out(twilio_app, make_tenant):
    """A tenant's own opt-out (through the API) stays whatever the number texts; the candidate's SMS
    STOP is what their START takes back."""
    client = twilio_app.test_client()
    by_tenant, by_sms = make_tenant("optout-api"), make_tenant("optout-sms")
    kept_out = create_candidate(client, by_tenant, phone_no="+14155550177")
    texted_out = create_candidate(client, by_sms, phone_no="+14155550177")
    assert opt_out(client, by_tenant, kept_out["id"]).status_code == 200
    incoming_message(client, "STOP", "+14155550177")
    for word in ("START", "Yes", "unstop"):
        assert incoming_message(client, word, "+14155550177").status_code == 200
        assert read_candidate(client, by_tenant, kept_out["id"])["contact_opt_out"] is True, word
        assert read_candidate(client, by_sms, texted_out["id"])["contact_opt_out"] is False, word


def test_twilios_opt_out_type_and_its_other_keywords_count_and_other_texts_do_not(
    twilio_app, tenant_a
):
    client = twilio_app.test_client()
    candidate = create_candidate(client, tenant_a, phone_no="+14155550164")
    for text in ("Stop calling me maybe", "yes please call", "Who is this?"):
        assert incoming_message(client, text, "+14155550164").status_code == 200
        assert read_candidate(client, tenant_a, candidate["id"])["contact_opt_out"] is False
    incoming_message(client, "Unsubscribe", "+14155550164")
    assert read_candidate(client, tenant_a, candidate["id"])["contact_opt_out"] is True
    # Twilio's Advanced Opt-Out names the kind
    incoming_message(client, "Arrêt", "+14155550164", OptOutType="START")
    assert read_candidate(client, tenant_a, candidate["id"])["contact_opt_out"] is False


def test_stop_cancels_the_pending_scheduled_call(make_app, tenant_a):
    app = make_app(TWILIO_AUTH_TOKEN=AUTH_TOKEN, TWILIO_CALLBACK_BASE_URL=PUBLIC_BASE)
    client = app.test_client()
    _, candidate, call = scheduled_call(client, tenant_a, **SMS_NOW)
    incoming_message(client, "STOP", candidate["phone_no"])
    canceled = get_call(client, tenant_a, call["id"])
    assert canceled["status"] == "canceled" and [r["status"] for r in canceled["reminders"]] == [
        "canceled"
    ]


@pytest.mark.parametrize("signature", [None, "bm90IGEgc2lnbmF0dXJl"])
def test_an_unsigned_or_forged_stop_is_403_and_changes_nothing(twilio_app, tenant_a, signature):
    client = twilio_app.test_client()
    candidate = create_candidate(client, tenant_a, phone_no="+14155550163")
    form = {"Body": "STOP", "From": "+14155550163", "To": "+14155550000"}
    answer = client.post(
        SMS_WEBHOOK, data=form, headers={"X-Twilio-Signature": signature} if signature else {}
    )
    assert answer.status_code == 403 and answer.json["error"]["type"] == "permission_error"
    assert read_candidate(client, tenant_a, candidate["id"])["contact_opt_out"] is False


def test_a_message_without_a_sender_is_422_and_without_twilio_configured_404(make_app, twilio_app):
    answer = incoming_message(twilio_app.test_client(), "STOP", "")
    assert answer.status_code == 422 and "From" in answer.json["error"]["fields"]
    unconfigured = (
        make_app().test_client().post(SMS_WEBHOOK, data={"Body": "STOP", "From": "+14155550163"})
    )
    assert unconfigured.status_code == 404
