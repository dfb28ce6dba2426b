"""A scheduled series moves on by reacting to its attempts' call_activity events once each attempt's
end has committed (app.data.events' once_committed listeners): a receiver hears an attempt end
before the next attempt is queued, and an event whose write rolls back moves nothing."""

import pytest

from app.data import events
from app.data.db import database
from plugins.calls.lifecycle import CALL_ACTIVITY
from tests.call_factories import create_application, create_candidate
from tests.test_call_scheduling import scheduled_job
from tests.webhook_helpers import create_webhook, verified_payload


def test_a_receiver_hears_an_unreached_attempt_end_before_the_next_attempt_is_queued(
    app, client, tenant_a, httpserver
):
    httpserver.expect_request("/hook").respond_with_data("ok")
    webhook = create_webhook(
        client,
        tenant_a,
        httpserver.url_for("/hook"),
        triggered_event="call_activity",
        fields=["id", "status", "attempt"],
    )
    job = scheduled_job(client, tenant_a, total_attempts=2)
    create_application(
        client, tenant_a, job, create_candidate(client, tenant_a, phone_no="+14155550107")
    )  # no answer
    assert app.test_cli_runner().invoke(args=["calls", "run-due"]).exit_code == 0

    heard = [
        (p["attempt"], p["status"])
        for p in (verified_payload(r, webhook["secret"]) for r, _ in httpserver.log)
    ]
    assert heard[0] == (1, "queued") and heard[-2:] == [(1, "no_answer"), (2, "queued")], heard


def test_a_once_committed_listener_runs_after_the_commit_and_never_for_a_rollback(app, tenant_a):
    ran = []
    events.add_listener(
        app,
        lambda event: ran.append((event.payload["id"], database.in_transaction())),
        once_committed=True,
    )
    with app.app_context(), database.connection_context():
        with pytest.raises(RuntimeError), database.atomic():
            events.emit(tenant_a.id, CALL_ACTIVITY, {"id": "rolled-back"})
            raise RuntimeError("the write fails")
        with database.atomic():
            events.emit(tenant_a.id, CALL_ACTIVITY, {"id": "committed"})
            assert ran == []
    assert ran == [("committed", False)]
