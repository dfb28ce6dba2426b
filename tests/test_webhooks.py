"""Tenant webhooks: POST /v1/tenant-webhook bodies, subscribe/unsubscribe, signed deliveries of
exactly the selected fields, the log."""

import time
from urllib.parse import parse_qsl

import pytest
from standardwebhooks import Webhook

from tests.webhook_helpers import (
    APPLICATION_RECORD,
    create_webhook,
    emit,
    verified_payload,
    webhook_body,
)

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT


@pytest.fixture
def receiver(httpserver):
    httpserver.expect_request("/hook").respond_with_data("ok")
    return httpserver


def test_create_generates_a_secret_shown_only_in_the_create_answer(client, tenant_a, receiver):
    webhook = create_webhook(client, tenant_a, receiver.url_for("/hook"))
    assert webhook["secret"].startswith("whsec_") and webhook["has_secret"] is True
    assert webhook["is_active"] is True and webhook["is_deleted"] is False
    Webhook(webhook["secret"])  # a Standard Webhooks library accepts it as is
    listed = client.get("/v1/tenant-webhook", headers=tenant_a.headers).json["data"]
    assert [w["id"] for w in listed] == [webhook["id"]] and "secret" not in listed[0]


def test_posting_again_for_the_same_event_updates_and_keeps_the_secret(client, tenant_a, receiver):
    first = create_webhook(client, tenant_a, receiver.url_for("/hook"))
    again = client.post(
        "/v1/tenant-webhook",
        json=webhook_body(tenant_a, receiver.url_for("/other"), http_method="PUT"),
        headers=tenant_a.headers,
    )
    assert again.status_code == 200
    assert (
        again.json["id"] == first["id"]
        and again.json["http_method"] == "PUT"
        and again.json["url"].endswith("/other")
    )
    assert "secret" not in again.json and again.json["has_secret"] is True
    other_event = create_webhook(
        client,
        tenant_a,
        receiver.url_for("/hook"),
        triggered_event="call_activity",
        fields=["id", "status"],
    )
    assert other_event["id"] != first["id"]
    assert len(client.get("/v1/tenant-webhook", headers=tenant_a.headers).json["data"]) == 2


def test_a_given_secret_must_be_a_standard_webhooks_secret(client, tenant_a, receiver):
    url = receiver.url_for("/hook")
    bad = client.post(
        "/v1/tenant-webhook",
        json=webhook_body(tenant_a, url, secret="hunter2"),
        headers=tenant_a.headers,
    )
    assert bad.status_code == 422 and "secret" in bad.json["error"]["fields"]
    secret = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    good = client.post(
        "/v1/tenant-webhook",
        json=webhook_body(tenant_a, url, secret=secret),
        headers=tenant_a.headers,
    )
    assert good.status_code == 201 and good.json["secret"] == secret


def test_tenant_id_of_another_tenant_is_403(client, tenant_a, tenant_b, receiver):
    response = client.post(
        "/v1/tenant-webhook",
        json=webhook_body(tenant_b, receiver.url_for("/hook")),
        headers=tenant_a.headers,
    )
    assert response.status_code == 403 and response.json["error"]["type"] == "permission_error"
    assert client.get("/v1/tenant-webhook", headers=tenant_b.headers).json["data"] == []


@pytest.mark.parametrize(
    "field, value",
    [
        (
            "triggered_event",
            "application_activity",
        ),  # the published spelling is application_activty
        ("type", "pre_call"),
        ("http_method", "GET"),
        ("content_type", "text/plain"),
        ("fields", []),
        ("fields", ["id", "shoe_size"]),
        ("url", "ftp://example.com/hook"),
        ("url", "not a url"),
    ],
)
def test_invalid_bodies_are_422_naming_the_field(client, tenant_a, receiver, field, value):
    body = {**webhook_body(tenant_a, receiver.url_for("/hook")), field: value}
    response = client.post("/v1/tenant-webhook", json=body, headers=tenant_a.headers)
    assert response.status_code == 422, response.json
    assert field in response.json["error"]["fields"]


def test_unknown_field_names_are_listed_with_the_available_ones(client, tenant_a, receiver):
    response = client.post(
        "/v1/tenant-webhook",
        json=webhook_body(
            tenant_a,
            receiver.url_for("/hook"),
            triggered_event="call_activity",
            fields=["id", "status", "colour"],
        ),
        headers=tenant_a.headers,
    )
    assert response.status_code == 422
    message = response.json["error"]["fields"]["fields"][0]
    assert "colour" in message and "candidate_id" in message


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/hook",
        "http://10.1.2.3/hook",
        "http://169.254.169.254/latest",
        "http://[::1]/hook",
        "http://localhost/hook",
        "http://100.64.0.1/hook",
    ],
)
def test_private_targets_are_refused_unless_allowed(make_app, tenant_a, url):
    strict = make_app(WEBHOOK_ALLOW_PRIVATE=False).test_client()
    response = strict.post(
        "/v1/tenant-webhook", json=webhook_body(tenant_a, url), headers=tenant_a.headers
    )
    assert response.status_code == 422 and "url" in response.json["error"]["fields"]
    allowed = make_app(WEBHOOK_ALLOW_PRIVATE=True).test_client()
    assert (
        allowed.post(
            "/v1/tenant-webhook", json=webhook_body(tenant_a, url), headers=tenant_a.headers
        ).status_code
        == 201
    )


def test_a_delivery_carries_exactly_the_selected_fields_signed(app, client, tenant_a, receiver):
    webhook = create_webhook(client, tenant_a, receiver.url_for("/hook"), http_method="PUT")
    event = emit(app, tenant_a)
    ((request, _),) = receiver.log
    assert request.method == "PUT" and request.headers["Content-Type"] == "application/json"
    assert verified_payload(request, webhook["secret"]) == {
        "id": APPLICATION_RECORD["id"],
        "application_stage": "ACTIVE",
    }
    assert request.headers["webhook-id"] == str(event.event_id)
    assert request.headers["X-Hirekit-Event"] == "application_activty"


def test_a_tampered_body_does_not_verify(app, client, tenant_a, receiver):
    webhook = create_webhook(client, tenant_a, receiver.url_for("/hook"))
    emit(app, tenant_a)
    ((request, _),) = receiver.log
    with pytest.raises(Exception):
        Webhook(webhook["secret"]).verify(
            request.get_data(as_text=True).replace("ACTIVE", "PASSIVE"), dict(request.headers)
        )


def test_form_urlencoded_delivery_uses_the_same_keys(app, client, tenant_a, receiver):
    webhook = create_webhook(
        client,
        tenant_a,
        receiver.url_for("/hook"),
        http_method="PATCH",
        content_type="application/x-www-form-urlencoded",
        fields=["application_stage", "id", "job_id"],
    )
    emit(app, tenant_a)
    ((request, _),) = receiver.log
    assert (
        request.method == "PATCH"
        and request.headers["Content-Type"] == "application/x-www-form-urlencoded"
    )
    assert verified_payload(request, webhook["secret"]) == {
        "application_stage": "ACTIVE",
        "id": APPLICATION_RECORD["id"],
        "job_id": APPLICATION_RECORD["job_id"],
    }
    assert [key for key, _ in parse_qsl(request.get_data(as_text=True))] == [
        "application_stage",
        "id",
        "job_id",
    ]


def test_events_of_another_type_or_tenant_are_not_delivered(
    app, client, tenant_a, tenant_b, receiver
):
    create_webhook(client, tenant_a, receiver.url_for("/hook"))
    emit(app, tenant_b)
    emit(app, tenant_a, "call_activity", {"id": "x", "status": "queued"})
    assert receiver.log == []


def test_unsubscribed_gets_nothing_and_resubscribing_does_not_replay(
    app, client, tenant_a, receiver
):
    webhook = create_webhook(client, tenant_a, receiver.url_for("/hook"))
    off = client.post(f"/v1/tenant-webhook/unsubscribe/{webhook['id']}", headers=tenant_a.headers)
    assert off.status_code == 200 and off.json["is_deleted"] is True
    emit(app, tenant_a, record={**APPLICATION_RECORD, "application_stage": "PASSIVE"})
    assert receiver.log == []
    on = client.post(f"/v1/tenant-webhook/subscribe/{webhook['id']}", headers=tenant_a.headers)
    assert on.status_code == 200 and on.json["is_deleted"] is False
    emit(app, tenant_a)
    assert [
        verified_payload(r, webhook["secret"])["application_stage"] for r, _ in receiver.log
    ] == ["ACTIVE"]


def test_inactive_webhooks_get_nothing(app, client, tenant_a, receiver):
    create_webhook(client, tenant_a, receiver.url_for("/hook"), is_active=False)
    emit(app, tenant_a)
    assert receiver.log == []


def test_subscribe_of_another_tenants_webhook_is_404(client, tenant_a, tenant_b, receiver):
    webhook = create_webhook(client, tenant_a, receiver.url_for("/hook"))
    for action in ("subscribe", "unsubscribe"):
        assert (
            client.post(
                f"/v1/tenant-webhook/{action}/{webhook['id']}", headers=tenant_b.headers
            ).status_code
            == 404
        )
        assert (
            client.post(f"/v1/tenant-webhook/{action}/nope", headers=tenant_a.headers).status_code
            == 404
        )


def test_the_log_lists_deliveries_with_attempts_and_redeliver_sends_again(
    app, client, tenant_a, httpserver
):
    httpserver.expect_ordered_request("/hook").respond_with_data("down for maintenance", status=503)
    httpserver.expect_ordered_request("/hook").respond_with_data("thanks")
    webhook = create_webhook(client, tenant_a, httpserver.url_for("/hook"))
    event = emit(app, tenant_a)
    log = client.get(
        f"/v1/tenant-webhook/{webhook['id']}/deliveries?page=1&size=10", headers=tenant_a.headers
    )
    assert log.status_code == 200 and log.json["total"] == 1
    delivery = log.json["data"][0]
    assert delivery["status"] == "pending" and delivery["event_id"] == str(event.event_id)
    (attempt,) = delivery["attempts"]
    assert attempt["status_code"] == 503 and attempt["response_body"] == "down for maintenance"
    assert attempt["next_retry_at"] and attempt["duration_ms"] >= 0

    again = client.post(
        f"/v1/tenant-webhook/deliveries/{delivery['id']}/redeliver", headers=tenant_a.headers
    )
    assert again.status_code == 202
    assert again.json["status"] == "succeeded" and [
        a["status_code"] for a in again.json["attempts"]
    ] == [503, 200]
    first, second = (r for r, _ in httpserver.log)
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == str(event.event_id)


def test_deliveries_need_page_and_size_and_are_tenant_scoped(client, tenant_a, tenant_b, receiver):
    webhook = create_webhook(client, tenant_a, receiver.url_for("/hook"))
    assert (
        client.get(
            f"/v1/tenant-webhook/{webhook['id']}/deliveries", headers=tenant_a.headers
        ).status_code
        == 422
    )
    assert (
        client.get(
            f"/v1/tenant-webhook/{webhook['id']}/deliveries?page=1&size=5", headers=tenant_b.headers
        ).status_code
        == 404
    )
    assert (
        client.post(
            "/v1/tenant-webhook/deliveries/not-an-id/redeliver", headers=tenant_a.headers
        ).status_code
        == 404
    )


def test_a_410_disables_the_webhook_with_the_reason(app, client, tenant_a, httpserver):
    httpserver.expect_request("/hook").respond_with_data("gone", status=410)
    webhook = create_webhook(client, tenant_a, httpserver.url_for("/hook"))
    emit(app, tenant_a)
    emit(app, tenant_a)
    assert len(httpserver.log) == 1
    (listed,) = client.get("/v1/tenant-webhook", headers=tenant_a.headers).json["data"]
    assert listed["is_active"] is False and "410" in listed["disabled_reason"]
    revived = client.post(
        "/v1/tenant-webhook",
        json=webhook_body(tenant_a, webhook["url"], is_active=True),
        headers=tenant_a.headers,
    )
    assert revived.json["is_active"] is True and revived.json["disabled_reason"] is None


def test_requires_a_bearer_key(client):
    assert client.get("/v1/tenant-webhook").status_code == 401


def webhook_state(client, tenant) -> dict:
    (listed,) = client.get("/v1/tenant-webhook", headers=tenant.headers).json["data"]
    return listed


def test_a_webhook_failing_for_longer_than_the_span_is_disabled_with_the_reason(
    make_app, tenant_a, httpserver
):
    httpserver.expect_request("/hook").respond_with_data("broken", status=500)
    app = make_app(WEBHOOK_DISABLE_AFTER=0.3)
    client = app.test_client()
    webhook = create_webhook(client, tenant_a, httpserver.url_for("/hook"))
    emit(app, tenant_a)
    assert webhook_state(client, tenant_a)["is_active"] is True  # failing, but not for long yet
    time.sleep(0.4)
    emit(app, tenant_a)
    state = webhook_state(client, tenant_a)
    assert (
        state["is_active"] is False
        and "failed since" in state["disabled_reason"]
        and "HTTP 500" in state["disabled_reason"]
    )
    emit(app, tenant_a)
    assert len(httpserver.log) == 2  # disabled: the third event is not sent
    revived = client.post(
        "/v1/tenant-webhook",
        json=webhook_body(tenant_a, webhook["url"], is_active=True),
        headers=tenant_a.headers,
    )
    assert revived.json["is_active"] is True and revived.json["disabled_reason"] is None


def test_a_success_in_between_restarts_the_failing_span(make_app, tenant_a, httpserver):
    for status in (500, 200, 500):
        httpserver.expect_ordered_request("/hook").respond_with_data("", status=status)
    app = make_app(WEBHOOK_DISABLE_AFTER=0.3)
    client = app.test_client()
    create_webhook(client, tenant_a, httpserver.url_for("/hook"))
    emit(app, tenant_a)
    time.sleep(0.4)
    emit(app, tenant_a)
    emit(app, tenant_a)
    assert len(httpserver.log) == 3 and webhook_state(client, tenant_a)["is_active"] is True


def test_a_rotated_secret_signs_alongside_the_old_one_until_the_overlap_ends(
    make_app, tenant_a, receiver
):
    app = make_app(WEBHOOK_SECRET_OVERLAP=0.5)
    client = app.test_client()
    old = create_webhook(client, tenant_a, receiver.url_for("/hook"))["secret"]
    new = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    rotated = client.post(
        "/v1/tenant-webhook",
        json=webhook_body(tenant_a, receiver.url_for("/hook"), secret=new),
        headers=tenant_a.headers,
    )
    assert rotated.status_code == 200 and rotated.json["previous_secret_until"]
    emit(app, tenant_a)
    time.sleep(0.6)
    emit(app, tenant_a)
    during, after = (request for request, _ in receiver.log)
    for secret in (old, new):
        # a receiver on either secret accepts it while both are in use
        verified_payload(during, secret)
    verified_payload(after, new)
    with pytest.raises(Exception):
        verified_payload(after, old)
