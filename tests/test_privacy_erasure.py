"""DELETE /v1/candidates/:id erases a candidate and everything theirs, on SQLite and PostgreSQL: no
table, stored answer, delivery, log row or resume file holds their name, email, phone number or
resume bytes afterwards; what stays is tombstones for sync walks, events with id and type only, a
candidate.deleted event, and the erasure log."""

from __future__ import annotations

import threading
import time
from urllib.parse import parse_qsl, urlsplit

import pytest
from werkzeug.serving import make_server

from tests.factories import create_candidate, create_job, pdf_bytes
from tests.privacy_factories import (
    a_person,
    candidate_body,
    candidate_with_everything,
    files_holding,
    rows_holding,
)

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT


def erase(client, tenant, candidate_id):
    return client.delete(f"/v1/candidates/{candidate_id}", headers=tenant.headers)


def test_erasure_leaves_no_personal_data_in_any_table_stored_answer_or_resume_file(
    app, client, tenant_a, db_url, httpserver
):
    httpserver.expect_request("/hooks").respond_with_data("ok")
    person, bystander = a_person(), a_person()
    held = candidate_with_everything(client, tenant_a, person, httpserver.url_for("/hooks"))
    kept = candidate_with_everything(
        client, tenant_a, bystander, httpserver.url_for("/hooks"), job=held.job
    )
    assert rows_holding(db_url, person.needles)  # the scan sees them before
    assert files_holding(app.config["RESUME_DIR"], person.resume)

    assert erase(client, tenant_a, held.candidate["id"]).status_code == 204

    assert rows_holding(db_url, person.needles) == []
    assert files_holding(app.config["RESUME_DIR"], person.resume) == []
    for path in (
        f"/v1/candidates/{held.candidate['id']}",
        f"/v1/applications/{held.application['id']}",
        f"/v1/calls/{held.call['id']}",
        f"/v1/candidates/{held.candidate['id']}/export",
    ):
        assert client.get(path, headers=tenant_a.headers).status_code == 404, path
    # gone: a second erasure finds nothing
    assert erase(client, tenant_a, held.candidate["id"]).status_code == 404
    # the other candidate of the same tenant and job keeps everything
    assert client.get(f"/v1/calls/{kept.call['id']}", headers=tenant_a.headers).json["transcript"]
    assert files_holding(app.config["RESUME_DIR"], bystander.resume)
    assert rows_holding(db_url, {"bystander": bystander.email.encode()})


def test_a_retried_create_after_erasure_replays_a_note_and_makes_nothing_again(
    client, tenant_a, httpserver
):
    person = a_person()
    held = candidate_with_everything(client, tenant_a, person, httpserver.url_for("/hooks"))
    assert erase(client, tenant_a, held.candidate["id"]).status_code == 204
    retried = client.post(
        "/v1/candidates",
        json=candidate_body(person),
        headers={**tenant_a.headers, "Idempotency-Key": person.create_key},
    )
    assert retried.status_code == 201 and retried.headers["Idempotent-Replayed"] == "true"
    assert retried.headers["Idempotent-Answer-Omitted"] == "erased"
    assert retried.json["answer_omitted"] == "erased" and person.email not in retried.get_data(
        as_text=True
    )
    listed = client.get(
        "/v1/candidates",
        query_string={"page": 1, "size": 100, "email": person.email},
        headers=tenant_a.headers,
    ).json
    assert listed["total"] == 0


def test_events_keep_id_and_type_and_a_candidate_deleted_event_reaches_feed_and_webhook(
    client, tenant_a, httpserver
):
    httpserver.expect_request("/hooks").respond_with_data("ok")
    person = a_person()
    held = candidate_with_everything(client, tenant_a, person, httpserver.url_for("/hooks"))
    before = client.get("/v1/events", query_string={"size": 100}, headers=tenant_a.headers).json[
        "data"
    ]
    assert erase(client, tenant_a, held.candidate["id"]).status_code == 204

    after = client.get("/v1/events", query_string={"size": 100}, headers=tenant_a.headers).json[
        "data"
    ]
    by_id = {event["id"]: event for event in after}
    for event in before:  # same ids and types; the payload is the record id and nothing else
        assert by_id[event["id"]]["type"] == event["type"]
        assert by_id[event["id"]]["payload"] == {"id": event["payload"]["id"], "erased": True}
    deleted = client.get(
        "/v1/events",
        query_string={"size": 100, "type": "candidate.deleted"},
        headers=tenant_a.headers,
    ).json["data"]
    assert [event["payload"]["id"] for event in deleted] == [held.candidate["id"]]
    assert deleted[0]["payload"]["deleted"] is True and deleted[0]["payload"][
        "application_ids"
    ] == [held.application["id"]]
    sent = [
        request.get_json() for request, _ in httpserver.log if request.get_json().get("deleted")
    ]
    assert sent == [
        {"id": held.candidate["id"], "deleted": True, "application_ids": [held.application["id"]]}
    ]


def walk(client, tenant, path: str, size: int = 2) -> list[dict]:
    items, cursor = [], ""
    while True:
        page = client.get(
            urlsplit(path).path,
            headers=tenant.headers,
            query_string={**dict(parse_qsl(urlsplit(path).query)), "cursor": cursor, "size": size},
        )
        assert page.status_code == 200, page.json
        items += page.json["data"]
        cursor = page.json.get("next_cursor")
        if not cursor:
            return items


def test_cursor_walks_show_tombstones_of_the_candidate_and_applications(
    client, tenant_a, httpserver
):
    person = a_person()
    held = candidate_with_everything(client, tenant_a, person, httpserver.url_for("/hooks"))
    others = [create_candidate(client, tenant_a) for _ in range(3)]
    assert erase(client, tenant_a, held.candidate["id"]).status_code == 204
    create_candidate(client, tenant_a)  # written after the erasure: walks past the tombstone

    candidates = walk(client, tenant_a, "/v1/candidates")
    tombstone = [item for item in candidates if item["id"] == held.candidate["id"]]
    assert tombstone == [
        {
            "id": held.candidate["id"],
            "deleted": True,
            "deleted_at": tombstone[0]["deleted_at"],
            "updated_at": tombstone[0]["deleted_at"],
        }
    ]
    assert {other["id"] for other in others} < {item["id"] for item in candidates}
    assert len(candidates) == 5 and len({item["id"] for item in candidates}) == 5
    stamps = [item["updated_at"] for item in candidates]
    assert stamps == sorted(stamps)  # one (updated_at, id) order for rows and tombstones
    windowed = walk(
        client,
        tenant_a,
        "/v1/candidates?updated_after=2000-01-01T00:00:00Z&updated_before=2999-01-01T00:00:00Z",
    )
    assert windowed == candidates  # a window holding every row holds every tombstone too
    before = client.get(
        "/v1/candidates",
        query_string={"cursor": "", "size": 10, "updated_before": "2000-01-01T00:00:00Z"},
        headers=tenant_a.headers,
    ).json
    assert before["data"] == []
    applications = walk(client, tenant_a, "/v1/applications")
    assert [item for item in applications if item["id"] == held.application["id"]][0][
        "deleted"
    ] is True
    # page mode and filtered walks never show tombstones
    paged = client.get(
        "/v1/candidates", query_string={"page": 1, "size": 100}, headers=tenant_a.headers
    ).json
    assert (
        held.candidate["id"] not in {item["id"] for item in paged["data"]} and paged["total"] == 4
    )
    filtered = client.get(
        "/v1/candidates",
        query_string={"cursor": "", "size": 100, "source_id": "nothing"},
        headers=tenant_a.headers,
    ).json
    assert filtered["data"] == []


def test_erasure_log_has_ids_and_counts_for_the_tenant_only(
    client, tenant_a, tenant_b, db_url, httpserver
):
    person = a_person()
    held = candidate_with_everything(client, tenant_a, person, httpserver.url_for("/hooks"))
    # another tenant's candidate
    assert erase(client, tenant_b, held.candidate["id"]).status_code == 404
    assert erase(client, tenant_a, held.candidate["id"]).status_code == 204
    log = client.get(
        "/v1/privacy/erasures", query_string={"page": 1, "size": 10}, headers=tenant_a.headers
    )
    assert log.status_code == 200 and log.json["total"] == 1
    entry = log.json["data"][0]
    assert (
        entry["candidate_id"] == held.candidate["id"]
        and entry["reason"] == "request"
        and entry["key_id"]
    )
    assert entry["record_ids"]["applications"] == [held.application["id"]]
    assert entry["record_ids"]["calls"] == [held.call["id"]]
    assert (
        entry["counts"]["applications"] == 1
        and entry["counts"]["calls"] == 1
        and entry["counts"]["questions"] == 1
    )
    assert entry["counts"]["resume_files"] == 2 and entry["counts"]["stored_answers"] >= 2
    assert entry["counts"]["events"] >= 4 and entry["counts"]["webhook_deliveries"] >= 4
    assert (
        client.get(
            "/v1/privacy/erasures", query_string={"page": 1, "size": 10}, headers=tenant_b.headers
        ).json["total"]
        == 0
    )
    assert (
        client.get(
            "/v1/privacy/erasures", query_string={"size": 10}, headers=tenant_a.headers
        ).status_code
        == 422
    )


def test_a_resume_file_another_record_of_the_tenant_names_stays(app, client, tenant_a):
    shared = pdf_bytes("A resume two candidates sent")
    first = a_person()
    first.resume = shared
    second = a_person()
    second.resume = shared
    one = client.post("/v1/candidates", json=candidate_body(first), headers=tenant_a.headers).json
    two = client.post("/v1/candidates", json=candidate_body(second), headers=tenant_a.headers).json
    assert erase(client, tenant_a, one["id"]).status_code == 204
    assert len(files_holding(app.config["RESUME_DIR"], shared)) == 1
    assert client.get(f"/v1/candidates/{two['id']}/resume", headers=tenant_a.headers).data == shared
    assert erase(client, tenant_a, two["id"]).status_code == 204
    assert files_holding(app.config["RESUME_DIR"], shared) == []


def test_a_queued_scheduled_call_is_canceled_and_never_dials(client, tenant_a):
    from tests.call_factories import application_for

    application = application_for(client, tenant_a)
    schedule = client.patch(
        f"/v1/jobs/{application['job_id']}/scheduling",
        json={"scheduling": True},
        headers=tenant_a.headers,
    )
    assert schedule.status_code == 200
    # move the application out and back to ACTIVE: a scheduled series arms (queued for the job's
    # window)
    for stage in ("PASSIVE", "ACTIVE"):
        moved = client.patch(
            f"/v1/applications/{application['id']}",
            json={"source_application_status": "applied", "application_stage": stage},
            headers=tenant_a.headers,
        )
        assert moved.status_code == 200
    calls = client.get(
        "/v1/calls",
        query_string={"page": 1, "size": 10, "application_id": application["id"]},
        headers=tenant_a.headers,
    ).json["data"]
    assert erase(client, tenant_a, application["candidate_id"]).status_code == 204
    assert (
        client.get(
            "/v1/calls",
            query_string={"page": 1, "size": 10, "application_id": application["id"]},
            headers=tenant_a.headers,
        ).json["total"]
        == 0
    )
    log = client.get(
        "/v1/privacy/erasures", query_string={"page": 1, "size": 10}, headers=tenant_a.headers
    ).json
    assert log["data"][0]["counts"]["calls"] == len(calls)


@pytest.fixture
def racing_app(make_app):
    """The app with room for every racing request of one tenant at once, behind a threaded server on
    127.0.0.1."""
    app = make_app(TENANT_MAX_IN_FLIGHT=64)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield app, f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(timeout=5)


@pytest.mark.parametrize("round_", range(3))
def test_an_erasure_racing_writes_to_the_candidate_leaves_no_orphan(
    racing_app, tenant_a, db_url, round_
):
    import base64

    import requests

    app, live_url = racing_app
    client = app.test_client()
    person = a_person()
    candidate = client.post(
        "/v1/candidates", json=candidate_body(person), headers=tenant_a.headers
    ).json
    jobs = [create_job(client, tenant_a) for _ in range(6)]
    results: list[int] = []
    start = threading.Barrier(len(jobs) + 2)

    def apply(job):
        start.wait()
        answer = requests.post(
            f"{live_url}/v1/applications",
            headers=tenant_a.headers,
            timeout=30,
            json={
                "candidate_source_id": candidate["source_id"],
                "job_source_id": job["source_id"],
                "source_application_status": "applied",
                "application_stage": "PASSIVE",
                "base64file": base64.b64encode(person.resume + job["id"].encode()).decode(),
            },
        )
        results.append(answer.status_code)

    def update():
        start.wait()
        body = candidate_body(
            person, base64file=base64.b64encode(person.resume + b"% new\n").decode()
        )
        answer = requests.patch(
            f"{live_url}/v1/candidates/{candidate['id']}",
            headers=tenant_a.headers,
            timeout=30,
            json={
                key: value for key, value in body.items() if key not in ("base64file", "file_name")
            },
        )
        results.append(answer.status_code)

    threads = [threading.Thread(target=apply, args=(job,)) for job in jobs] + [
        threading.Thread(target=update)
    ]
    for thread in threads:
        thread.start()
    start.wait()
    time.sleep(round_ * 0.03)  # the erasure lands before, among and after the writes
    erased = requests.delete(
        f"{live_url}/v1/candidates/{candidate['id']}", headers=tenant_a.headers, timeout=30
    )
    for thread in threads:
        thread.join(timeout=60)
    assert erased.status_code == 204
    # 422: no candidate with that source_id
    assert all(status in (200, 201, 404, 422) for status in results), results
    assert rows_holding(db_url, person.needles) == []
    assert files_holding(app.config["RESUME_DIR"], person.resume) == []
    log = client.get(
        "/v1/privacy/erasures", query_string={"page": 1, "size": 10}, headers=tenant_a.headers
    ).json
    # every application written was erased
    assert log["data"][0]["counts"]["applications"] == results.count(201)


def test_a_retried_erasure_with_its_idempotency_key_replays_204(client, tenant_a):
    candidate = create_candidate(client, tenant_a)
    headers = {**tenant_a.headers, "Idempotency-Key": "erase-once"}
    first = client.delete(f"/v1/candidates/{candidate['id']}", headers=headers)
    again = client.delete(f"/v1/candidates/{candidate['id']}", headers=headers)
    assert (
        first.status_code == again.status_code == 204
        and again.headers["Idempotent-Replayed"] == "true"
    )
    log = client.get(
        "/v1/privacy/erasures", query_string={"page": 1, "size": 10}, headers=tenant_a.headers
    ).json
    assert log["total"] == 1
    assert (
        client.delete(f"/v1/candidates/{candidate['id']}", headers=tenant_a.headers).status_code
        == 404
    )
