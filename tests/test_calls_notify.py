"""Reminder email over SMTP (HIREKIT_SMTP_*), against a local SMTP server: login, headers, refusals,
the reminder path."""

import smtplib

import pytest

from app.outbound.notify import SmtpNotifier, get_notifier
from tests.call_factories import create_application, create_candidate
from tests.smtp_sink import SmtpSink
from tests.test_call_scheduling import scheduled_job
from tests.webhook_helpers import work_until

CREDENTIALS = ("hirekit", "s3cret-relay")


def smtp_config(sink: SmtpSink, **overrides) -> dict:
    config = {
        "SMTP_HOST": "127.0.0.1",
        "SMTP_PORT": sink.port,
        "SMTP_USERNAME": CREDENTIALS[0],
        "SMTP_PASSWORD": CREDENTIALS[1],
        "SMTP_FROM": "screening@hirekit.test",
        "SMTP_STARTTLS": False,
    }
    config.update(overrides)
    return config


def test_smtp_is_the_notifier_when_configured_and_logs_in_before_sending(make_app):
    with SmtpSink(credentials=CREDENTIALS) as sink:
        app = make_app(**smtp_config(sink))
        with app.app_context():
            notifier = get_notifier()
            assert isinstance(notifier, SmtpNotifier)
            notifier.send_email(
                "jane@example.com",
                "Screening call for ICU Nurse",
                "We will call you on Monday at 10:00.",
            )
        (received,) = sink.messages
    assert received.login == CREDENTIALS
    assert received.mail_from == "screening@hirekit.test" and received.recipients == [
        "jane@example.com"
    ]
    message = received.message
    assert message["From"] == "screening@hirekit.test" and message["To"] == "jane@example.com"
    assert message["Subject"] == "Screening call for ICU Nurse"
    assert message.get_content().strip() == "We will call you on Monday at 10:00."


def test_a_refused_login_raises_instead_of_dropping_the_email(make_app):
    with SmtpSink(credentials=CREDENTIALS) as sink:
        app = make_app(**smtp_config(sink, SMTP_PASSWORD="wrong"))
        with app.app_context(), pytest.raises(smtplib.SMTPAuthenticationError):
            get_notifier().send_email("jane@example.com", "Subject", "Body")
        assert sink.messages == []


def test_starttls_required_but_not_offered_sends_nothing_in_clear_text(make_app):
    with SmtpSink(credentials=CREDENTIALS) as sink:
        app = make_app(**smtp_config(sink, SMTP_STARTTLS=True))
        with app.app_context(), pytest.raises(smtplib.SMTPNotSupportedError):
            get_notifier().send_email("jane@example.com", "Subject", "Body")
        assert sink.messages == []


def test_a_scheduled_calls_email_reminder_arrives_over_smtp(make_app, redis_url, tenant_a):
    with SmtpSink(credentials=CREDENTIALS) as sink:
        app = make_app(REDIS_URL=redis_url, **smtp_config(sink))
        client = app.test_client()
        job = scheduled_job(
            client,
            tenant_a,
            call_schedule_minutes=600,
            email_enabled=True,
            email_notify_minutes=600,
        )
        candidate = create_candidate(client, tenant_a)
        create_application(client, tenant_a, job, candidate)
        work_until(app, lambda: len(sink.messages) == 1)
        (received,) = sink.messages
    assert received.recipients == [candidate["email"]]
    text = received.message.get_body(preferencelist=("plain",)).get_content()
    assert job["title"] in received.message["Subject"] and job["title"] in text
