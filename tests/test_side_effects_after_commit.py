"""Side effects of a write (webhook deliveries, calls, any job) start after its transaction commits,
and never for a write that rolls back: inline (embedded mode) and on RQ alike."""

import threading

import pytest
import requests
from pytest_httpserver import HTTPServer
from werkzeug import Response

from app.data import events
from app.data.db import database
from app.errors import Conflict
from app.background.queue import enqueue, task
from tests.factories import create_application, create_candidate, create_job, job_body
from tests.test_fault_drills import gunicorn_server  # noqa: F401 - the fixture: the app under gunicorn, 2 workers
from tests.webhook_helpers import create_webhook, work_until

MOVE = {"source_application_status": "interviewing", "application_stage": "ACTIVE"}
ran: list[str] = []


@task
def record_run(label: str) -> None:
    ran.append(label)


def refuse_after_fan_out(event):
    """An event listener that fails the emitting write after the webhook fan-out already made its
    deliveries."""
    raise Conflict("refused by a later listener")


def test_inline_job_enqueued_in_a_transaction_runs_only_after_the_commit(app):
    ran.clear()
    with app.app_context(), database.connection_context():
        with database.atomic():
            job = enqueue(record_run, "committed")
            assert ran == [] and job.get_status() == "deferred"
        assert ran == ["committed"] and job.get_status() == "finished"


def test_inline_job_of_a_rolled_back_transaction_or_savepoint_never_runs(app):
    ran.clear()
    with app.app_context(), database.connection_context():
        with pytest.raises(RuntimeError), database.atomic():
            enqueue(record_run, "rolled back")
            raise RuntimeError("the write fails")
        with database.atomic():
            enqueue(record_run, "outer")
            with pytest.raises(RuntimeError), database.atomic():  # a savepoint
                enqueue(record_run, "savepoint rolled back")
                raise RuntimeError("the nested write fails")
            with database.atomic():
                enqueue(record_run, "savepoint released")
    assert ran == ["outer", "savepoint released"]


def test_a_write_that_fails_after_emitting_sends_no_webhook_inline(
    app, client, tenant_a, httpserver
):
    httpserver.expect_request("/hook").respond_with_data("ok")
    application = create_application(client, tenant_a)
    create_webhook(
        client, tenant_a, httpserver.url_for("/hook"), fields=["id", "source_application_status"]
    )
    events.add_listener(app, refuse_after_fan_out)

    refused = client.patch(
        f"/v1/applications/{application['id']}", json=MOVE, headers=tenant_a.headers
    )

    assert refused.status_code == 409, refused.json
    assert httpserver.log == [], "a webhook was sent for a write that rolled back"
    stored = client.get(f"/v1/applications/{application['id']}", headers=tenant_a.headers).json
    assert stored["source_application_status"] != "interviewing"


def test_a_write_that_fails_after_emitting_sends_no_webhook_on_redis(
    make_app, tenant_a, httpserver, redis_url
):
    from redis import Redis

    httpserver.expect_request("/hook").respond_with_data("ok")
    app = make_app(REDIS_URL=redis_url)
    client = app.test_client()
    application = create_application(client, tenant_a)
    webhook = create_webhook(
        client, tenant_a, httpserver.url_for("/hook"), fields=["id", "source_application_status"]
    )
    events.add_listener(app, refuse_after_fan_out)

    assert (
        client.patch(
            f"/v1/applications/{application['id']}", json=MOVE, headers=tenant_a.headers
        ).status_code
        == 409
    )
    # no mail, no doorbell left ringing
    assert Redis.from_url(redis_url).keys(f"hirekit:webhooks:*{webhook['id']}") == []
    work_until(app, lambda: True, timeout=1)
    assert httpserver.log == []


@pytest.mark.slow
def test_a_slow_webhook_receiver_does_not_hold_up_another_clients_write(
    gunicorn_server,  # noqa: F811
    client,
    tenant_a,
):
    """Embedded mode sends webhooks inline: a receiver holding the send open must not keep the
    write's transaction (on SQLite, the database's one write lock) open meanwhile. The receiver
    answers only once the other client's write has answered (or after 60 s), so the write is shown
    not to wait by what has finished, not by a time."""
    arrived, release = threading.Event(), threading.Event()

    def slow_receiver(request):
        arrived.set()
        release.wait(60)
        return Response("ok")

    receiver = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    receiver.expect_request("/hook").respond_with_handler(slow_receiver)
    receiver.start()
    try:
        application = create_application(
            client, tenant_a, create_candidate(client, tenant_a), create_job(client, tenant_a)
        )
        create_webhook(
            client, tenant_a, receiver.url_for("/hook"), fields=["id", "source_application_status"]
        )
        base, _ = gunicorn_server(
            HIREKIT_WEBHOOK_ALLOW_PRIVATE="1",
            HIREKIT_RATE_LIMIT="100000/minute",
            HIREKIT_WEBHOOK_TIMEOUT="60",
        )
        slow_write = threading.Thread(
            target=requests.patch,
            args=(f"{base}/v1/applications/{application['id']}",),
            kwargs={"json": MOVE, "headers": tenant_a.headers, "timeout": 30},
        )
        slow_write.start()
        assert arrived.wait(10), "the webhook never reached the receiver"
        other = requests.post(
            f"{base}/v1/jobs",
            json=job_body(source_id="meanwhile"),
            headers=tenant_a.headers,
            timeout=50,
        )
        still_sending = slow_write.is_alive() and not release.is_set()
        release.set()
        slow_write.join()
    finally:
        release.set()
        receiver.clear()
        receiver.stop()
    assert other.status_code == 201, other.text
    assert still_sending, "another client's write waited behind the webhook to the slow receiver"
