"""Reminders of scheduled calls, as stored rows: email over a real SMTP server on 127.0.0.1 (text
and HTML), SMS through a local server standing in for Twilio's Messaging API, sent by the embedded
sweep (`flask calls run-due`), once however often their job runs, retried after a transport error,
skipped or canceled with the reason, and shown on the call (REST and MCP)."""

from __future__ import annotations

import datetime as dt
import re
import socket
import threading
from zoneinfo import ZoneInfo

import jsonschema
import pytest

from app.data.db import database
from app.outbound.notify import SmtpNotifier
from tests.call_factories import create_application, create_candidate
from tests.smtp_sink import SmtpSink
from tests.test_call_scheduling import calls_of, scheduled_job
from tests.test_calls_notify import smtp_config
from tests.test_mcp_jobs import listed_tools
from tests.test_mcp_protocol import tool_result
from tests.twilio_stand_in import answer_creates

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

ACCOUNT_SID = "AC" + "0" * 31 + "2"
AUTH_TOKEN = "12345678901234567890123456789012"
FROM_NUMBER = "+14155550000"
MESSAGES_PATH = f"/2010-04-01/Accounts/{ACCOUNT_SID}/Messages.json"
IN_TEN_HOURS = {
    "call_schedule_minutes": 600
}  # the attempt ten hours ahead; a reminder 600 minutes before is due now
EMAIL_NOW = {"email_enabled": True, "email_notify_minutes": 600}
SMS_NOW = {"sms_enabled": True, "sms_notify_minutes": 600}


def run_due(app) -> str:
    result = app.test_cli_runner().invoke(args=["calls", "run-due"])
    assert result.exit_code == 0, result.output
    return result.output.strip()


def get_call(client, tenant, call_id) -> dict:
    response = client.get(f"/v1/calls/{call_id}", headers=tenant.headers)
    assert response.status_code == 200, response.json
    return response.json


def scheduled_call(
    client, tenant, *, phone_no="+14155550100", job_fields=None, **setting
) -> tuple[dict, dict, dict]:
    """(job, candidate, the queued scheduled call) of a fresh ACTIVE application on a job with
    `setting`."""
    job = scheduled_job(client, tenant, job_fields=job_fields, **{**IN_TEN_HOURS, **setting})
    candidate = create_candidate(client, tenant, phone_no=phone_no)
    (call,) = calls_of(client, tenant, create_application(client, tenant, job, candidate))
    assert call["status"] == "queued" and call["trigger"] == "scheduled"
    return job, candidate, call


def reminder_of(client, tenant, call: dict, channel: str) -> dict:
    (reminder,) = [
        r for r in get_call(client, tenant, call["id"])["reminders"] if r["channel"] == channel
    ]
    return reminder


@pytest.fixture
def sink():
    """A real SMTP server on 127.0.0.1 (no login), for the apps of `mail_app`."""
    with SmtpSink() as server:
        yield server


@pytest.fixture
def mail_app(make_app, sink):
    """make_app with reminder emails going to `sink`."""
    return lambda **overrides: make_app(**smtp_config(sink, SMTP_USERNAME="", **overrides))


def closed_port() -> int:
    """A 127.0.0.1 port nothing listens on: connecting is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# ---- email
# --------------------------------------------------------------------------------------------------


def test_the_embedded_sweep_emails_the_reminder_as_text_and_html_with_job_company_and_local_time(
    mail_app, sink, tenant_a
):
    app = mail_app(
        TIMEZONE="Asia/Tokyo"
    )  # the server's zone: the candidate's own (Paris, from the number) wins
    client = app.test_client()
    job, candidate, call = scheduled_call(
        client,
        tenant_a,
        job_fields={"title": "ICU Nurse", "client_name": "Mercy Hospital"},
        phone_no="+33612345678",
        **EMAIL_NOW,
    )
    pending = reminder_of(client, tenant_a, call, "email")
    assert (
        pending["status"] == "pending"
        and pending["sent_at"] is None
        and pending["address"] == candidate["email"]
    )
    assert sink.messages == []  # without Redis nothing is sent until the sweep runs
    assert run_due(app) == "0 scheduled call(s) run, 1 reminder(s) sent"
    assert run_due(app) == "0 scheduled call(s) run, 0 reminder(s) sent"
    (received,) = sink.messages
    assert received.recipients == [candidate["email"]]
    message = received.message
    assert message["Subject"] == "Screening call for ICU Nurse at Mercy Hospital"
    text = message.get_body(preferencelist=("plain",)).get_content()
    html = message.get_body(preferencelist=("html",)).get_content()
    local = dt.datetime.fromisoformat(call["scheduled_for"].replace("Z", "+00:00")).astimezone(
        ZoneInfo("Europe/Paris")
    )
    for body in (text, html):
        assert "ICU Nurse" in body and "Mercy Hospital" in body and "Europe/Paris" in body
        assert (
            f"{local:%H:%M} {local.tzname()}" in body
            and f"{local:%A}" in body
            and f"{local:%B}" in body
        )
    assert "<p>" not in text and html.lstrip().startswith("<!DOCTYPE html>")
    sent = reminder_of(client, tenant_a, call, "email")
    assert (
        sent["status"] == "sent"
        and sent["sent_at"]
        and sent["attempts"] == 1
        and sent["error"] is None
    )


def test_the_reminder_email_links_to_the_candidates_page_in_both_parts(mail_app, sink, tenant_a):
    app = mail_app(CANDIDATE_PAGE_BASE_URL="https://jobs.example.com")
    client = app.test_client()
    scheduled_call(client, tenant_a, job_fields={"title": "ICU Nurse"}, **EMAIL_NOW)
    run_due(app)
    (received,) = sink.messages
    text = received.message.get_body(preferencelist=("plain",)).get_content()
    html = received.message.get_body(preferencelist=("html",)).get_content()
    (link,) = re.findall(r"https://jobs\.example\.com/c/[A-Za-z0-9._-]+", text)
    assert f'<a href="{link}">' in html
    page = client.get(link.removeprefix("https://jobs.example.com"))
    assert page.status_code == 200 and "ICU Nurse" in page.get_data(as_text=True)


def test_the_html_part_escapes_what_the_candidate_and_the_ats_typed(mail_app, sink, tenant_a):
    app = mail_app()
    client = app.test_client()
    job = scheduled_job(
        client, tenant_a, job_fields={"title": "Nurse <b>ICU</b>"}, **IN_TEN_HOURS, **EMAIL_NOW
    )
    create_application(
        client, tenant_a, job, create_candidate(client, tenant_a, first_name="<script>x</script>")
    )
    run_due(app)
    (received,) = sink.messages
    html = received.message.get_body(preferencelist=("html",)).get_content()
    assert (
        "<script>" not in html
        and "&lt;script&gt;" in html
        and "Nurse &lt;b&gt;ICU&lt;/b&gt;" in html
    )
    assert (
        "<script>x</script>" in received.message.get_body(preferencelist=("plain",)).get_content()
    )


def test_a_reminder_job_run_twice_or_by_two_runs_at_once_sends_once(mail_app, sink, tenant_a):
    from plugins.calls import tasks

    app = mail_app()
    client = app.test_client()
    _, _, call = scheduled_call(client, tenant_a, **EMAIL_NOW)
    reminder_id = reminder_of(client, tenant_a, call, "email")["id"]
    start = threading.Barrier(2)
    outcomes = []

    def run_job():
        with app.app_context():
            start.wait()
            outcomes.append(tasks.send_reminder(reminder_id))

    runs = [threading.Thread(target=run_job) for _ in range(2)]
    for run in runs:
        run.start()
    for run in runs:
        run.join(30)
    with app.app_context():
        outcomes.append(tasks.send_reminder(reminder_id))  # RQ delivering the job once more, later
    assert run_due(app).endswith("0 reminder(s) sent")
    assert len(sink.messages) == 1
    assert sorted(outcomes) == ["not claimed", "not claimed", "sent"]
    assert reminder_of(client, tenant_a, call, "email")["attempts"] == 1


def test_a_canceled_calls_reminder_is_canceled_and_sends_nothing(mail_app, sink, tenant_a):
    from plugins.calls import tasks

    app = mail_app()
    client = app.test_client()
    job, _, call = scheduled_call(client, tenant_a, **EMAIL_NOW)
    reminder_id = reminder_of(client, tenant_a, call, "email")["id"]
    client.patch(
        f"/v1/jobs/{job['id']}/scheduling", json={"scheduling": False}, headers=tenant_a.headers
    )
    assert run_due(app) == "0 scheduled call(s) run, 0 reminder(s) sent"
    with app.app_context():
        assert (
            tasks.send_reminder(reminder_id) == "not claimed"
        )  # its RQ job, had it not been dropped
    assert sink.messages == []
    canceled = get_call(client, tenant_a, call["id"])
    assert canceled["status"] == "canceled"
    (reminder,) = canceled["reminders"]
    assert (
        reminder["status"] == "canceled"
        and "scheduling was disabled" in reminder["error"]
        and reminder["sent_at"] is None
    )


def test_a_reminder_due_after_its_call_was_placed_is_canceled_not_sent(mail_app, sink, tenant_a):
    app = mail_app()
    client = app.test_client()
    _, _, call = scheduled_call(client, tenant_a, **EMAIL_NOW)
    with app.app_context(), database.connection_context():
        from plugins.calls.models import Call
        from plugins.calls.placing import place_call

        place_call(Call.get_by_id(call["id"]))  # the attempt went ahead before the reminder's turn
    assert run_due(app).endswith("0 reminder(s) sent")
    assert sink.messages == []
    reminder = reminder_of(client, tenant_a, call, "email")
    assert reminder["status"] == "canceled" and "the call is completed" in reminder["error"]


def test_a_transport_error_is_retried_before_the_call_and_then_recorded(make_app, tenant_a):
    app = make_app(
        SMTP_HOST="127.0.0.1",
        SMTP_PORT=closed_port(),
        SMTP_STARTTLS=False,
        REMINDER_RETRY_SCHEDULE=[0, 0],
    )
    client = app.test_client()
    _, _, call = scheduled_call(client, tenant_a, **EMAIL_NOW)
    assert run_due(app).endswith("0 reminder(s) sent")
    first = reminder_of(client, tenant_a, call, "email")
    assert first["status"] == "pending" and first["attempts"] == 1
    assert "attempt 1 failed" in first["error"] and "ConnectionRefusedError" in first["error"]
    run_due(app)
    assert reminder_of(client, tenant_a, call, "email")["attempts"] == 2
    run_due(app)
    failed = reminder_of(client, tenant_a, call, "email")
    assert failed["status"] == "failed" and failed["attempts"] == 3 and failed["sent_at"] is None
    assert (
        failed["error"].startswith("not sent after 3 attempt(s)")
        and "ConnectionRefusedError" in failed["error"]
    )
    assert (
        get_call(client, tenant_a, call["id"])["status"] == "queued"
    )  # the call itself still goes ahead


def test_a_retry_that_finds_the_server_back_sends(make_app, tenant_a):
    app = make_app(
        SMTP_HOST="127.0.0.1",
        SMTP_PORT=closed_port(),
        SMTP_STARTTLS=False,
        REMINDER_RETRY_SCHEDULE=[0],
    )
    client = app.test_client()
    _, _, call = scheduled_call(client, tenant_a, **EMAIL_NOW)
    run_due(app)
    with SmtpSink() as sink:
        app.extensions["hirekit_notifier"] = SmtpNotifier(
            "127.0.0.1", sink.port, sender="screening@hirekit.test", starttls=False
        )  # the relay is back
        assert run_due(app).endswith("1 reminder(s) sent")
        assert len(sink.messages) == 1
    sent = reminder_of(client, tenant_a, call, "email")
    assert sent["status"] == "sent" and sent["attempts"] == 2 and sent["error"] is None


def test_no_retry_is_planned_past_the_call(make_app, tenant_a):
    app = make_app(
        SMTP_HOST="127.0.0.1",
        SMTP_PORT=closed_port(),
        SMTP_STARTTLS=False,
        REMINDER_RETRY_SCHEDULE=[86400],
    )
    client = app.test_client()
    _, _, call = scheduled_call(
        client, tenant_a, **EMAIL_NOW
    )  # the call is 10 hours away, the retry would be in 24
    run_due(app)
    failed = reminder_of(client, tenant_a, call, "email")
    assert (
        failed["status"] == "failed"
        and failed["attempts"] == 1
        and "ConnectionRefusedError" in failed["error"]
    )


def test_a_recipient_refused_for_now_is_retried_and_one_refused_for_good_fails_at_once(
    mail_app, sink, tenant_a
):
    app = mail_app(REMINDER_RETRY_SCHEDULE=[0, 0])
    client = app.test_client()
    _, _, later = scheduled_call(client, tenant_a, **EMAIL_NOW)
    sink.rcpt_reply = "450 4.2.0 greylisted, try again later"
    run_due(app)
    retried = reminder_of(client, tenant_a, later, "email")
    assert retried["status"] == "pending" and "450" in retried["error"]
    sink.rcpt_reply = None
    run_due(app)
    assert (
        reminder_of(client, tenant_a, later, "email")["status"] == "sent"
        and len(sink.messages) == 1
    )

    _, _, never = scheduled_call(client, tenant_a, **EMAIL_NOW)
    sink.rcpt_reply = "550 5.1.1 no such user"
    run_due(app)
    run_due(app)
    failed = reminder_of(client, tenant_a, never, "email")
    assert (
        failed["status"] == "failed"
        and failed["attempts"] == 1
        and "550" in failed["error"]
        and "refused" in failed["error"]
    )
    assert len(sink.messages) == 1


# ---- SMS
# --------------------------------------------------------------------------------------------------


@pytest.fixture
def messaging_api(httpserver):
    """Twilio's Messages.json create, answering as Twilio does (201 and the message resource);
    requests are kept."""
    httpserver.received = answer_creates(
        httpserver,
        MESSAGES_PATH,
        lambda form, n: {
            "sid": f"SM{n:032d}",
            "account_sid": ACCOUNT_SID,
            "to": form["To"],
            "from": form["From"],
            "body": form["Body"],
            "status": "queued",
            "direction": "outbound-api",
            "api_version": "2010-04-01",
            "num_segments": "1",
        },
    )
    return httpserver


def twilio_config(server) -> dict:
    return {
        "TELEPHONY": "twilio",
        "TWILIO_ACCOUNT_SID": ACCOUNT_SID,
        "TWILIO_AUTH_TOKEN": AUTH_TOKEN,
        "TWILIO_FROM_NUMBER": FROM_NUMBER,
        "TWILIO_CALLBACK_BASE_URL": "https://hirekit.example.com",
        "TWILIO_API_BASE_URL": server.url_for("/"),
    }


def test_sms_reminders_go_through_twilios_messaging_api_from_the_configured_number(
    make_app, messaging_api, tenant_a
):
    app = make_app(TIMEZONE="Asia/Tokyo", **twilio_config(messaging_api))
    client = app.test_client()
    _, candidate, call = scheduled_call(
        client,
        tenant_a,
        job_fields={"title": "ICU Nurse", "client_name": "Mercy"},
        phone_no="+12125550100",
        **SMS_NOW,
    )  # New York, by its number
    assert run_due(app) == "0 scheduled call(s) run, 1 reminder(s) sent"
    (request,) = messaging_api.received
    assert (
        request.authorization.username == ACCOUNT_SID
        and request.authorization.password == AUTH_TOKEN
    )
    assert request.content_type.startswith("application/x-www-form-urlencoded")
    assert set(request.form) == {"To", "From", "Body"}
    assert request.form["To"] == candidate["phone_no"] and request.form["From"] == FROM_NUMBER
    body = request.form["Body"]
    assert (
        "ICU Nurse" in body
        and "Mercy" in body
        and "America/New_York" in body
        and "Reply STOP" in body
    )
    sent = reminder_of(client, tenant_a, call, "sms")
    assert sent["status"] == "sent" and sent["address"] == candidate["phone_no"] and sent["sent_at"]


def test_the_simulated_provider_keeps_the_sms(make_app, tenant_a):
    from plugins.calls.telephony import get_provider

    app = make_app()
    client = app.test_client()
    _, candidate, call = scheduled_call(client, tenant_a, **SMS_NOW)
    run_due(app)
    with app.app_context():
        (message,) = get_provider().messages
    assert message["to"] == candidate["phone_no"] and "Reply STOP" in message["body"]
    assert reminder_of(client, tenant_a, call, "sms")["status"] == "sent"


def test_twilio_refusing_an_unsubscribed_number_fails_the_reminder_and_opts_the_candidate_out(
    make_app, httpserver, tenant_a
):
    httpserver.expect_request(MESSAGES_PATH, method="POST").respond_with_json(
        {"code": 21610, "message": "Attempt to send to unsubscribed recipient", "status": 400},
        status=400,
    )
    app = make_app(REMINDER_RETRY_SCHEDULE=[0, 0], **twilio_config(httpserver))
    client = app.test_client()
    _, candidate, call = scheduled_call(client, tenant_a, **SMS_NOW)
    run_due(app)
    failed = reminder_of(client, tenant_a, call, "sms")
    assert failed["status"] == "failed" and failed["attempts"] == 1 and "21610" in failed["error"]
    assert (
        client.get(f"/v1/candidates/{candidate['id']}", headers=tenant_a.headers).json[
            "contact_opt_out"
        ]
        is True
    )
    assert get_call(client, tenant_a, call["id"])["status"] == "canceled"


def test_a_fixed_line_gets_no_sms_and_the_reminder_says_why(make_app, tenant_a):
    from plugins.calls.telephony import get_provider

    app = make_app()
    client = app.test_client()
    _, _, call = scheduled_call(client, tenant_a, phone_no="+442079460016", **SMS_NOW, **EMAIL_NOW)
    skipped = reminder_of(client, tenant_a, call, "sms")
    assert (
        skipped["status"] == "skipped"
        and "fixed line" in skipped["error"]
        and skipped["address"] == "+442079460016"
    )
    assert run_due(app).endswith("1 reminder(s) sent")  # the email still goes
    with app.app_context():
        assert list(get_provider().messages) == []


# ---- on the record
# -------------------------------------------------------------------------------------------------


def test_instant_calls_and_lists_carry_no_reminders_and_an_unknown_call_is_404(
    client, tenant_a, tenant_b
):
    from tests.call_factories import application_for, instant_call

    call = instant_call(client, tenant_a, application_for(client, tenant_a)).json
    assert get_call(client, tenant_a, call["id"])["reminders"] == []
    listed = client.get("/v1/calls?page=1&size=10", headers=tenant_a.headers).json["data"]
    assert "reminders" not in listed[0]
    assert client.get(f"/v1/calls/{call['id']}", headers=tenant_b.headers).status_code == 404


def test_mcp_get_call_shows_the_reminders_as_rest_does(make_app, tenant_a):
    app = make_app()
    client = app.test_client()
    _, _, call = scheduled_call(client, tenant_a, **EMAIL_NOW, **SMS_NOW)
    run_due(app)
    read = tool_result(client, tenant_a, "get_call", {"call_id": call["id"]})["structuredContent"]
    assert read == get_call(client, tenant_a, call["id"])
    assert sorted((r["channel"], r["status"]) for r in read["reminders"]) == [
        ("email", "sent"),
        ("sms", "sent"),
    ]
    jsonschema.validate(read, listed_tools(client, tenant_a)["get_call"]["outputSchema"])


def test_the_rq_worker_sends_each_reminder_once_at_its_time(mail_app, sink, redis_url, tenant_a):
    from tests.webhook_helpers import work_until

    app = mail_app(REDIS_URL=redis_url)
    client = app.test_client()
    _, _, call = scheduled_call(client, tenant_a, **EMAIL_NOW, **SMS_NOW)
    work_until(
        app,
        lambda: all(
            r["status"] == "sent" for r in get_call(client, tenant_a, call["id"])["reminders"]
        ),
    )
    assert run_due(app).endswith(
        "0 reminder(s) sent"
    )  # the cron sweep beside a worker finds nothing left
    assert len(sink.messages) == 1


def test_the_workers_reaper_pass_sends_a_reminder_whose_job_was_lost(make_app, redis_url, tenant_a):
    from plugins.calls import dispatch, tasks
    from plugins.calls.telephony import get_provider

    app = make_app(REDIS_URL=redis_url)
    client = app.test_client()
    _, _, call = scheduled_call(client, tenant_a, **SMS_NOW)
    reminder = reminder_of(client, tenant_a, call, "sms")
    with app.app_context():
        app.extensions["hirekit_queue"].cancel_scheduled(
            [dispatch.reminder_job_id(reminder["id"], 0)], queue="calls"
        )
        tasks.reap_stalled_calls()
        assert len(get_provider().messages) == 1
    assert reminder_of(client, tenant_a, call, "sms")["status"] == "sent"


def test_a_reminder_left_claimed_by_a_dead_run_is_failed_not_sent_again(make_app, tenant_a):
    from plugins.calls.models import CallReminder
    from plugins.calls.telephony import get_provider

    app = make_app(REMINDER_LEASE_SECONDS=60)
    client = app.test_client()
    _, _, call = scheduled_call(client, tenant_a, **SMS_NOW)
    reminder = reminder_of(client, tenant_a, call, "sms")
    with (
        app.app_context(),
        database.connection_context(),
    ):  # a run claimed it two minutes ago, then its process died
        claimed_at = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None) - dt.timedelta(minutes=2)
        CallReminder.update(status="sending", attempts=1, claimed_at=claimed_at).where(
            CallReminder.id == reminder["id"]
        ).execute()
    assert run_due(app).endswith("0 reminder(s) sent")
    failed = reminder_of(client, tenant_a, call, "sms")
    assert failed["status"] == "failed" and "may have gone" in failed["error"]
    with app.app_context():
        assert list(get_provider().messages) == []


def test_deleting_a_call_deletes_its_reminders(make_app, tenant_a):
    """Erasure deletes calls: the reminders' foreign key is ON DELETE CASCADE in the migrated
    schema."""
    from plugins.calls.models import Call, CallReminder

    app = make_app()
    client = app.test_client()
    _, _, call = scheduled_call(client, tenant_a, **EMAIL_NOW, **SMS_NOW)
    with app.app_context(), database.connection_context():
        assert CallReminder.select().where(CallReminder.call == call["id"]).count() == 2
        Call.delete().where(Call.id == call["id"]).execute()
        assert CallReminder.select().where(CallReminder.call == call["id"]).count() == 0
