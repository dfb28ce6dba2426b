"""A receiver's developer against a real receiver on 127.0.0.1: test events, the filtered delivery
log, and replay after an outage (inline here; on Redis and RQ workers where that differs), on SQLite
and PostgreSQL."""

from __future__ import annotations

import datetime as dt
import json
import re
import threading
import time
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from standardwebhooks import Webhook
from werkzeug import Response

from app.data.db import utcnow
from app.http.listing import shown_instant
from tests.webhook_helpers import (
    APPLICATION_RECORD,
    create_webhook,
    emit,
    verified_payload,
    work_until,
)
from tests.ports import free_port

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

PLAIN_SECRET = "correct horse battery staple"  # not whsec_: its UTF-8 bytes are the key
SAMPLE_ID = "00000000-0000-4000-8000-000000000000"


def iso(moment: dt.datetime) -> str:
    return moment.isoformat() + "Z"


def send_test(client, tenant, webhook):
    response = client.post(f"/v1/tenant-webhook/{webhook['id']}/test", headers=tenant.headers)
    assert response.status_code == 200, response.json
    return response.json


def replay(client, tenant, webhook, **body):
    return client.post(
        f"/v1/tenant-webhook/{webhook['id']}/replay", json=body, headers=tenant.headers
    )


def delivery_log(client, tenant, webhook, **filters) -> dict:
    query = "&".join(
        f"{name}={value}" for name, value in {"page": 1, "size": 50, **filters}.items()
    )
    response = client.get(
        f"/v1/tenant-webhook/{webhook['id']}/deliveries?{query}", headers=tenant.headers
    )
    assert response.status_code == 200, response.json
    return response.json


def received_ids(receiver) -> list[str]:
    return [request.headers["webhook-id"] for request, _ in receiver.log]


@pytest.fixture
def receiver(httpserver):
    httpserver.expect_request("/hook").respond_with_data("received")
    return httpserver


# ---- test events ------------------------------------------------------------


def test_a_test_event_arrives_signed_with_sample_values_and_is_answered_with_its_attempt(
    client, tenant_a, receiver
):
    webhook = create_webhook(
        client,
        tenant_a,
        receiver.url_for("/hook"),
        triggered_event="call_activity",
        fields=["id", "status", "candidate_id", "job_id"],
    )
    answer = send_test(client, tenant_a, webhook)
    ((request, _),) = receiver.log
    payload = verified_payload(request, webhook["secret"])
    assert payload == {
        "id": SAMPLE_ID,
        "status": "completed",
        "candidate_id": SAMPLE_ID,
        "job_id": SAMPLE_ID,
        "test": True,
    }
    assert (
        request.headers["webhook-id"] == answer["event_id"]
        and request.headers["X-Hirekit-Event"] == "call_activity"
    )
    assert (
        answer["succeeded"] is True
        and answer["status_code"] == 200
        and answer["response_body"] == "received"
    )
    assert answer["error"] is None and answer["duration_ms"] >= 0 and answer["payload"] == payload
    (logged,) = delivery_log(client, tenant_a, webhook)["data"]
    assert (
        logged["id"] == answer["delivery_id"]
        and logged["status"] == "succeeded"
        and logged["payload"]["test"] is True
    )
    assert [a["status_code"] for a in logged["attempts"]] == [200]


@pytest.mark.parametrize("state", ["inactive", "unsubscribed"])
def test_a_test_event_is_sent_to_an_inactive_or_unsubscribed_webhook(
    client, tenant_a, receiver, state
):
    webhook = create_webhook(
        client, tenant_a, receiver.url_for("/hook"), is_active=state != "inactive"
    )
    if state == "unsubscribed":
        assert (
            client.post(
                f"/v1/tenant-webhook/unsubscribe/{webhook['id']}", headers=tenant_a.headers
            ).status_code
            == 200
        )
    answer = send_test(client, tenant_a, webhook)
    assert answer["succeeded"] is True and len(receiver.log) == 1
    verified_payload(receiver.log[0][0], webhook["secret"])


def test_a_failing_test_is_answered_once_never_retried_and_never_disables_the_webhook(
    client, tenant_a, httpserver
):
    httpserver.expect_request("/hook").respond_with_data("gone for good", status=410)
    webhook = create_webhook(client, tenant_a, httpserver.url_for("/hook"))
    answer = send_test(client, tenant_a, webhook)
    assert (
        answer["succeeded"] is False
        and answer["status_code"] == 410
        and answer["response_body"] == "gone for good"
    )
    (logged,) = delivery_log(client, tenant_a, webhook)["data"]
    assert (
        logged["status"] == "failed"
        and logged["next_attempt_at"] is None
        and logged["next_retry_at"] is None
    )
    (listed,) = client.get("/v1/tenant-webhook", headers=tenant_a.headers).json["data"]
    # a real delivery's 410 would disable it
    assert listed["is_active"] is True and listed["disabled_reason"] is None


def test_a_test_to_a_receiver_that_is_down_answers_the_connection_error(client, tenant_a):
    webhook = create_webhook(client, tenant_a, f"http://127.0.0.1:{free_port()}/hook")
    answer = send_test(client, tenant_a, webhook)
    assert (
        answer["succeeded"] is False
        and answer["status_code"] is None
        and answer["error"].startswith("connection failed")
    )


def test_a_plain_secret_signs_with_its_utf8_bytes_and_a_short_one_is_refused(
    client, tenant_a, receiver
):
    short = client.post(
        "/v1/tenant-webhook",
        json={
            "tenant_id": tenant_a.id,
            "triggered_event": "application_activty",
            "type": "post_call_screening",
            "fields": ["id"],
            "url": receiver.url_for("/hook"),
            "http_method": "POST",
            "content_type": "application/json",
            "secret": "fifteen chars..",
        },
        headers=tenant_a.headers,
    )
    assert short.status_code == 422 and "secret" in short.json["error"]["fields"]
    webhook = create_webhook(
        client,
        tenant_a,
        receiver.url_for("/hook"),
        secret=PLAIN_SECRET,
        content_type="application/x-www-form-urlencoded",
    )
    assert webhook["secret"] == PLAIN_SECRET
    send_test(client, tenant_a, webhook)
    ((request, _),) = receiver.log
    Webhook(PLAIN_SECRET.encode()).verify(
        request.get_data(as_text=True), dict(request.headers), json_parse=False
    )
    assert verified_payload(request, PLAIN_SECRET.encode()) == {
        "id": SAMPLE_ID,
        "application_stage": "ACTIVE",
        "test": "true",
    }


def test_test_and_replay_of_another_tenants_webhook_are_404(client, tenant_a, tenant_b, receiver):
    webhook = create_webhook(client, tenant_a, receiver.url_for("/hook"))
    assert (
        client.post(
            f"/v1/tenant-webhook/{webhook['id']}/test", headers=tenant_b.headers
        ).status_code
        == 404
    )
    assert replay(client, tenant_b, webhook, since=iso(utcnow())).status_code == 404
    assert (
        client.post("/v1/tenant-webhook/not-an-id/test", headers=tenant_a.headers).json["status"]
        == 404
    )
    assert receiver.log == []


# ---- the delivery log's filters ---------------------------------------------


def test_the_log_filters_by_status_event_and_since_and_shows_attempts_and_next_retry(
    make_app, tenant_a, httpserver
):
    for status in (200, 503, 500):
        httpserver.expect_ordered_request("/hook").respond_with_data("", status=status)
    app = make_app(WEBHOOK_RETRY_SCHEDULE=[600], WEBHOOK_RETRY_JITTER=0.0)
    client = app.test_client()
    webhook = create_webhook(client, tenant_a, httpserver.url_for("/hook"))
    delivered = emit(app, tenant_a)
    time.sleep(0.01)
    between = utcnow()
    failing = emit(app, tenant_a)
    send_test(client, tenant_a, webhook)  # the receiver's 500: a failed test delivery

    assert [
        d["event_id"] for d in delivery_log(client, tenant_a, webhook, status="succeeded")["data"]
    ] == [str(delivered.event_id)]
    (pending,) = delivery_log(client, tenant_a, webhook, status="pending")["data"]
    assert pending["event_id"] == str(failing.event_id) and pending["attempt_count"] == 1
    retry_at = dt.datetime.fromisoformat(pending["next_retry_at"].removesuffix("Z"))
    assert dt.timedelta(seconds=590) < retry_at - utcnow() <= dt.timedelta(seconds=600)
    (failed,) = delivery_log(client, tenant_a, webhook, status="failed")["data"]
    assert failed["payload"]["test"] is True and failed["next_retry_at"] is None
    by_event = delivery_log(client, tenant_a, webhook, event_id=str(delivered.event_id))
    assert by_event["total"] == 1 and by_event["data"][0]["attempt_count"] == 1
    since = delivery_log(client, tenant_a, webhook, since=iso(between))
    assert {d["event_id"] for d in since["data"]} == {str(failing.event_id), failed["event_id"]}
    assert (
        delivery_log(client, tenant_a, webhook, status="pending", since=iso(between))["total"] == 1
    )
    assert (
        delivery_log(client, tenant_a, webhook, since=iso(utcnow() + dt.timedelta(minutes=1)))[
            "data"
        ]
        == []
    )


@pytest.mark.parametrize(
    "query", ["event_id=nope", "since=yesterday", "since=9999-12-31T23:59:59-05:00", "status=lost"]
)
def test_malformed_log_filters_are_422_naming_the_filter(client, tenant_a, receiver, query):
    webhook = create_webhook(client, tenant_a, receiver.url_for("/hook"))
    response = client.get(
        f"/v1/tenant-webhook/{webhook['id']}/deliveries?page=1&size=5&{query}",
        headers=tenant_a.headers,
    )
    assert response.status_code == 422 and query.split("=")[0] in response.json["error"]["fields"]


# ---- replay after an outage -------------------------------------------------


def outage(app, client, tenant, port: int):
    """Events before and during a span in which the receiver on `port` is down: (webhook, span
    start, before, during)."""
    webhook = create_webhook(client, tenant, f"http://127.0.0.1:{port}/hook")
    before = emit(app, tenant, record={**APPLICATION_RECORD, "application_stage": "BEFORE"})
    time.sleep(0.01)
    span_start = utcnow()
    during = [
        emit(app, tenant, record={**APPLICATION_RECORD, "id": f"during-{n}"}) for n in range(3)
    ]
    return webhook, span_start, before, during


def start_receiver(port: int) -> HTTPServer:
    receiver = HTTPServer(host="127.0.0.1", port=port)
    receiver.expect_request("/hook").respond_with_data("back")
    receiver.start()
    return receiver


def stop_receiver(receiver: HTTPServer) -> None:
    receiver.clear()
    receiver.stop()


def test_after_an_outage_replay_since_its_start_delivers_every_event_of_the_span_once_more(
    make_app, tenant_a
):
    app = make_app(WEBHOOK_RETRY_SCHEDULE=[600])
    client = app.test_client()
    port = free_port()
    webhook, span_start, before, during = outage(app, client, tenant_a, port)
    down = delivery_log(client, tenant_a, webhook)["data"]
    assert len(down) == 4 and all(d["status"] == "pending" and d["next_retry_at"] for d in down)
    assert all(d["attempts"][0]["error"].startswith("connection failed") for d in down)

    receiver = start_receiver(port)
    try:
        answer = replay(client, tenant_a, webhook, since=iso(span_start))
        assert answer.status_code == 202, answer.json
        assert answer.json["count"] == 3 and answer.json["webhook_id"] == webhook["id"]
        assert answer.json["since"] == shown_instant(span_start)
        # each once, own id
        assert sorted(received_ids(receiver)) == sorted(str(event.event_id) for event in during)
        assert str(before.event_id) not in received_ids(receiver)
        payloads = [verified_payload(request, webhook["secret"]) for request, _ in receiver.log]
        assert sorted(p["id"] for p in payloads) == ["during-0", "during-1", "during-2"]
    finally:
        stop_receiver(receiver)
    replayed = delivery_log(client, tenant_a, webhook, status="succeeded")["data"]
    assert sorted(d["event_id"] for d in replayed) == sorted(
        str(event.event_id) for event in during
    )


def test_replay_with_until_stops_before_it_and_an_empty_span_counts_zero(
    app, client, tenant_a, receiver
):
    webhook = create_webhook(client, tenant_a, receiver.url_for("/hook"))
    start = utcnow()
    first = emit(app, tenant_a)
    time.sleep(0.01)
    cut = utcnow()
    emit(app, tenant_a)
    receiver.clear_log()
    answer = replay(client, tenant_a, webhook, since=iso(start), until=iso(cut))
    assert answer.status_code == 202 and answer.json["count"] == 1
    assert received_ids(receiver) == [str(first.event_id)]
    empty = replay(
        client,
        tenant_a,
        webhook,
        since=iso(utcnow() - dt.timedelta(days=2)),
        until=iso(utcnow() - dt.timedelta(days=1)),
    )
    assert empty.status_code == 202 and empty.json["count"] == 0


@pytest.mark.parametrize(
    "body, field",
    [
        ({}, "since"),
        ({"since": "last tuesday"}, "since"),
        ({"since": "0001-01-01T00:00:00+05:00"}, "since"),  # before year 1 in UTC
        ({"since": "2026-01-01T00:00:00Z", "until": "2025-12-31T00:00:00Z"}, "until"),
        ({"since": "2026-11-01T00:00:00+02:00", "extra": 1}, "extra"),
    ],
)
def test_malformed_replay_bodies_are_422(client, tenant_a, receiver, body, field):
    webhook = create_webhook(client, tenant_a, receiver.url_for("/hook"))
    response = replay(client, tenant_a, webhook, **body)
    assert response.status_code == 422 and field in response.json["error"]["fields"], response.json


def test_replay_reaches_back_only_as_far_as_the_event_retention(make_app, tenant_a, receiver):
    client = make_app(EVENT_RETENTION=3600).test_client()
    webhook = create_webhook(client, tenant_a, receiver.url_for("/hook"))
    too_old = replay(client, tenant_a, webhook, since=iso(utcnow() - dt.timedelta(hours=2)))
    assert too_old.status_code == 422 and "or later" in too_old.json["error"]["fields"]["since"][0]
    future = replay(client, tenant_a, webhook, since=iso(utcnow() + dt.timedelta(hours=1)))
    assert future.status_code == 422
    assert (
        replay(
            client, tenant_a, webhook, since=iso(utcnow() - dt.timedelta(minutes=59))
        ).status_code
        == 202
    )


def test_replay_to_an_unsubscribed_or_inactive_webhook_is_409(client, tenant_a, receiver):
    webhook = create_webhook(client, tenant_a, receiver.url_for("/hook"), is_active=False)
    refused = replay(client, tenant_a, webhook, since=iso(utcnow() - dt.timedelta(minutes=5)))
    assert refused.status_code == 409 and "inactive" in refused.json["error"]["message"]


def test_replays_are_limited_per_tenant_across_its_keys(make_app, make_tenant, extra_key, receiver):
    app = make_app(WEBHOOK_REPLAY_RATE_LIMIT="2/hour")
    client = app.test_client()
    tenant, other = make_tenant("replayer"), make_tenant("neighbour")
    webhook = create_webhook(client, tenant, receiver.url_for("/hook"))
    since = iso(utcnow() - dt.timedelta(minutes=5))
    assert [replay(client, tenant, webhook, since=since).status_code for _ in range(2)] == [
        202,
        202,
    ]
    second_key = {"Authorization": f"Bearer {extra_key(tenant.id)}"}
    limited = client.post(
        f"/v1/tenant-webhook/{webhook['id']}/replay", json={"since": since}, headers=second_key
    )
    assert limited.status_code == 429 and limited.json["error"]["type"] == "rate_limit_error"
    assert int(limited.headers["Retry-After"]) > 0
    theirs = create_webhook(client, other, receiver.url_for("/hook"))
    assert replay(client, other, theirs, since=since).status_code == 202


def test_inline_a_second_replay_while_the_first_is_sending_is_409(make_app, tenant_a, httpserver):
    first_arrived, release = threading.Event(), threading.Event()

    def slow_receiver(request):
        first_arrived.set()
        release.wait(10)
        return Response("ok")

    httpserver.expect_request("/hook").respond_with_handler(slow_receiver)
    app = make_app()
    client = app.test_client()
    webhook = create_webhook(client, tenant_a, httpserver.url_for("/hook"), is_active=False)
    since = utcnow()
    emit(app, tenant_a)  # inactive: stored, not delivered
    emit(app, tenant_a)
    client.post(
        "/v1/tenant-webhook",
        json={
            **{
                k: webhook[k]
                for k in ("triggered_event", "type", "fields", "url", "http_method", "content_type")
            },
            "tenant_id": tenant_a.id,
            "is_active": True,
        },
        headers=tenant_a.headers,
    )
    answers = {}
    first = threading.Thread(
        target=lambda: answers.update(
            first=replay(app.test_client(), tenant_a, webhook, since=iso(since))
        )
    )
    first.start()
    try:
        assert first_arrived.wait(10)
        second = replay(client, tenant_a, webhook, since=iso(since))
        assert second.status_code == 409 and "running" in second.json["error"]["message"]
    finally:
        release.set()
        first.join(15)
    assert answers["first"].status_code == 202 and answers["first"].json["count"] == 2
    assert len(httpserver.log) == 2
    # done: the lock is free again
    assert replay(client, tenant_a, webhook, since=iso(since)).status_code == 202


# ---- on Redis and RQ workers ---------------------------------------------------


def test_on_rq_replay_is_409_until_its_job_ran_and_then_delivers_the_span_once(
    make_app, redis_url, tenant_a
):
    app = make_app(REDIS_URL=redis_url, WEBHOOK_RETRY_SCHEDULE=[600], WEBHOOK_RETRY_JITTER=0.0)
    client = app.test_client()
    port = free_port()
    webhook, span_start, before, during = outage(app, client, tenant_a, port)
    work_until(
        app,
        lambda: all(
            d["attempt_count"] == 1 for d in delivery_log(client, tenant_a, webhook)["data"]
        ),
    )
    receiver = start_receiver(port)
    try:
        first = replay(client, tenant_a, webhook, since=iso(span_start))
        assert first.status_code == 202 and first.json["count"] == 3
        assert receiver.log == []  # queued: the worker sends it
        second = replay(client, tenant_a, webhook, since=iso(span_start))
        assert second.status_code == 409
        work_until(app, lambda: len(receiver.log) >= 3)
        assert sorted(received_ids(receiver)) == sorted(str(event.event_id) for event in during)
        for request, _ in receiver.log:
            verified_payload(request, webhook["secret"])
        # the job let the lock go
        assert replay(client, tenant_a, webhook, since=iso(span_start)).status_code == 202
    finally:
        stop_receiver(receiver)


def test_on_rq_a_replay_whose_job_never_ran_frees_the_webhook_after_the_lock_expires(
    make_app, redis_url, tenant_a, receiver
):
    app = make_app(REDIS_URL=redis_url, WEBHOOK_REPLAY_LOCK_SECONDS=0.5)
    client = app.test_client()
    webhook = create_webhook(client, tenant_a, receiver.url_for("/hook"), is_active=False)
    since = utcnow()
    emit(app, tenant_a)
    client.post(f"/v1/tenant-webhook/subscribe/{webhook['id']}", headers=tenant_a.headers)
    client.post(
        "/v1/tenant-webhook",
        json={
            **{
                k: webhook[k]
                for k in ("triggered_event", "type", "fields", "url", "http_method", "content_type")
            },
            "tenant_id": tenant_a.id,
            "is_active": True,
        },
        headers=tenant_a.headers,
    )
    # no worker runs its job
    assert replay(client, tenant_a, webhook, since=iso(since)).status_code == 202
    assert replay(client, tenant_a, webhook, since=iso(since)).status_code == 409
    time.sleep(0.6)
    assert replay(client, tenant_a, webhook, since=iso(since)).status_code == 202


def test_test_events_replay_and_the_filters_are_in_openapi(client):
    paths = client.get("/openapi.json").json["paths"]
    test_event = paths["/v1/tenant-webhook/{tenant_webhook_id}/test"]["post"]
    assert {"200", "404"} <= set(test_event["responses"]) and test_event["summary"]
    replayed = paths["/v1/tenant-webhook/{tenant_webhook_id}/replay"]["post"]
    assert {"202", "404", "409", "422", "429"} <= set(replayed["responses"])
    assert "requestBody" in replayed
    filters = {
        p["name"]
        for p in paths["/v1/tenant-webhook/{tenant_webhook_id}/deliveries"]["get"]["parameters"]
    }
    assert {"status", "event_id", "since", "page", "size"} <= filters


# ---- the README's receiver, run against real deliveries -------------------------


def readme_receiver(secret: str, workdir: Path, monkeypatch):
    """The Flask receiver README.md's walk writes to receiver.py, run with WEBHOOK_SECRET=`secret`
    in `workdir`: its test client."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    code = re.search(r"cat > receiver\.py <<'EOF'\n(.*?)\nEOF\n", readme, re.DOTALL).group(1)
    monkeypatch.setenv("WEBHOOK_SECRET", secret)
    monkeypatch.chdir(workdir)  # it stores what it receives in received.jsonl
    namespace = {"__name__": "readme_receiver"}
    exec(compile(code, "README.md", "exec"), namespace)
    return namespace["app"].test_client()


def stored_event_ids(workdir: Path) -> list[str]:
    stored = workdir / "received.jsonl"
    return (
        [json.loads(line)["webhook-id"] for line in stored.read_text().splitlines()]
        if stored.exists()
        else []
    )


@pytest.mark.parametrize("secret", [None, PLAIN_SECRET], ids=["whsec", "plain"])
def test_the_readme_receiver_verifies_both_secret_kinds_and_de_duplicates(
    app, client, tenant_a, receiver, secret, tmp_path, monkeypatch
):
    webhook = create_webhook(
        client, tenant_a, receiver.url_for("/hook"), **({"secret": secret} if secret else {})
    )
    event = emit(app, tenant_a)
    client.post(
        f"/v1/tenant-webhook/deliveries/{delivery_log(client, tenant_a, webhook)['data'][0]['id']}"
        "/redeliver",
        headers=tenant_a.headers,
    )
    ours = readme_receiver(webhook["secret"], tmp_path, monkeypatch)
    for request, _ in receiver.log:  # the delivery and its redelivery: one event
        answer = ours.post("/hooks/hirekit", data=request.get_data(), headers=dict(request.headers))
        assert answer.status_code == 204
    assert stored_event_ids(tmp_path) == [str(event.event_id)]
    request = receiver.log[0][0]
    tampered = ours.post(
        "/hooks/hirekit",
        data=request.get_data().replace(b"ACTIVE", b"HIRED"),
        headers=dict(request.headers),
    )
    assert tampered.status_code == 400
