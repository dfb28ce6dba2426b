"""GET /v1/candidates/:id/export lists every kind of record held about a candidate; POST
.../anonymize replaces named fields by a marker and keeps the record; on SQLite and PostgreSQL."""

from __future__ import annotations

from tests.privacy_factories import (
    a_person,
    candidate_body,
    candidate_with_everything,
    files_holding,
    rows_holding,
)


def test_the_export_lists_every_kind_of_record_held_about_the_candidate(
    client, tenant_a, tenant_b, httpserver
):
    httpserver.expect_request("/hooks").respond_with_data("ok")
    person = a_person()
    held = candidate_with_everything(client, tenant_a, person, httpserver.url_for("/hooks"))
    candidate_with_everything(
        client, tenant_a, a_person(), httpserver.url_for("/hooks"), job=held.job
    )  # not theirs

    answer = client.get(f"/v1/candidates/{held.candidate['id']}/export", headers=tenant_a.headers)
    assert answer.status_code == 200
    document = answer.json
    assert (
        document["candidate"]["email"] == person.email
        and document["candidate"]["id"] == held.candidate["id"]
    )
    assert [item["id"] for item in document["applications"]] == [held.application["id"]]
    # the job's own are not theirs
    assert [item["id"] for item in document["questions"]] == [held.question["id"]]
    assert [item["id"] for item in document["calls"]] == [held.call["id"]]
    call = document["calls"][0]
    assert (
        call["status"] == "completed"
        and call["transcript"]
        and call["summary"]
        and call["assessment"]["score"] >= 0
    )
    assert [
        (reminder["call_id"], reminder["channel"], reminder["address"], reminder["status"])
        for reminder in document["reminders"]
    ] == [(held.call["id"], "email", person.email, "sent")]
    assert [answer["question"] for answer in document["answers"]] == [
        a["question"] for a in held.call["assessment"]["answers"]
    ]
    assert all(answer["call_id"] == held.call["id"] for answer in document["answers"])
    event_records = {event["payload"]["id"] for event in document["events"]}
    assert event_records == {held.application["id"], held.call["id"]}
    assert {event["type"] for event in document["events"]} == {
        "application_activty",
        "call_activity",
    }
    delivered_events = {delivery["event_id"] for delivery in document["webhook_deliveries"]}
    assert delivered_events == {event["id"] for event in document["events"]}
    assert all(delivery["attempts"] for delivery in document["webhook_deliveries"])
    resumes = {resume["of"]: resume for resume in document["resumes"]}
    assert resumes["candidate"]["download"] == f"/v1/candidates/{held.candidate['id']}/resume"
    assert resumes["application"]["download"] == f"/v1/applications/{held.application['id']}/resume"
    assert (
        client.get(resumes["candidate"]["download"], headers=tenant_a.headers).data == person.resume
    )
    assert resumes["candidate"]["size"] == len(person.resume)
    assert (
        client.get(
            f"/v1/candidates/{held.candidate['id']}/export", headers=tenant_b.headers
        ).status_code
        == 404
    )
    assert (
        client.get("/v1/candidates/not-a-uuid/export", headers=tenant_a.headers).status_code == 404
    )


def test_anonymize_replaces_the_named_fields_and_keeps_the_record(
    app, client, tenant_a, db_url, httpserver
):
    person = a_person()
    held = candidate_with_everything(client, tenant_a, person, httpserver.url_for("/hooks"))
    answer = client.post(
        f"/v1/candidates/{held.candidate['id']}/anonymize",
        headers=tenant_a.headers,
        json={"fields": ["first_name", "last_name", "email", "phone_no", "resume", "call_content"]},
    )
    assert answer.status_code == 200, answer.json
    record = answer.json
    assert (
        record["id"] == held.candidate["id"] and record["source_id"] == held.candidate["source_id"]
    )
    assert {record[name] for name in ("first_name", "last_name", "email", "phone_no")} == {
        "[anonymized]"
    }
    assert record["city"] == "Oakland" and record["resume"] is None
    assert (
        client.get(f"/v1/candidates/{held.candidate['id']}", headers=tenant_a.headers).json
        == record
    )
    call = client.get(f"/v1/calls/{held.call['id']}", headers=tenant_a.headers).json
    assert (
        call["transcript"] == []
        and call["assessment"] is None
        and call["phone_no"] == "[anonymized]"
    )
    application = client.get(
        f"/v1/applications/{held.application['id']}", headers=tenant_a.headers
    ).json
    assert application["resume"] is None and application["source_application_status"] == "applied"
    assert rows_holding(db_url, person.needles) == []
    assert files_holding(app.config["RESUME_DIR"], person.resume) == []


def test_anonymize_refuses_unknown_or_no_fields_with_422(client, tenant_a, tenant_b, httpserver):
    held = candidate_with_everything(client, tenant_a, a_person(), httpserver.url_for("/hooks"))
    path = f"/v1/candidates/{held.candidate['id']}/anonymize"
    unknown = client.post(
        path, json={"fields": ["first_name", "shoe_size"]}, headers=tenant_a.headers
    )
    assert (
        unknown.status_code == 422
        and "shoe_size" not in unknown.json["error"]["fields"]["fields.1"][0]
    )
    assert "first_name" in unknown.json["error"]["fields"]["fields.1"][0]  # names what is accepted
    assert client.post(path, json={"fields": []}, headers=tenant_a.headers).status_code == 422
    assert client.post(path, json={}, headers=tenant_a.headers).status_code == 422
    assert (
        client.post(path, json={"fields": ["email"]}, headers=tenant_b.headers).status_code == 404
    )
    unchanged = client.get(f"/v1/candidates/{held.candidate['id']}", headers=tenant_a.headers).json
    assert unchanged["first_name"] == held.candidate["first_name"]


def test_the_export_is_never_stored_by_a_cache(client, tenant_a):
    person = a_person()
    candidate = client.post(
        "/v1/candidates", json=candidate_body(person), headers=tenant_a.headers
    ).json
    export = client.get(f"/v1/candidates/{candidate['id']}/export", headers=tenant_a.headers)
    assert export.status_code == 200 and export.headers["Cache-Control"] == "no-store"
