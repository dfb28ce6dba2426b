"""Screening calls: instant call API, simulated outcomes, analysis, filters, and the call_activity
webhooks they emit."""

import pytest

from app.data.db import database
from tests.call_factories import (
    JOB_QUESTIONS,
    application_for,
    create_job_with_questions,
    instant_call,
)
from tests.webhook_helpers import create_webhook, verified_payload, work_until

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT


def get_call(client, tenant, call_id) -> dict:
    response = client.get(f"/v1/calls/{call_id}", headers=tenant.headers)
    assert response.status_code == 200
    return response.json


def test_instant_call_answers_202_queued_then_completes_with_summary_and_assessment(
    client, tenant_a
):
    application = application_for(client, tenant_a, phone_no="+14155550101")
    response = instant_call(client, tenant_a, application)
    assert response.status_code == 202
    assert response.json["status"] == "queued" and response.json["attempt"] == 1
    assert response.json["application_id"] == application["id"]
    call = get_call(client, tenant_a, response.json["id"])  # no Redis: the call ran inline
    assert call["status"] == "completed" and call["started_at"] and call["ended_at"]
    for question in JOB_QUESTIONS:
        assert question in call["summary"]
    assessment = call["assessment"]
    assert 0 <= assessment["score"] <= 100 and assessment["recommendation"] in (
        "advance",
        "hold",
        "reject",
    )
    assert [a["question"] for a in assessment["answers"]] == list(JOB_QUESTIONS)
    assert all(
        a["answer"] and isinstance(a["meets_requirement"], bool) for a in assessment["answers"]
    )
    # asked in order, each in the agent's turn for it
    for index, question in enumerate(JOB_QUESTIONS):
        assert any(
            question in t["text"]
            for t in call["transcript"]
            if t["speaker"] == "agent" and t["question_index"] == index
        )
    assert call["end_reason"] == "completed" and call["transcript"][-1]["at_ms"] > 0


@pytest.mark.parametrize(
    "last_digit, status",
    [("0", "completed"), ("6", "no_answer"), ("7", "no_answer"), ("8", "busy"), ("9", "failed")],
)
def test_every_simulated_outcome_is_reachable_by_the_last_digit(
    client, tenant_a, last_digit, status
):
    application = application_for(client, tenant_a, phone_no=f"+1415555012{last_digit}")
    call = get_call(client, tenant_a, instant_call(client, tenant_a, application).json["id"])
    assert call["status"] == status
    assert (call["assessment"] is not None) == (status == "completed")


def test_application_questions_are_asked_after_the_jobs(client, tenant_a):
    application = application_for(client, tenant_a)
    added = client.post(
        f"/v1/jobs/{application['job_id'] if 'job_id' in application else application['job']['id']}"
        "/questions",
        json={
            "question_text": "Can you start on Monday?",
            "source_id": "q-app",
            "application_id": application["id"],
        },
        headers=tenant_a.headers,
    )
    assert added.status_code == 201
    call = get_call(client, tenant_a, instant_call(client, tenant_a, application).json["id"])
    assert [a["question"] for a in call["assessment"]["answers"]] == [
        *JOB_QUESTIONS,
        "Can you start on Monday?",
    ]


def test_unknown_application_is_404_and_another_tenants_too(client, tenant_a, tenant_b):
    application = application_for(client, tenant_a)
    for tenant, application_id in (
        (tenant_a, "6f1c1c1e-0000-4000-8000-000000000000"),
        (tenant_a, "nope"),
        (tenant_b, application["id"]),
    ):
        response = client.post(
            f"/v1/applications/{application_id}/instant-call", headers=tenant.headers
        )
        assert response.status_code == 404 and response.json["error"]["type"] == "not_found"


def test_candidate_without_phone_number_is_422(app, client, tenant_a):
    from plugins.candidates.models import Candidate

    application = application_for(client, tenant_a)
    candidate_id = (
        application["candidate_id"]
        if "candidate_id" in application
        else application["candidate"]["id"]
    )
    with app.app_context(), database.connection_context():
        Candidate.update(phone_no=None).where(Candidate.id == candidate_id).execute()
    response = instant_call(client, tenant_a, application)
    assert response.status_code == 422 and "phone" in response.json["error"]["message"]


def test_another_tenants_call_is_404(client, tenant_a, tenant_b):
    call = instant_call(client, tenant_a, application_for(client, tenant_a)).json
    assert client.get(f"/v1/calls/{call['id']}", headers=tenant_b.headers).status_code == 404
    assert client.get("/v1/calls/not-a-uuid", headers=tenant_a.headers).status_code == 404


def test_list_filters(client, tenant_a, tenant_b):
    job = create_job_with_questions(client, tenant_a)
    first = application_for(client, tenant_a, job=job)
    second = application_for(client, tenant_a, job=job, phone_no="+14155550107")
    other_job = application_for(client, tenant_a)
    calls = [instant_call(client, tenant_a, a).json for a in (first, second, other_job)]
    instant_call(client, tenant_b, application_for(client, tenant_b))

    def listed(query):
        response = client.get(f"/v1/calls?page=1&size=10{query}", headers=tenant_a.headers)
        assert response.status_code == 200, response.json
        return [c["id"] for c in response.json["data"]]

    assert listed("") == [c["id"] for c in calls]
    assert listed(f"&job_id={job['id']}") == [calls[0]["id"], calls[1]["id"]]
    assert listed(f"&job_source_id={job['source_id']}") == [calls[0]["id"], calls[1]["id"]]
    assert listed(f"&application_id={second['id']}") == [calls[1]["id"]]
    assert listed(f"&candidate_id={calls[2]['candidate_id']}") == [calls[2]["id"]]
    assert listed(f"&candidate_source_id={calls[0]['candidate_source_id']}") == [calls[0]["id"]]
    assert listed("&status=no_answer") == [calls[1]["id"]]
    assert listed("&application_source_id=none-such") == []
    page = client.get("/v1/calls?page=2&size=2", headers=tenant_a.headers).json
    assert page["total"] == 3 and page["total_pages"] == 2 and len(page["data"]) == 1


@pytest.mark.parametrize(
    "query",
    [
        "",
        "?page=1",
        "?page=1&size=101",
        "?page=1&size=5&job_id=abc",
        "?page=1&size=5&candidate_id=12",
        "?page=1&size=5&application_id=x",
        "?page=1&size=5&status=ringing-ish",
    ],
)
def test_bad_list_queries_are_422(client, tenant_a, query):
    assert client.get(f"/v1/calls{query}", headers=tenant_a.headers).status_code == 422


def test_calls_need_a_bearer_key(client):
    assert client.get("/v1/calls?page=1&size=5").status_code == 401


# ---- on a real RQ worker against Redis
# ----------------------------------------------------------------------------


def test_instant_call_on_a_worker_goes_queued_to_completed_and_409_while_active(
    make_app, redis_url, tenant_a
):
    app = make_app(REDIS_URL=redis_url)
    client = app.test_client()
    application = application_for(client, tenant_a)
    call = instant_call(client, tenant_a, application).json
    assert get_call(client, tenant_a, call["id"])["status"] == "queued"
    second = instant_call(client, tenant_a, application)
    assert second.status_code == 409 and second.json["error"]["existing_id"] == call["id"]

    work_until(app, lambda: get_call(client, tenant_a, call["id"])["status"] == "completed")
    done = get_call(client, tenant_a, call["id"])
    assert (
        JOB_QUESTIONS[1] in done["summary"]
        and done["assessment"]["answers"][1]["question"] == JOB_QUESTIONS[1]
    )
    assert instant_call(client, tenant_a, application).status_code == 202  # nothing active any more


def test_a_call_activity_webhook_gets_one_signed_delivery_per_status_change(
    make_app, redis_url, tenant_a, httpserver
):
    httpserver.expect_request("/calls").respond_with_data("ok")
    app = make_app(REDIS_URL=redis_url)
    client = app.test_client()
    webhook = create_webhook(
        client,
        tenant_a,
        httpserver.url_for("/calls"),
        triggered_event="call_activity",
        fields=["id", "status", "candidate_id", "job_id"],
        http_method="PUT",
    )
    call = instant_call(client, tenant_a, application_for(client, tenant_a)).json
    work_until(app, lambda: len(httpserver.log) >= 4)
    payloads = [verified_payload(request, webhook["secret"]) for request, _ in httpserver.log]
    assert sorted(p["status"] for p in payloads) == sorted(
        ["queued", "ringing", "in_progress", "completed"]
    )
    for payload in payloads:
        assert payload == {
            "id": call["id"],
            "status": payload["status"],
            "candidate_id": call["candidate_id"],
            "job_id": call["job_id"],
        }
    assert {request.method for request, _ in httpserver.log} == {"PUT"}
    assert len({request.headers["webhook-id"] for request, _ in httpserver.log}) == 4
