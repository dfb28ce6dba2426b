"""Who sends stalled webhook deliveries (plugins.webhooks.dispatch.reap): without Redis the reap
sends them itself, one at a time; on Redis it hands each webhook's to one drain job."""

import time

from werkzeug import Response

from app.data.db import database
from plugins.webhooks.models import WebhookDelivery
from tests.webhook_helpers import create_webhook, emit, work_until


def reap(app) -> str:
    result = app.test_cli_runner().invoke(args=["webhooks", "reap"])
    assert result.exit_code == 0, result.output
    return result.output


def statuses(app) -> list[str]:
    with app.app_context(), database.connection_context():
        return [delivery.status for delivery in WebhookDelivery.select()]


def test_without_redis_the_reap_sends_a_due_retry_itself(make_app, tenant_a, httpserver):
    answers = iter((500, 200))
    httpserver.expect_request("/hook").respond_with_handler(
        lambda request: Response("", status=next(answers))
    )
    app = make_app(WEBHOOK_RETRY_SCHEDULE=[0.1], WEBHOOK_RETRY_JITTER=0.0)
    create_webhook(app.test_client(), tenant_a, httpserver.url_for("/hook"))
    emit(app, tenant_a)
    # failed once, inline, waiting for its retry
    assert statuses(app) == ["pending"] and len(httpserver.log) == 1
    time.sleep(0.2)
    assert reap(app).startswith("1 ")
    assert statuses(app) == ["succeeded"] and len(httpserver.log) == 2


def test_on_redis_the_reap_enqueues_one_drain_for_a_webhooks_stalled_deliveries(
    make_app, redis_url, tenant_a, httpserver
):
    httpserver.expect_request("/hook").respond_with_data("ok")
    app = make_app(REDIS_URL=redis_url, WEBHOOK_LEASE_GRACE=0.0)
    create_webhook(app.test_client(), tenant_a, httpserver.url_for("/hook"))
    emit(app, tenant_a), emit(app, tenant_a)
    queue = app.extensions["hirekit_queue"].queue("webhooks")
    with app.app_context():
        queue.empty()  # the drain the emits woke is lost: the reap must find their deliveries
        time.sleep(0.01)
        assert reap(app).startswith("2 ")
        assert [job.func_name for job in queue.jobs] == ["plugins.webhooks.tasks.drain_webhook"]
    work_until(
        app, lambda: [d.status for d in WebhookDelivery.select()] == ["succeeded", "succeeded"]
    )
    assert len(httpserver.log) == 2
