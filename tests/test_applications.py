"""The applications family: create and update bodies, source-id resolution, stages, uniqueness,
events, filters and paging."""

import uuid

import pytest

from app.data.db import database
from app.data.events import Event
from plugins.applications.services import APPLICATION_ACTIVITY
from tests.factories import application_body, create_application, create_candidate, create_job

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

REQUIRED_ON_CREATE = [
    "candidate_source_id",
    "job_source_id",
    "source_application_status",
    "application_stage",
]


def events_of(app, tenant_id):
    with app.app_context(), database.connection_context():
        return list(Event.select().where(Event.tenant == tenant_id).order_by(Event.sequence))


def test_create_embeds_candidate_and_job_and_reads_back(client, tenant_a):
    candidate = create_candidate(client, tenant_a, first_name="Ana")
    job = create_job(client, tenant_a, title="ICU Nurse")
    application = create_application(
        client, tenant_a, candidate, job, source_application_status="new"
    )
    assert (
        application["candidate"]["id"] == candidate["id"]
        and application["candidate"]["first_name"] == "Ana"
    )
    assert application["job"]["id"] == job["id"] and application["job"]["title"] == "ICU Nurse"
    assert (application["candidate_id"], application["job_id"]) == (candidate["id"], job["id"])
    assert (
        application["source_application_status"] == "new"
        and application["application_stage"] == "ACTIVE"
    )
    assert (
        client.get(f"/v1/applications/{application['id']}", headers=tenant_a.headers).json
        == application
    )


@pytest.mark.parametrize("missing", REQUIRED_ON_CREATE)
def test_create_without_a_required_field_is_422_naming_it(client, tenant_a, missing):
    body = application_body(create_candidate(client, tenant_a), create_job(client, tenant_a))
    del body[missing]
    response = client.post("/v1/applications", json=body, headers=tenant_a.headers)
    assert response.status_code == 422 and list(response.json["error"]["fields"]) == [missing]


@pytest.mark.parametrize("field", ["job_source_id", "candidate_source_id"])
def test_unknown_source_id_is_422_naming_the_field_and_stores_nothing(app, client, tenant_a, field):
    body = application_body(
        create_candidate(client, tenant_a), create_job(client, tenant_a), **{field: "nope"}
    )
    response = client.post("/v1/applications", json=body, headers=tenant_a.headers)
    assert response.status_code == 422 and list(response.json["error"]["fields"]) == [field]
    assert (
        client.get("/v1/applications?page=1&size=10", headers=tenant_a.headers).json["total"] == 0
    )
    assert events_of(app, tenant_a.id) == []


def test_another_tenants_candidate_cannot_be_named(client, tenant_a, tenant_b):
    candidate = create_candidate(client, tenant_a)
    job = create_job(client, tenant_b)
    response = client.post(
        "/v1/applications", json=application_body(candidate, job), headers=tenant_b.headers
    )
    assert response.status_code == 422 and "candidate_source_id" in response.json["error"]["fields"]


def test_candidate_and_job_ids_must_agree_with_source_ids(client, tenant_a):
    candidate, job = create_candidate(client, tenant_a), create_job(client, tenant_a)
    other = create_candidate(client, tenant_a)
    wrong = client.post(
        "/v1/applications",
        json=application_body(candidate, job, candidate_id=other["id"]),
        headers=tenant_a.headers,
    )
    assert wrong.status_code == 422 and list(wrong.json["error"]["fields"]) == ["candidate_id"]
    wrong = client.post(
        "/v1/applications",
        json=application_body(candidate, job, job_id=str(uuid.uuid4())),
        headers=tenant_a.headers,
    )
    assert wrong.status_code == 422 and list(wrong.json["error"]["fields"]) == ["job_id"]
    right = client.post(
        "/v1/applications",
        json=application_body(candidate, job, candidate_id=candidate["id"], job_id=job["id"]),
        headers=tenant_a.headers,
    )
    assert right.status_code == 201


def test_duplicate_candidate_and_job_is_409_with_existing_id(app, client, tenant_a):
    candidate, job = create_candidate(client, tenant_a), create_job(client, tenant_a)
    first = create_application(client, tenant_a, candidate, job)
    again = client.post(
        "/v1/applications", json=application_body(candidate, job), headers=tenant_a.headers
    )
    assert again.status_code == 409 and again.json["error"]["existing_id"] == first["id"]
    assert len(events_of(app, tenant_a.id)) == 1


def test_duplicate_application_source_id_is_409(client, tenant_a):
    first = create_application(client, tenant_a, source_id="app-1")
    again = client.post(
        "/v1/applications",
        headers=tenant_a.headers,
        json=application_body(
            create_candidate(client, tenant_a), create_job(client, tenant_a), source_id="app-1"
        ),
    )
    assert again.status_code == 409 and again.json["error"]["existing_id"] == first["id"]


@pytest.mark.parametrize(
    "given, stored", [("active", "ACTIVE"), ("Passive", "PASSIVE"), (" ACTIVE ", "ACTIVE")]
)
def test_stage_in_any_case_is_stored_upper_case(client, tenant_a, given, stored):
    assert (
        create_application(client, tenant_a, application_stage=given)["application_stage"] == stored
    )


@pytest.mark.parametrize("stage", ["archived", "", 3])
def test_unknown_stage_is_422(client, tenant_a, stage):
    body = application_body(
        create_candidate(client, tenant_a), create_job(client, tenant_a), application_stage=stage
    )
    response = client.post("/v1/applications", json=body, headers=tenant_a.headers)
    assert response.status_code == 422 and "application_stage" in response.json["error"]["fields"]


def test_patch_changes_status_and_stage_and_requires_both(client, tenant_a):
    application = create_application(client, tenant_a)
    url = f"/v1/applications/{application['id']}"
    patched = client.patch(
        url,
        json={"source_application_status": "interview", "application_stage": "passive"},
        headers=tenant_a.headers,
    )
    assert patched.status_code == 200
    assert (patched.json["source_application_status"], patched.json["application_stage"]) == (
        "interview",
        "PASSIVE",
    )
    assert patched.json["candidate"] == application["candidate"]
    for missing in ("source_application_status", "application_stage"):
        body = {"source_application_status": "x", "application_stage": "ACTIVE"}
        del body[missing]
        response = client.patch(url, json=body, headers=tenant_a.headers)
        assert response.status_code == 422 and list(response.json["error"]["fields"]) == [missing]
    assert (
        client.patch(
            url,
            json={"source_application_status": "x", "application_stage": "gone"},
            headers=tenant_a.headers,
        ).status_code
        == 422
    )


def test_every_create_and_change_emits_the_record_as_answered(app, client, tenant_a, tenant_b):
    created = create_application(client, tenant_a)
    changed = client.patch(
        f"/v1/applications/{created['id']}",
        json={"source_application_status": "offer", "application_stage": "ACTIVE"},
        headers=tenant_a.headers,
    ).json
    events = events_of(app, tenant_a.id)
    assert [e.type for e in events] == [APPLICATION_ACTIVITY, APPLICATION_ACTIVITY]
    assert events[0].payload == created and events[1].payload == changed
    assert events[0].sequence < events[1].sequence and events[0].record_id == created["id"]
    assert events_of(app, tenant_b.id) == []


def test_list_filters_each_narrow_the_result(client, tenant_a):
    job_1, job_2 = create_job(client, tenant_a), create_job(client, tenant_a)
    ana, bo = create_candidate(client, tenant_a), create_candidate(client, tenant_a)
    a1 = create_application(client, tenant_a, ana, job_1, source_id="app-a1")
    a2 = create_application(client, tenant_a, bo, job_1)
    a3 = create_application(client, tenant_a, ana, job_2)

    def ids(query):
        response = client.get(f"/v1/applications?page=1&size=50&{query}", headers=tenant_a.headers)
        assert response.status_code == 200, response.json
        return [item["id"] for item in response.json["data"]]

    assert ids("") == [a1["id"], a2["id"], a3["id"]]
    assert ids(f"job_id={job_1['id']}") == [a1["id"], a2["id"]]
    assert ids(f"job_source_id={job_2['source_id']}") == [a3["id"]]
    assert ids(f"candidate_source_id={ana['source_id']}") == [a1["id"], a3["id"]]
    assert ids(f"candidate_id={bo['id']}") == [a2["id"]]
    assert ids("source_id=app-a1") == [a1["id"]]
    assert ids(f"job_id={job_2['id']}&candidate_source_id={bo['source_id']}") == []


def test_malformed_job_id_filter_is_422(client, tenant_a):
    response = client.get(
        "/v1/applications?page=1&size=10&job_id=not-a-uuid", headers=tenant_a.headers
    )
    assert response.status_code == 422 and "job_id" in response.json["error"]["fields"]


def test_pagination_of_250_applications(client, tenant_a):
    job = create_job(client, tenant_a)
    made = [
        create_application(client, tenant_a, create_candidate(client, tenant_a), job)["id"]
        for _ in range(250)
    ]
    seen = []
    for page in range(1, 6):
        body = client.get(f"/v1/applications?page={page}&size=50", headers=tenant_a.headers).json
        assert (body["total"], body["total_pages"], body["page"], body["size"]) == (
            250,
            5,
            page,
            50,
        )
        assert len(body["data"]) == 50
        seen.extend(item["id"] for item in body["data"])
    assert seen == made
    beyond = client.get("/v1/applications?page=6&size=50", headers=tenant_a.headers).json
    assert beyond["data"] == [] and beyond["total"] == 250
    last = client.get("/v1/applications?page=3&size=100", headers=tenant_a.headers).json
    assert len(last["data"]) == 50 and last["total_pages"] == 3


def test_list_does_not_query_per_row(app, client, tenant_a):
    job = create_job(client, tenant_a)
    for _ in range(12):
        create_application(client, tenant_a, create_candidate(client, tenant_a), job)
    executed = []
    real = database.obj.execute_sql

    def counting(sql, *args, **kwargs):
        executed.append(sql)
        return real(sql, *args, **kwargs)

    database.obj.execute_sql = counting
    try:
        response = client.get("/v1/applications?page=1&size=12", headers=tenant_a.headers)
    finally:
        del database.obj.execute_sql
    assert response.status_code == 200 and len(response.json["data"]) == 12
    application_queries = [sql for sql in executed if "applications" in sql]
    assert len(application_queries) <= 2, application_queries  # the count and the joined page


def test_other_tenants_applications_are_invisible(client, tenant_a, tenant_b):
    application = create_application(client, tenant_a)
    assert (
        client.get(f"/v1/applications/{application['id']}", headers=tenant_b.headers).status_code
        == 404
    )
    patched = client.patch(
        f"/v1/applications/{application['id']}",
        json={"source_application_status": "x", "application_stage": "ACTIVE"},
        headers=tenant_b.headers,
    )
    assert patched.status_code == 404
    assert (
        client.get("/v1/applications?page=1&size=10", headers=tenant_b.headers).json["total"] == 0
    )
    assert client.get("/v1/applications/not-a-uuid", headers=tenant_a.headers).status_code == 404
