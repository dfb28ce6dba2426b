"""The calls reaper: a call left ringing or in progress (dead worker, lost provider callbacks) ends
failed and unblocks."""

import time

import pytest

from plugins.calls.models import IN_PROGRESS, RINGING
from plugins.calls.telephony import Progress, TelephonyProvider
from tests.call_factories import application_for, create_application, create_candidate, instant_call
from tests.test_call_scheduling import scheduled_job
from tests.webhook_helpers import create_webhook, verified_payload

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

STALL = 0.3


class SilentProvider(TelephonyProvider):
    """Answers like an asynchronous provider, then never calls back: the call stays in progress."""

    name = "silent"

    def place(self, script, report):
        report(Progress(RINGING))
        report(Progress(IN_PROGRESS))
        return "silent-1"


@pytest.fixture
def silent_app(make_app):
    app = make_app(CALL_STALL_SECONDS=STALL)
    app.extensions["hirekit_telephony"] = SilentProvider()
    return app


def get_call(client, tenant, call_id) -> dict:
    return client.get(f"/v1/calls/{call_id}", headers=tenant.headers).json


def run_cli(app, *args) -> str:
    result = app.test_cli_runner().invoke(args=["calls", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_a_call_with_no_news_for_the_stall_time_fails_and_the_application_can_be_called_again(
    silent_app, tenant_a, httpserver
):
    httpserver.expect_request("/calls").respond_with_data("ok")
    client = silent_app.test_client()
    webhook = create_webhook(
        client,
        tenant_a,
        httpserver.url_for("/calls"),
        triggered_event="call_activity",
        fields=["id", "status"],
    )
    application = application_for(client, tenant_a)
    call = instant_call(client, tenant_a, application).json
    assert get_call(client, tenant_a, call["id"])["status"] == "in_progress"
    assert instant_call(client, tenant_a, application).status_code == 409
    assert run_cli(silent_app, "reap").startswith("0 ")  # still within the stall time

    time.sleep(STALL + 0.1)
    assert run_cli(silent_app, "reap").startswith("1 ")
    reaped = get_call(client, tenant_a, call["id"])
    assert reaped["status"] == "failed" and "no progress" in reaped["error"] and reaped["ended_at"]
    statuses = [
        verified_payload(request, webhook["secret"])["status"] for request, _ in httpserver.log
    ]
    assert statuses == ["queued", "ringing", "in_progress", "failed"]
    assert instant_call(client, tenant_a, application).status_code == 202


def test_a_stalled_scheduled_attempt_is_retried_by_the_series(silent_app, tenant_a):
    client = silent_app.test_client()
    job = scheduled_job(client, tenant_a, total_attempts=2)
    application = create_application(client, tenant_a, job, create_candidate(client, tenant_a))
    # no Redis: the cron command places due attempts
    assert run_cli(silent_app, "run-due").startswith("1 ")

    time.sleep(STALL + 0.1)
    run_cli(silent_app, "reap")
    calls = client.get(
        f"/v1/calls?page=1&size=10&application_id={application['id']}", headers=tenant_a.headers
    ).json["data"]
    assert [(c["attempt"], c["status"]) for c in calls] == [(1, "failed"), (2, "queued")]


def test_an_instant_call_whose_job_was_lost_fails_and_unblocks_the_application(
    silent_app, tenant_a, monkeypatch
):
    import plugins.calls.tasks as call_tasks

    client = silent_app.test_client()
    application = application_for(client, tenant_a)
    with monkeypatch.context() as patched:
        # the worker died before the call started
        patched.setattr(call_tasks, "run_call", lambda call_id: "lost")
        call = instant_call(client, tenant_a, application).json
    assert get_call(client, tenant_a, call["id"])["status"] == "queued"
    # still within the stall time: its job may just be late
    assert run_cli(silent_app, "reap").startswith("0 ")

    time.sleep(STALL + 0.1)
    assert run_cli(silent_app, "reap").startswith("1 ")
    lost = get_call(client, tenant_a, call["id"])
    assert lost["status"] == "failed" and "never started" in lost["error"]
    assert instant_call(client, tenant_a, application).status_code == 202
    # the lost job, turning up late, dials nobody
    assert call_tasks.run_call(call["id"]) == "skipped"


def test_a_scheduled_attempt_nobody_started_fails_and_the_series_moves_on(silent_app, tenant_a):
    client = silent_app.test_client()
    job = scheduled_job(client, tenant_a, total_attempts=2)
    application = create_application(client, tenant_a, job, create_candidate(client, tenant_a))
    calls_of = f"/v1/calls?page=1&size=10&application_id={application['id']}"
    assert [c["status"] for c in client.get(calls_of, headers=tenant_a.headers).json["data"]] == [
        "queued"
    ]

    time.sleep(STALL + 0.1)  # due, and nobody ran `calls run-due` (or its job was lost)
    assert run_cli(silent_app, "reap").startswith("1 ")
    calls = client.get(calls_of, headers=tenant_a.headers).json["data"]
    assert [(c["attempt"], c["status"]) for c in calls] == [(1, "failed"), (2, "queued")]
    assert "never started" in calls[0]["error"]
