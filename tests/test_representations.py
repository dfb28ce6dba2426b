"""GET by id and the lists answer the stored row on every read: never a stale or another tenant's answer."""

import uuid

import pytest

from app.http.api import Blueprint
from app.http.record_routes import add_read_route
from app.data.db import database
from plugins.jobs.models import Job
from plugins.jobs.schemas import JobSchema
from tests.factories import create_candidate, create_job


def test_read_answers_what_the_write_answered_with_the_usual_headers(client, tenant_a):
    job = create_job(client, tenant_a)
    for _ in range(2):
        got = client.get(f"/v1/jobs/{job['id']}", headers=tenant_a.headers)
        assert got.status_code == 200 and got.json == job
        assert got.content_type == "application/json"
        assert got.headers["X-Request-Id"] and got.headers["X-RateLimit-Limit"]


def test_an_update_through_the_api_is_seen_by_the_next_read(client, tenant_a):
    job = create_job(client, tenant_a, title="Night nurse")
    client.get(f"/v1/jobs/{job['id']}", headers=tenant_a.headers)
    client.patch(f"/v1/jobs/{job['id']}", json={"title": "Day nurse"}, headers=tenant_a.headers)
    assert client.get(f"/v1/jobs/{job['id']}", headers=tenant_a.headers).json["title"] == "Day nurse"


def test_a_change_made_outside_this_process_is_seen_by_the_next_read(app, client, tenant_a):
    """Another worker, a migration or an operator's SQL: the row is read on every request, so nothing stale is answered
    even when updated_at did not move."""
    job = create_job(client, tenant_a, status="open")
    assert client.get(f"/v1/jobs/{job['id']}", headers=tenant_a.headers).json["status"] == "open"
    with app.app_context(), database.connection_context():
        Job.update(status="closed").where(Job.id == uuid.UUID(job["id"])).execute()
    again = client.get(f"/v1/jobs/{job['id']}", headers=tenant_a.headers).json
    assert again["status"] == "closed" and again["updated_at"] == job["updated_at"]


def test_another_tenant_gets_404_for_a_record_already_read(client, tenant_a, tenant_b):
    candidate = create_candidate(client, tenant_a)
    assert client.get(f"/v1/candidates/{candidate['id']}", headers=tenant_a.headers).status_code == 200
    response = client.get(f"/v1/candidates/{candidate['id']}", headers=tenant_b.headers)
    assert response.status_code == 404 and response.json["error"]["type"] == "not_found"


def test_a_polled_call_shows_each_change_the_worker_writes(app, client, tenant_a):
    """Clients poll GET /v1/calls/:id while a worker moves the call along: every poll answers the stored call."""
    from plugins.calls.models import Call
    from tests.call_factories import application_for, instant_call

    call_id = instant_call(client, tenant_a, application_for(client, tenant_a)).json["id"]
    first = client.get(f"/v1/calls/{call_id}", headers=tenant_a.headers).json
    assert first["status"] == "completed" and first["assessment"] is not None
    with app.app_context(), database.connection_context():
        Call.update(summary="Re-analysed: strong fit").where(Call.id == uuid.UUID(call_id)).execute()
    again = client.get(f"/v1/calls/{call_id}", headers=tenant_a.headers).json
    assert again["summary"] == "Re-analysed: strong fit" and again["transcript"] == first["transcript"]


def test_a_list_page_answers_what_the_generic_page_dump_answers(app, client, tenant_a):
    from app.http.api import page_schema
    from plugins.jobs import services

    for n in range(7):
        create_job(client, tenant_a, source_id=f"page-{n}", status="open" if n % 2 else "closed")
    for query in ("page=1&size=3", "page=3&size=3", "page=2&size=2&status=OPEN", "page=9&size=5"):
        got = client.get(f"/v1/jobs?{query}", headers=tenant_a.headers)
        args = dict(pair.split("=") for pair in query.split("&"))
        with app.test_request_context(), database.connection_context():
            expected = page_schema(JobSchema)().dump(services.list_jobs(tenant_a.id, page=int(args.pop("page")),
                                                                        size=int(args.pop("size")), **args))
        assert got.status_code == 200 and got.json == expected


def test_a_list_shows_a_change_made_outside_this_process(app, client, tenant_a):
    candidate = create_candidate(client, tenant_a)
    assert client.get("/v1/candidates?page=1&size=10", headers=tenant_a.headers).json["data"][0]["city"] == candidate["city"]
    with app.app_context(), database.connection_context():
        from plugins.candidates.models import Candidate
        Candidate.update(city="Lisbon").where(Candidate.id == uuid.UUID(candidate["id"])).execute()
    assert client.get("/v1/candidates?page=1&size=10", headers=tenant_a.headers).json["data"][0]["city"] == "Lisbon"


def test_a_record_route_must_name_one_record():
    """The registrars take the record's id from the rule's one variable; a rule with none or two fails as it is
    registered, not on a request."""
    with pytest.raises(ValueError, match="one path variable"):
        add_read_route(Blueprint("nested", __name__, url_prefix="/v1/jobs/<job_id>/notes"), "/<note_id>", Job, JobSchema,
                       summary="Read")
    with pytest.raises(ValueError, match="one path variable"):
        add_read_route(Blueprint("bare", __name__), "/latest", Job, JobSchema, summary="Read")
