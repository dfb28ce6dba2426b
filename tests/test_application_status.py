"""An application record's `status` (its source_application_status), so the webhook `fields` example
of POST /v1/tenant-webhook (in /openapi.json) works for both events."""

import pytest

from tests.factories import create_application
from tests.test_mcp_protocol import tool_result
from tests.webhook_helpers import create_webhook, verified_payload

SAMPLE_FIELDS = ["id", "status", "candidate_id", "job_id"]  # the `fields` example in /openapi.json


@pytest.fixture
def receiver(httpserver):
    httpserver.expect_request("/hook").respond_with_data("ok")
    return httpserver


def test_rest_and_mcp_answer_status_as_the_source_status(client, tenant_a):
    application = create_application(client, tenant_a, source_application_status="interviewing")
    assert application["status"] == application["source_application_status"] == "interviewing"
    moved = client.patch(
        f"/v1/applications/{application['id']}",
        headers=tenant_a.headers,
        json={"source_application_status": "offered", "application_stage": "ACTIVE"},
    )
    assert moved.status_code == 200 and moved.json["status"] == "offered"
    read = tool_result(client, tenant_a, "get_application", {"application_id": application["id"]})[
        "structuredContent"
    ]
    assert read["status"] == "offered"


@pytest.mark.parametrize("event", ["application_activty", "call_activity"])
def test_the_fields_sample_is_accepted_for_both_events(client, tenant_a, receiver, event):
    webhook = create_webhook(
        client, tenant_a, receiver.url_for("/hook"), triggered_event=event, fields=SAMPLE_FIELDS
    )
    assert webhook["fields"] == SAMPLE_FIELDS


def test_an_application_event_carries_the_sample_fields(client, tenant_a, receiver):
    webhook = create_webhook(client, tenant_a, receiver.url_for("/hook"), fields=SAMPLE_FIELDS)
    application = create_application(client, tenant_a, source_application_status="screening")
    ((request, _),) = receiver.log
    assert verified_payload(request, webhook["secret"]) == {
        "id": application["id"],
        "status": "screening",
        "candidate_id": application["candidate_id"],
        "job_id": application["job_id"],
    }
