"""Operators' view: one structured log line per request (tenant, never the key) and Prometheus
metrics behind a token."""

import json
import logging

from app.server.observability import JsonFormatter
from tests.factories import create_job


def test_each_request_logs_route_status_duration_and_tenant_but_not_the_key(
    make_app, make_tenant, caplog
):
    app = make_app(LOG_LEVEL="INFO")
    tenant = make_tenant("logged")
    client = app.test_client()
    caplog.set_level(logging.INFO, logger="hirekit")
    job = create_job(client, tenant)
    client.get(f"/v1/jobs/{job['id']}", headers=tenant.headers)
    client.get(
        "/v1/jobs/nope", headers={"Authorization": "Bearer hk_wrong_key_that_must_not_be_logged"}
    )
    lines = [r for r in caplog.records if r.name == "hirekit.request"]
    read = next(r for r in lines if r.route == "/v1/jobs/<job_id>" and r.status == 200)
    assert (
        read.tenant_id == "logged"
        and read.method == "GET"
        and read.duration_ms >= 0
        and len(read.request_id) == 32
    )
    formatted = "\n".join(JsonFormatter().format(r) for r in caplog.records)
    assert tenant.key not in formatted and "hk_wrong_key_that_must_not_be_logged" not in formatted
    entry = json.loads(JsonFormatter().format(read))
    assert (
        entry["route"] == "/v1/jobs/<job_id>"
        and entry["status"] == 200
        and entry["tenant_id"] == "logged"
    )


def test_metrics_are_off_by_default(client):
    assert client.get("/metrics").status_code == 404


def test_metrics_need_their_token_and_count_requests(make_app, make_tenant):
    app = make_app(METRICS_ENABLED=True, METRICS_TOKEN="scrape-secret")
    tenant = make_tenant("metered")
    client = app.test_client()
    create_job(client, tenant)
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers=tenant.headers).status_code == 401
    scraped = client.get("/metrics", headers={"Authorization": "Bearer scrape-secret"})
    assert scraped.status_code == 200
    text = scraped.get_data(as_text=True)
    assert 'hirekit_http_requests_total{method="POST",route="/v1/jobs",status="201"}' in text
    assert "hirekit_http_request_duration_seconds_bucket" in text
    assert "hirekit_queue_depth" in text


def test_queue_depth_is_reported_per_queue(make_app, redis_url):
    from app.background.queue import enqueue
    from tests.test_queue import bump_counter

    app = make_app(
        METRICS_ENABLED=True,
        METRICS_TOKEN="t",
        REDIS_URL=redis_url,
        PLUGINS=["jobs"],
        QUEUES=["webhooks", "default"],  # named: with jobs alone, the workers' default is `default`
    )
    with app.app_context():
        enqueue(bump_counter, "nobody", queue="webhooks")
    text = (
        app.test_client()
        .get("/metrics", headers={"Authorization": "Bearer t"})
        .get_data(as_text=True)
    )
    assert 'hirekit_queue_depth{queue="webhooks"} 1.0' in text
