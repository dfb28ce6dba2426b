"""PUT /v1/<family>/by-source-id: a batch of upserts leaves the rows single upserts would, answers
each item's status in order, refuses an atomic batch whole, replays under an Idempotency-Key,
announces each application, stays in its tenant and costs its items against the rate limit."""

from __future__ import annotations

import base64
import io
import json

import jsonschema
import pytest

from app.data import events
from app.http.batch_upserts import MAX_BATCH_ITEMS, BatchAnswerSchema
from app.data.db import database
from app.http.idempotency import IdempotencyKey
from plugins.applications.models import Application
from plugins.jobs.models import Job
from plugins.mcp.protocol import RATE_LIMITED
from tests.factories import candidate_body, create_candidate, create_job, job_body
from tests.test_mcp_jobs import listed_tools
from tests.test_mcp_protocol import call, tool_result
from tests.webhook_helpers import create_webhook

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

VOLATILE = ("id", "created_at", "updated_at")


def without_source_id(body: dict) -> dict:
    return {name: value for name, value in body.items() if name != "source_id"}


def push(
    client,
    tenant,
    family: str,
    items: list,
    *,
    atomic: bool | None = None,
    headers: dict | None = None,
):
    body = {"items": items} if atomic is None else {"items": items, "atomic": atomic}
    return client.put(
        f"/v1/{family}/by-source-id", json=body, headers={**tenant.headers, **(headers or {})}
    )


def stored_jobs(client, tenant) -> dict[str, dict]:
    """The tenant's jobs by source_id, without what differs between two tenants' copies of one
    history."""
    listed = client.get("/v1/jobs?page=1&size=100", headers=tenant.headers).json["data"]
    return {job["source_id"]: {k: v for k, v in job.items() if k not in VOLATILE} for job in listed}


def rows(app, model, tenant) -> int:
    with app.app_context(), database.connection_context():
        return model.select().where(model.tenant == tenant.id).count()


def tenant_events(app, tenant) -> list[dict]:
    with app.app_context(), database.connection_context():
        return [
            event.payload
            for event in events.Event.select()
            .where(events.Event.tenant == tenant.id)
            .order_by(events.Event.sequence)
        ]


def test_a_mixed_batch_answers_each_item_in_order_and_leaves_the_rows_single_upserts_would(
    client, tenant_a, tenant_b
):
    stored = job_body(source_id="ats-1", city="Oakland", min_pay_rate=40)
    for tenant in (tenant_a, tenant_b):
        assert (
            client.put(
                "/v1/jobs/by-source-id/ats-1",
                json=without_source_id(stored),
                headers=tenant.headers,
            ).status_code
            == 201
        )
    replacement = without_source_id(job_body(title="Charge Nurse"))
    replacement.pop("city")
    items = [
        job_body(source_id="ats-2", city="Fresno"),  # new
        # replaces: city and pay become empty
        {**replacement, "source_id": "ats-1"},
        {"title": "No industry", "source_id": "ats-3"},  # invalid: missing fields
        job_body(source_id="ats-4", min_pay_rate=90, max_pay_rate=10),  # invalid: pay range
        job_body(source_id="ats-5", employment_type="contract"),  # new
    ]

    answer = push(client, tenant_a, "jobs", items)

    assert answer.status_code == 200, answer.json
    outcomes = answer.json["items"]
    assert [item["status"] for item in outcomes] == [201, 200, 422, 422, 201]
    assert [item["source_id"] for item in outcomes] == ["ats-2", "ats-1", "ats-3", "ats-4", "ats-5"]
    assert (answer.json["created"], answer.json["replaced"], answer.json["failed"]) == (2, 1, 2)
    assert (
        outcomes[2]["error"]["type"] == "validation_error"
        and "industry" in outcomes[2]["error"]["fields"]
    )
    assert "max_pay_rate" in outcomes[3]["error"]["fields"] and "id" not in outcomes[3]
    assert BatchAnswerSchema().dump(answer.json) == answer.json  # answered in its documented shape
    for outcome in (outcomes[0], outcomes[1], outcomes[4]):
        record = client.get(f"/v1/jobs/{outcome['id']}", headers=tenant_a.headers).json
        assert record["source_id"] == outcome["source_id"]

    for item in items:  # tenant B pushes the same history one record at a time
        client.put(
            f"/v1/jobs/by-source-id/{item['source_id']}",
            json=without_source_id(item),
            headers=tenant_b.headers,
        )
    batched, single = stored_jobs(client, tenant_a), stored_jobs(client, tenant_b)
    assert batched == single
    assert set(batched) == {"ats-1", "ats-2", "ats-5"}
    assert batched["ats-1"]["title"] == "Charge Nurse" and batched["ats-1"]["city"] is None
    assert batched["ats-1"]["min_pay_rate"] is None and batched["ats-1"]["number"] == 1
    assert [batched[s]["number"] for s in ("ats-2", "ats-5")] == [2, 3]


def test_a_replaced_job_keeps_its_id_number_and_creation_time(client, tenant_a):
    first = push(client, tenant_a, "jobs", [job_body(source_id="keep")]).json["items"][0]
    before = client.get(f"/v1/jobs/{first['id']}", headers=tenant_a.headers).json
    again = push(client, tenant_a, "jobs", [job_body(source_id="keep", title="Renamed")]).json[
        "items"
    ][0]
    after = client.get(f"/v1/jobs/{first['id']}", headers=tenant_a.headers).json
    assert (again["status"], again["id"]) == (200, first["id"])
    assert (after["number"], after["created_at"], after["title"]) == (
        before["number"],
        before["created_at"],
        "Renamed",
    )
    assert after["updated_at"] >= before["updated_at"]


def test_a_source_id_sent_twice_in_one_batch_is_refused_on_its_later_item(app, client, tenant_a):
    answer = push(
        client,
        tenant_a,
        "jobs",
        [job_body(source_id="twice", title="First"), job_body(source_id="twice", title="Second")],
    )
    assert [item["status"] for item in answer.json["items"]] == [201, 422]
    assert "item 0" in answer.json["items"][1]["error"]["fields"]["source_id"][0]
    assert stored_jobs(client, tenant_a)["twice"]["title"] == "First"


def test_an_atomic_batch_with_one_invalid_item_writes_nothing_and_names_it(app, client, tenant_a):
    items = [
        job_body(source_id="a-1"),
        {**job_body(source_id="a-2"), "recruiter_email": "not an email"},
        job_body(source_id="a-3"),
    ]
    refused = push(client, tenant_a, "jobs", items, atomic=True)
    assert refused.status_code == 422
    assert set(refused.json["error"]["fields"]) == {"items.1.recruiter_email"}
    assert "items 1" in refused.json["error"]["message"]
    assert rows(app, Job, tenant_a) == 0
    assert push(client, tenant_a, "jobs", [items[0], items[2]], atomic=True).json["created"] == 2


def test_an_atomic_batch_refused_while_writing_rolls_every_item_back_and_announces_nothing(
    app, client, tenant_a
):
    job, candidate = create_job(client, tenant_a), create_candidate(client, tenant_a)
    application = {
        "job_source_id": job["source_id"],
        "source_application_status": "new",
        "application_stage": "ACTIVE",
    }
    items = [
        {**application, "candidate_source_id": candidate["source_id"], "source_id": "app-1"},
        # valid body, unknown candidate
        {**application, "candidate_source_id": "nobody", "source_id": "app-2"},
    ]

    refused = push(client, tenant_a, "applications", items, atomic=True)

    assert refused.status_code == 422, refused.json
    assert set(refused.json["error"]["fields"]) == {"items.1.candidate_source_id"}
    assert rows(app, Application, tenant_a) == 0 and tenant_events(app, tenant_a) == []


@pytest.mark.parametrize("count", [0, MAX_BATCH_ITEMS + 1])
def test_a_batch_outside_1_to_the_maximum_is_refused_before_any_write(app, client, tenant_a, count):
    refused = push(client, tenant_a, "jobs", [job_body(source_id=f"m-{n}") for n in range(count)])
    assert refused.status_code == 422
    assert f"1 to {MAX_BATCH_ITEMS}" in refused.json["error"]["fields"]["items"][0]
    assert rows(app, Job, tenant_a) == 0


def test_the_maximum_batch_is_written(app, client, tenant_a):
    answer = push(
        client, tenant_a, "jobs", [job_body(source_id=f"max-{n}") for n in range(MAX_BATCH_ITEMS)]
    )
    assert answer.status_code == 200 and answer.json["created"] == MAX_BATCH_ITEMS
    assert rows(app, Job, tenant_a) == MAX_BATCH_ITEMS


@pytest.mark.parametrize(
    "body",
    [
        {"items": "jobs"},
        {"items": [job_body()], "atomic": "yes"},
        {"items": [job_body()], "x": 1},
        {},
    ],
)
def test_a_malformed_batch_body_is_a_422_naming_the_field(client, tenant_a, body):
    refused = client.put("/v1/jobs/by-source-id", json=body, headers=tenant_a.headers)
    assert refused.status_code == 422 and refused.json["error"]["fields"]


def test_a_batch_is_json_only(client, tenant_a):
    refused = client.put(
        "/v1/candidates/by-source-id",
        data={"items": "[]", "file": (io.BytesIO(b"resume"), "cv.txt")},
        headers=tenant_a.headers,
        content_type="multipart/form-data",
    )
    assert refused.status_code == 422 and refused.json["error"]["fields"]


def test_an_item_that_is_not_an_object_is_refused_in_its_place(client, tenant_a):
    answer = push(client, tenant_a, "jobs", ["job", job_body(source_id="ok")])
    assert [item["status"] for item in answer.json["items"]] == [422, 201]
    assert answer.json["items"][0]["source_id"] is None


def test_an_idempotency_key_replays_the_whole_batch_without_writing_again(app, client, tenant_a):
    key = {"Idempotency-Key": "initial-sync-page-1"}
    items = [job_body(source_id="k-1"), job_body(source_id="k-2"), {"source_id": "k-3"}]
    first = push(client, tenant_a, "jobs", items, headers=key)
    again = push(client, tenant_a, "jobs", items, headers=key)
    assert first.status_code == again.status_code == 200
    assert again.get_data() == first.get_data() and again.headers["Idempotent-Replayed"] == "true"
    # the first answer, not two replaces
    assert [item["status"] for item in again.json["items"]] == [201, 201, 422]
    assert rows(app, Job, tenant_a) == 2
    other = push(client, tenant_a, "jobs", items[:1], headers=key)
    assert other.status_code == 422 and "Idempotency-Key" in other.json["error"]["fields"]


def test_each_application_of_a_batch_is_announced_and_its_webhook_sent_after_the_commit(
    app, client, tenant_a, httpserver
):
    httpserver.expect_request("/hook").respond_with_data("ok")
    create_webhook(
        client, tenant_a, httpserver.url_for("/hook"), fields=["id", "source_application_status"]
    )
    job = create_job(client, tenant_a)
    first, second = create_candidate(client, tenant_a), create_candidate(client, tenant_a)
    base = {"job_source_id": job["source_id"], "application_stage": "ACTIVE"}
    assert (
        push(
            client,
            tenant_a,
            "applications",
            [
                {
                    **base,
                    "candidate_source_id": first["source_id"],
                    "source_id": "app-1",
                    "source_application_status": "applied",
                }
            ],
        ).json["created"]
        == 1
    )
    items = [
        {
            **base,
            "candidate_source_id": second["source_id"],
            "source_id": "app-2",
            "source_application_status": "new",
        },
        {
            **base,
            "candidate_source_id": "unknown",
            "source_id": "app-3",
            "source_application_status": "new",
        },
        {
            **base,
            "candidate_source_id": first["source_id"],
            "source_id": "app-1",
            "source_application_status": "hired",
        },
    ]

    answer = push(client, tenant_a, "applications", items)

    assert [item["status"] for item in answer.json["items"]] == [201, 422, 200], answer.json
    assert "candidate_source_id" in answer.json["items"][1]["error"]["fields"]
    announced = tenant_events(app, tenant_a)
    assert [(event["source_id"], event["status"]) for event in announced] == [
        ("app-1", "applied"),
        ("app-2", "new"),
        ("app-1", "hired"),
    ]
    sent = [json.loads(request.get_data()) for request, _ in httpserver.log]
    assert [(payload["id"], payload["source_application_status"]) for payload in sent[1:]] == [
        (answer.json["items"][0]["id"], "new"),
        (answer.json["items"][2]["id"], "hired"),
    ]


def test_a_candidate_batch_carries_base64_resumes(client, tenant_a):
    resume = base64.b64encode(b"Jane Doe\nICU nurse, 5 years.\n").decode()
    items = [
        {**candidate_body(source_id="c-1"), "base64file": resume, "file_name": "jane.txt"},
        {**candidate_body(source_id="c-2"), "base64file": "not base64!"},
        candidate_body(source_id="c-3"),
    ]
    answer = push(client, tenant_a, "candidates", items)
    assert [item["status"] for item in answer.json["items"]] == [201, 422, 201], answer.json
    download = client.get(
        f"/v1/candidates/{answer.json['items'][0]['id']}/resume", headers=tenant_a.headers
    )
    assert download.status_code == 200 and download.data == b"Jane Doe\nICU nurse, 5 years.\n"


def test_a_batch_stays_in_its_tenant(app, client, tenant_a, tenant_b):
    theirs = push(client, tenant_a, "jobs", [job_body(source_id="shared", title="A's job")]).json[
        "items"
    ][0]
    candidate = create_candidate(client, tenant_a)
    mine = push(client, tenant_b, "jobs", [job_body(source_id="shared", title="B's job")]).json[
        "items"
    ][0]
    assert mine["status"] == 201 and mine["id"] != theirs["id"]
    assert (
        client.get(f"/v1/jobs/{theirs['id']}", headers=tenant_a.headers).json["title"] == "A's job"
    )
    assert client.get(f"/v1/jobs/{theirs['id']}", headers=tenant_b.headers).status_code == 404
    application = {
        "candidate_source_id": candidate["source_id"],
        "job_source_id": "shared",
        "source_id": "x",
        "source_application_status": "new",
        "application_stage": "ACTIVE",
    }
    refused = push(client, tenant_b, "applications", [application]).json["items"][0]
    assert refused["status"] == 422 and "candidate_source_id" in refused["error"]["fields"]
    assert rows(app, Application, tenant_a) == rows(app, Application, tenant_b) == 0


def test_a_batch_counts_its_items_against_the_rate_limit(make_app, make_tenant):
    app = make_app(RATE_LIMIT="10/minute")
    client, tenant = app.test_client(), make_tenant("limited")
    first = push(client, tenant, "jobs", [job_body(source_id=f"r-{n}") for n in range(8)])
    assert first.status_code == 200 and first.headers["X-RateLimit-Remaining"] == "2"
    refused = push(
        client,
        tenant,
        "jobs",
        [job_body(source_id=f"s-{n}") for n in range(3)],
        headers={"Idempotency-Key": "over-the-limit"},
    )
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
    assert "3 items" in refused.json["error"]["message"]
    assert rows(app, Job, tenant) == 8
    # refused whole, nothing ran: the key is free to retry
    with app.app_context(), database.connection_context():
        assert IdempotencyKey.select().where(IdempotencyKey.key == "over-the-limit").count() == 0


# ---- the MCP tool: upsert_jobs
# -----------------------------------------------------------------------------------


def test_upsert_jobs_tool_writes_a_batch_as_rest_does(client, tenant_a):
    tools = listed_tools(client, tenant_a)
    schema = tools["upsert_jobs"]["inputSchema"]
    assert schema["properties"]["items"]["maxItems"] == MAX_BATCH_ITEMS and schema["required"] == [
        "items"
    ]
    assert tools["upsert_jobs"]["annotations"]["readOnlyHint"] is False
    push(client, tenant_a, "jobs", [job_body(source_id="m-1")])

    result = tool_result(
        client,
        tenant_a,
        "upsert_jobs",
        {
            "items": [
                job_body(source_id="m-1", title="Renamed"),
                {"source_id": "m-2"},
                job_body(source_id="m-3"),
            ]
        },
    )

    assert result["isError"] is False
    outcome = result["structuredContent"]
    jsonschema.validate(outcome, tools["upsert_jobs"]["outputSchema"])
    assert [item["status"] for item in outcome["items"]] == [200, 422, 201]
    assert stored_jobs(client, tenant_a)["m-1"]["title"] == "Renamed"


def test_upsert_jobs_tool_atomic_fails_whole_and_a_key_replays(app, client, tenant_a):
    refused = tool_result(
        client,
        tenant_a,
        "upsert_jobs",
        {"items": [job_body(source_id="t-1"), {"source_id": "t-2"}], "atomic": True},
    )
    assert refused["isError"] is True and "items.1.title" in refused["content"][0]["text"]
    assert rows(app, Job, tenant_a) == 0
    arguments = {"items": [job_body(source_id="t-1")], "idempotency_key": "agent-sync-1"}
    first = tool_result(client, tenant_a, "upsert_jobs", arguments)
    again = tool_result(client, tenant_a, "upsert_jobs", arguments)
    assert first == again and first["structuredContent"]["items"][0]["status"] == 201
    assert rows(app, Job, tenant_a) == 1


def test_upsert_jobs_tool_counts_its_items_against_the_rate_limit(make_app, make_tenant):
    app = make_app(RATE_LIMIT="5/minute")
    client, tenant = app.test_client(), make_tenant("agent")
    reply = call(
        client,
        tenant,
        "tools/call",
        {
            "name": "upsert_jobs",
            "arguments": {"items": [job_body(source_id=f"l-{n}") for n in range(6)]},
        },
    )
    # the POST's one message is over it
    assert reply.status_code == 429 and int(reply.headers["Retry-After"]) >= 1
    assert (
        reply.json["error"]["code"] == RATE_LIMITED
        and reply.json["error"]["data"]["retry_after"] >= 1
    )
    assert rows(app, Job, tenant) == 0


def test_a_batch_moving_stored_jobs_to_another_status_keeps_the_totals_by_status(client, tenant_a):
    """A replace that changes a job's status moves it between the counted buckets inside the batch's
    one statement."""
    first = push(
        client, tenant_a, "jobs", [job_body(source_id=f"ats-{n}", status="open") for n in range(3)]
    )
    assert [item["status"] for item in first.json["items"]] == [201, 201, 201]
    moved = push(
        client,
        tenant_a,
        "jobs",
        [
            job_body(source_id="ats-0", status="closed"),
            job_body(source_id="ats-1", status="closed"),
            job_body(source_id="ats-9", status="closed"),
        ],
    )
    assert moved.status_code == 200
    assert [item["status"] for item in moved.json["items"]] == [200, 200, 201]

    def total(status: str) -> int:
        return client.get(f"/v1/jobs?status={status}&page=1&size=1", headers=tenant_a.headers).json[
            "total"
        ]

    assert (total("open"), total("closed")) == (1, 3)
