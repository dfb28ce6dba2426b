"""A job is handed to its queue (run inline, pushed to RQ, scheduled, or mailed to a webhook's
drain) only once the transaction that wrote the rows it names has committed: so the call and webhook
jobs read their rows once, with no wait for them to become visible (the visibility waits they once
had are gone)."""

from __future__ import annotations

import threading

import pytest

from app.data.db import database
from plugins.applications.services import update_application
from plugins.calls import services
from plugins.calls.models import Call, CallReminder
from plugins.webhooks.models import WebhookDelivery
from tests.call_factories import application_for, create_application, create_candidate
from tests.test_call_scheduling import scheduled_job
from tests.webhook_helpers import create_webhook

CALL_JOBS = (
    "plugins.calls.tasks.run_call",
    "plugins.calls.tasks.run_scheduled_call",
    "plugins.calls.tasks.send_reminder",
)
# the row each job names
JOB_ROWS = {"run_call": Call, "run_scheduled_call": Call, "send_reminder": CallReminder}


def visible_elsewhere(model, ident) -> bool:
    """Whether another connection (another thread's, as a worker's would be) sees the row."""
    seen = []

    def look():
        with database.connection_context():
            seen.append(model.select().where(model.id == ident).exists())

    reader = threading.Thread(target=look)
    reader.start()
    reader.join(10)
    return seen[0]


@pytest.fixture
def handed_over(monkeypatch):
    """(job or mail, row id, visible elsewhere at that moment) for every call job and webhook
    delivery handed over."""
    import plugins.calls.tasks as call_tasks
    import plugins.webhooks.tasks as webhook_tasks
    import plugins.webhooks.wakeups as wakeups
    from rq import Queue

    seen = []

    def watch(module, name, model):
        job = getattr(module, name)

        def watched(row_id, *args, **kwargs):
            seen.append((name, row_id, visible_elsewhere(model, row_id)))
            return job(row_id, *args, **kwargs)

        monkeypatch.setattr(module, name, watched)

    for name, model in JOB_ROWS.items():  # inline: the job runs now
        watch(call_tasks, name, model)
    watch(webhook_tasks, "deliver_webhook", WebhookDelivery)

    def pushed(method):
        original = getattr(Queue, method)

        def push(self, job, *args, **kwargs):
            if job.func_name in CALL_JOBS:
                model = JOB_ROWS[job.func_name.rpartition(".")[2]]
                seen.append((job.func_name, job.args[0], visible_elsewhere(model, job.args[0])))
            return original(self, job, *args, **kwargs)

        monkeypatch.setattr(Queue, method, push)

    pushed("enqueue_job")  # RQ: the job is pushed for a worker now
    pushed("schedule_job")  # RQ: the job is scheduled for later
    post = wakeups.post

    # RQ: a drain, running or to come, reads the webhook's mailbox
    def mailed(webhook_id, delivery_ids):
        seen.extend(("mail", i, visible_elsewhere(WebhookDelivery, i)) for i in delivery_ids)
        return post(webhook_id, delivery_ids)

    monkeypatch.setattr(wakeups, "post", mailed)
    return seen


def make_calls_inside_one_transaction(app, client, tenant, handed_over) -> None:
    """An instant call and a scheduled series' first attempt made inside one transaction: nothing is
    handed over, and no other connection sees the calls, until it commits."""
    application = application_for(client, tenant)
    job = scheduled_job(client, tenant, email_enabled=True, email_notify_minutes=5)
    waiting = create_application(
        client, tenant, job, create_candidate(client, tenant, phone_no="+14155550101"), "PASSIVE"
    )
    create_webhook(
        client,
        tenant,
        "http://127.0.0.1:9/hook",
        triggered_event="call_activity",
        fields=["id", "status"],
    )
    handed_over.clear()
    with app.app_context(), database.connection_context():
        with database.atomic():
            call = services.start_instant_call(tenant.id, application["id"])
            update_application(tenant.id, waiting["id"], {"application_stage": "ACTIVE"})
            # the probe sees what a worker would
            assert handed_over == [] and not visible_elsewhere(Call, call.id)


def test_inline_jobs_start_only_after_their_rows_commit(app, client, tenant_a, handed_over):
    make_calls_inside_one_transaction(app, client, tenant_a, handed_over)
    assert {name for name, _, _ in handed_over} == {"run_call", "deliver_webhook"}
    assert all(visible for _, _, visible in handed_over), handed_over


def test_rq_jobs_and_mail_are_handed_over_only_after_their_rows_commit(
    make_app, redis_url, tenant_a, handed_over
):
    app = make_app(REDIS_URL=redis_url)
    make_calls_inside_one_transaction(app, app.test_client(), tenant_a, handed_over)
    assert {name for name, _, _ in handed_over} == {*CALL_JOBS, "mail"}
    assert all(visible for _, _, visible in handed_over), handed_over
