"""Scheduled calls end to end on Redis + RQ: armed by application events, placed in the window,
retried, reminded, canceled."""

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from app.outbound.notify import Notifier
from tests.call_factories import create_application, create_candidate, create_job_with_questions
from tests.webhook_helpers import work_until

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

ALWAYS_OPEN = {
    "window_start_time": "00:00:00",
    "window_end_time": "23:59:59",
    "days_of_week": [1, 2, 3, 4, 5, 6, 7],
    "daily_attempts": 5,
    "total_attempts": 3,
    "retry_interval": 0,
    "call_schedule_minutes": 0,
}


class RecordingNotifier(Notifier):
    def __init__(self):
        self.sent = []

    def send_email(self, to, subject, body, html=None):
        self.sent.append(("email", to, body))


@pytest.fixture
def rq_app(make_app, redis_url):
    app = make_app(REDIS_URL=redis_url)
    app.extensions["hirekit_notifier"] = RecordingNotifier()
    return app


def scheduled_job(client, tenant, *, scheduling=True, job_fields=None, **setting) -> dict:
    job = create_job_with_questions(client, tenant, **(job_fields or {}))
    response = client.put(
        f"/v1/jobs/{job['id']}/schedule-setting",
        json={**ALWAYS_OPEN, **setting},
        headers=tenant.headers,
    )
    assert response.status_code == 200, response.json
    response = client.patch(
        f"/v1/jobs/{job['id']}/scheduling", json={"scheduling": scheduling}, headers=tenant.headers
    )
    assert response.status_code == 200, response.json
    return job


def calls_of(client, tenant, application) -> list[dict]:
    response = client.get(
        f"/v1/calls?page=1&size=50&application_id={application['id']}", headers=tenant.headers
    )
    assert response.status_code == 200
    return response.json["data"]


def statuses(client, tenant, application) -> list[str]:
    return [c["status"] for c in calls_of(client, tenant, application)]


def test_an_active_application_on_a_scheduled_job_gets_a_call_in_the_window(rq_app, tenant_a):
    client = rq_app.test_client()
    job = scheduled_job(client, tenant_a)
    application = create_application(client, tenant_a, job, create_candidate(client, tenant_a))
    (call,) = calls_of(client, tenant_a, application)
    assert call["status"] == "queued" and call["trigger"] == "scheduled" and call["scheduled_for"]
    work_until(rq_app, lambda: statuses(client, tenant_a, application) == ["completed"])
    (call,) = calls_of(client, tenant_a, application)
    assert call["attempt"] == 1 and call["assessment"]["recommendation"] in (
        "advance",
        "hold",
        "reject",
    )


def test_unreached_candidates_are_retried_up_to_total_attempts(rq_app, tenant_a):
    client = rq_app.test_client()
    job = scheduled_job(client, tenant_a, total_attempts=3)
    application = create_application(
        client, tenant_a, job, create_candidate(client, tenant_a, phone_no="+14155550108")
    )
    work_until(rq_app, lambda: statuses(client, tenant_a, application) == ["busy"] * 3, timeout=20)
    assert [c["attempt"] for c in calls_of(client, tenant_a, application)] == [1, 2, 3]


def test_daily_attempts_push_the_rest_to_the_next_day(rq_app, tenant_a):
    client = rq_app.test_client()
    job = scheduled_job(client, tenant_a, daily_attempts=1, total_attempts=3)
    candidate = create_candidate(client, tenant_a, phone_no="+14155550107")
    application = create_application(client, tenant_a, job, candidate)
    work_until(
        rq_app,
        lambda: (
            statuses(client, tenant_a, application)[:1] == ["no_answer"]
            and len(statuses(client, tenant_a, application)) == 2
        ),
    )
    first, second = calls_of(client, tenant_a, application)
    zone = ZoneInfo(candidate["timezone"])  # days are the candidate's local days

    def local_day(instant: str):
        return dt.datetime.fromisoformat(instant.replace("Z", "+00:00")).astimezone(zone).date()

    assert second["status"] == "queued" and local_day(second["scheduled_for"]) > local_day(
        first["ended_at"]
    )


def test_voicemail_only_when_enabled(rq_app, tenant_a):
    client = rq_app.test_client()
    for enabled in (True, False):
        job = scheduled_job(client, tenant_a, total_attempts=1, voicemail_enabled=enabled)
        application = create_application(
            client, tenant_a, job, create_candidate(client, tenant_a, phone_no="+14155550117")
        )
        work_until(rq_app, lambda: statuses(client, tenant_a, application) == ["no_answer"])
        (call,) = calls_of(client, tenant_a, application)
        assert call["voicemail_left"] is enabled


def test_passive_applications_wait_until_moved_to_active(rq_app, tenant_a):
    client = rq_app.test_client()
    job = scheduled_job(client, tenant_a, call_schedule_minutes=600)
    application = create_application(
        client, tenant_a, job, create_candidate(client, tenant_a), stage="PASSIVE"
    )
    assert calls_of(client, tenant_a, application) == []
    moved = client.patch(
        f"/v1/applications/{application['id']}",
        json={"source_application_status": "screening", "application_stage": "active"},
        headers=tenant_a.headers,
    )
    assert moved.status_code == 200, moved.json
    assert statuses(client, tenant_a, application) == ["queued"]
    again = client.patch(
        f"/v1/applications/{application['id']}",
        json={"source_application_status": "screening-2", "application_stage": "ACTIVE"},
        headers=tenant_a.headers,
    )
    # still ACTIVE: no new series
    assert again.status_code == 200 and statuses(client, tenant_a, application) == ["queued"]


def test_jobs_without_scheduling_get_no_calls(rq_app, tenant_a):
    client = rq_app.test_client()
    job = scheduled_job(client, tenant_a, scheduling=False)
    application = create_application(client, tenant_a, job, create_candidate(client, tenant_a))
    assert calls_of(client, tenant_a, application) == []


def test_disabling_scheduling_cancels_pending_attempts(rq_app, tenant_a):
    client = rq_app.test_client()
    job = scheduled_job(client, tenant_a, call_schedule_minutes=600)
    application = create_application(client, tenant_a, job, create_candidate(client, tenant_a))
    assert statuses(client, tenant_a, application) == ["queued"]
    client.patch(
        f"/v1/jobs/{job['id']}/scheduling", json={"scheduling": False}, headers=tenant_a.headers
    )
    (call,) = calls_of(client, tenant_a, application)
    assert call["status"] == "canceled" and "disabled" in call["error"]
    assert instant_ok(client, tenant_a, application)


def instant_ok(client, tenant, application) -> bool:
    return (
        client.post(
            f"/v1/applications/{application['id']}/instant-call", headers=tenant.headers
        ).status_code
        == 202
    )


def test_reminders_go_by_email_and_sms_before_the_call(rq_app, tenant_a):
    from plugins.calls.telephony import get_provider

    client = rq_app.test_client()
    job = scheduled_job(
        client,
        tenant_a,
        call_schedule_minutes=600,
        email_enabled=True,
        email_notify_minutes=600,
        sms_enabled=True,
        sms_notify_minutes=600,
    )
    candidate = create_candidate(client, tenant_a)
    create_application(client, tenant_a, job, candidate)
    notifier = rq_app.extensions["hirekit_notifier"]
    with rq_app.app_context():
        texts = get_provider().messages  # the simulated provider keeps what it "sent"
    work_until(rq_app, lambda: len(notifier.sent) == 1 and len(texts) == 1)
    ((channel, to, body),) = notifier.sent
    assert channel == "email" and to == candidate["email"] and job["title"] in body
    (text,) = texts
    assert text["to"] == candidate["phone_no"] and job["title"] in text["body"]
