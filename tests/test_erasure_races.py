"""An erasure racing writes to the same candidate, on SQLite and PostgreSQL: a racing write either
commits first and is erased with the rest, or finds the candidate gone (404); nothing personal is
left in any table, stored answer or resume file, and no race answers 500 or 503. The interleavings
that matter are forced with hooks that hold one request at a chosen point while the other runs; the
free-running trials add the ones no hook names."""

from __future__ import annotations

import base64
import io
import random
import threading

import pytest

from tests.call_factories import JOB_QUESTIONS, create_job_with_questions
from tests.factories import create_job
from tests.privacy_factories import a_person, candidate_body, files_holding, rows_holding

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

# seconds a held request waits for the test to let it go (never reached unless something hangs)
WAIT = 60


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def person_with_application(client, tenant, job=None):
    """A person, their candidate (with a resume) and an application (with its own resume)."""
    person = a_person()
    candidate = client.post("/v1/candidates", json=candidate_body(person), headers=tenant.headers)
    assert candidate.status_code == 201, candidate.json
    job = job or create_job_with_questions(client, tenant)
    application = client.post(
        "/v1/applications",
        headers=tenant.headers,
        json={
            "candidate_source_id": candidate.json["source_id"],
            "job_source_id": job["source_id"],
            "source_application_status": "applied",
            "application_stage": "ACTIVE",
            "base64file": b64(person.resume + b"% application\n"),
        },
    )
    assert application.status_code == 201, application.json
    return person, candidate.json, application.json


def assert_nothing_left(app, db_url, person):
    assert rows_holding(db_url, person.needles) == []
    assert files_holding(app.config["RESUME_DIR"], person.resume) == []


def files_equal(app, data: bytes) -> list:
    """The stored files holding exactly these bytes."""
    return [
        path for path in files_holding(app.config["RESUME_DIR"], data) if path.read_bytes() == data
    ]


class Held:
    """Hold a request inside `target` (a module attribute) until released: `reached` is set when it
    gets there."""

    def __init__(self, monkeypatch, module, name: str, *, after: bool = True):
        self.reached, self.go = threading.Event(), threading.Event()
        original = getattr(module, name)

        def held(*args, **kwargs):
            if not after:
                self.pause()
            result = original(*args, **kwargs)
            if after:
                self.pause()
            return result

        monkeypatch.setattr(module, name, held)

    def pause(self):
        if not self.reached.is_set():
            self.reached.set()
            assert self.go.wait(WAIT)


def in_thread(run) -> tuple[threading.Thread, list]:
    answers: list = []
    thread = threading.Thread(target=lambda: answers.append(run()), daemon=True)
    thread.start()
    return thread, answers


def finish(thread: threading.Thread, answers: list):
    thread.join(WAIT)
    assert not thread.is_alive()
    return answers[0]


def test_a_patch_with_a_resume_that_read_before_the_erasure_and_writes_after_it_is_404_and_keeps_nothing(  # noqa: E501 - the test's name
    app, tenant_a, db_url, monkeypatch
):
    from plugins.applications import services

    client = app.test_client()
    person, candidate, application = person_with_application(client, tenant_a)
    # the PATCH has read the application, stored its resume
    hold = Held(monkeypatch, services.uploads, "take_from")
    thread, answers = in_thread(
        lambda: app.test_client().patch(
            f"/v1/applications/{application['id']}",
            headers=tenant_a.headers,
            json={
                "source_application_status": "interview",
                "application_stage": "ACTIVE",
                "base64file": b64(person.resume + b"% replaced\n"),
            },
        )
    )
    assert hold.reached.wait(WAIT)
    assert (
        client.delete(f"/v1/candidates/{candidate['id']}", headers=tenant_a.headers).status_code
        == 204
    )
    hold.go.set()
    patched = finish(thread, answers)
    assert patched.status_code == 404, patched.json
    assert_nothing_left(app, db_url, person)


def test_an_erasure_waits_for_a_patch_inside_its_transaction_and_erases_what_it_wrote(
    app, tenant_a, db_url, monkeypatch
):
    from plugins.applications import services

    client = app.test_client()
    person, candidate, application = person_with_application(client, tenant_a)
    # the PATCH's row written, its event not yet
    hold = Held(monkeypatch, services, "apply_changes")
    patch, patched = in_thread(
        lambda: app.test_client().patch(
            f"/v1/applications/{application['id']}",
            headers=tenant_a.headers,
            json={
                "source_application_status": "interview",
                "application_stage": "ACTIVE",
                "base64file": b64(person.resume + b"% replaced\n"),
            },
        )
    )
    assert hold.reached.wait(WAIT)
    erase, erased = in_thread(
        lambda: app.test_client().delete(
            f"/v1/candidates/{candidate['id']}", headers=tenant_a.headers
        )
    )
    # the erasure is (or will be) waiting for the PATCH's transaction; either way it comes after
    erase.join(0.2)
    hold.go.set()
    assert finish(patch, patched).status_code == 200
    assert finish(erase, erased).status_code == 204
    assert_nothing_left(app, db_url, person)


def test_an_anonymization_racing_a_patch_leaves_no_old_value_in_any_event(
    app, tenant_a, db_url, monkeypatch
):
    from plugins.applications import services

    client = app.test_client()
    person, candidate, application = person_with_application(client, tenant_a)
    hold = Held(monkeypatch, services.uploads, "take_from")
    thread, answers = in_thread(
        lambda: app.test_client().patch(
            f"/v1/applications/{application['id']}",
            headers=tenant_a.headers,
            json={"source_application_status": "interview", "application_stage": "ACTIVE"},
        )
    )
    assert hold.reached.wait(WAIT)
    anonymized = client.post(
        f"/v1/candidates/{candidate['id']}/anonymize",
        headers=tenant_a.headers,
        json={"fields": ["first_name", "last_name", "email", "phone_no", "resume"]},
    )
    assert anonymized.status_code == 200, anonymized.json
    hold.go.set()
    assert finish(thread, answers).status_code == 200
    assert_nothing_left(app, db_url, person)


def test_an_idempotent_answer_stored_after_the_erasure_replays_no_personal_data(
    app, tenant_a, db_url
):
    client = app.test_client()
    person = a_person()
    candidate = client.post(
        "/v1/candidates", json=candidate_body(person), headers=tenant_a.headers
    ).json
    job = create_job(client, tenant_a)
    endpoint = next(
        rule.endpoint
        for rule in app.url_map.iter_rules()
        if rule.rule == "/v1/applications" and "POST" in rule.methods
    )
    reached, go = threading.Event(), threading.Event()
    view = app.view_functions[endpoint]

    # the view's transaction committed, its answer not yet stored
    def committed_then_held(*args, **kwargs):
        answer = view(*args, **kwargs)
        reached.set()
        assert go.wait(WAIT)
        return answer

    app.view_functions[endpoint] = committed_then_held
    headers = {**tenant_a.headers, "Idempotency-Key": "apply-while-erased"}
    body = {
        "candidate_source_id": candidate["source_id"],
        "job_source_id": job["source_id"],
        "source_application_status": "applied",
        "application_stage": "PASSIVE",
    }
    thread, answers = in_thread(
        lambda: app.test_client().post("/v1/applications", headers=headers, json=body)
    )
    assert reached.wait(WAIT)
    assert (
        client.delete(f"/v1/candidates/{candidate['id']}", headers=tenant_a.headers).status_code
        == 204
    )
    go.set()
    assert finish(thread, answers).status_code == 201
    app.view_functions[endpoint] = view
    replay = client.post("/v1/applications", headers=headers, json=body)
    assert replay.status_code == 201 and replay.headers["Idempotent-Answer-Omitted"] == "erased"
    assert_nothing_left(app, db_url, person)


def test_an_instant_call_that_read_before_the_erasure_is_404_not_500(
    make_app, tenant_a, db_url, monkeypatch
):
    from plugins.calls import services

    app = make_app()
    client = app.test_client()
    person, candidate, application = person_with_application(client, tenant_a)
    hold = Held(monkeypatch, services, "get_owned")  # the application was read, nothing written yet
    thread, answers = in_thread(
        lambda: app.test_client().post(
            f"/v1/applications/{application['id']}/instant-call", headers=tenant_a.headers
        )
    )
    assert hold.reached.wait(WAIT)
    assert (
        client.delete(f"/v1/candidates/{candidate['id']}", headers=tenant_a.headers).status_code
        == 204
    )
    hold.go.set()
    called = finish(thread, answers)
    assert called.status_code == 404, called.json
    assert_nothing_left(app, db_url, person)


@pytest.mark.parametrize("trial", range(8))
def test_instant_calls_and_patches_racing_an_erasure_answer_4xx_or_success_and_leave_nothing(
    racing_app, tenant_a, db_url, trial
):
    """Free-running: two instant calls, a PATCH with a resume and the erasure start together at a
    barrier, the erasure a little later each trial."""
    app, _ = racing_app
    client = app.test_client()
    person, candidate, application = person_with_application(client, tenant_a)
    start = threading.Barrier(4)
    statuses: list[int] = []

    def call():
        start.wait()
        statuses.append(
            app.test_client()
            .post(f"/v1/applications/{application['id']}/instant-call", headers=tenant_a.headers)
            .status_code
        )

    def patch():
        start.wait()
        statuses.append(
            app.test_client()
            .patch(
                f"/v1/applications/{application['id']}",
                headers=tenant_a.headers,
                json={
                    "source_application_status": "interview",
                    "application_stage": "ACTIVE",
                    "base64file": b64(person.resume + b"%% trial %d\n" % trial),
                },
            )
            .status_code
        )

    threads = [threading.Thread(target=run, daemon=True) for run in (call, call, patch)]
    for thread in threads:
        thread.start()
    start.wait()
    threading.Event().wait(random.Random(trial).uniform(0, 0.05))
    erased = client.delete(f"/v1/candidates/{candidate['id']}", headers=tenant_a.headers)
    for thread in threads:
        thread.join(WAIT)
    assert erased.status_code == 204, erased.json
    assert all(status in (200, 202, 404, 409) for status in statuses), statuses
    assert_nothing_left(app, db_url, person)


@pytest.fixture
def racing_app(make_app):
    """An app with room for every racing request of one tenant at once."""
    return make_app(TENANT_MAX_IN_FLIGHT=64), None


def test_a_resume_replaced_or_refused_leaves_no_file_behind(app, tenant_a, db_url):
    client = app.test_client()
    person, candidate, application = person_with_application(client, tenant_a)
    first_candidate_resume, first_application_resume = (
        person.resume,
        person.resume + b"% application\n",
    )
    body = candidate_body(person, base64file=b64(person.resume + b"% second\n"))
    replaced = client.put(
        f"/v1/candidates/by-source-id/{body.pop('source_id')}", headers=tenant_a.headers, json=body
    )
    assert replaced.status_code == 200, replaced.json
    assert files_equal(app, first_candidate_resume) == []
    patched = client.patch(
        f"/v1/applications/{application['id']}",
        headers=tenant_a.headers,
        data={
            "source_application_status": "applied",
            "application_stage": "ACTIVE",
            "file": (io.BytesIO(person.resume + b"% third\n"), "cv.pdf"),
        },
        content_type="multipart/form-data",
    )
    assert patched.status_code == 200, patched.json
    assert files_equal(app, first_application_resume) == []
    refused = client.post(
        "/v1/candidates",
        headers=tenant_a.headers,
        json=candidate_body(person, base64file=b64(person.resume + b"% refused\n")),
    )
    assert refused.status_code == 409
    assert files_equal(app, person.resume + b"% refused\n") == []
    assert (
        client.delete(f"/v1/candidates/{candidate['id']}", headers=tenant_a.headers).status_code
        == 204
    )
    assert_nothing_left(app, db_url, person)


def test_an_erasure_keeps_the_other_items_of_a_stored_batch_answer(client, tenant_a):
    people = [a_person(), a_person()]
    headers = {**tenant_a.headers, "Idempotency-Key": "batch-of-two"}
    body = {"items": [candidate_body(person) for person in people]}
    first = client.put("/v1/candidates/by-source-id", headers=headers, json=body)
    assert first.status_code == 200 and first.json["created"] == 2
    erased_id, kept_id = first.json["items"][0]["id"], first.json["items"][1]["id"]
    assert client.delete(f"/v1/candidates/{erased_id}", headers=tenant_a.headers).status_code == 204
    replay = client.put("/v1/candidates/by-source-id", headers=headers, json=body)
    assert replay.status_code == 200 and replay.headers["Idempotent-Replayed"] == "true"
    assert (
        replay.json["items"][1] == first.json["items"][1]
        and replay.json["items"][1]["id"] == kept_id
    )
    assert replay.json["items"][0]["id"] == erased_id and replay.json["created"] == 2
    text = replay.get_data(as_text=True)
    assert all(
        value.decode() not in text for value in people[0].needles.values() if b"%PDF" not in value
    )


def test_a_replayed_error_whose_answer_was_erased_is_the_one_error_body(client, tenant_a):
    person = a_person()
    candidate = client.post(
        "/v1/candidates", json=candidate_body(person), headers=tenant_a.headers
    ).json
    job = create_job(client, tenant_a)
    body = {
        "candidate_source_id": candidate["source_id"],
        "job_source_id": job["source_id"],
        "source_application_status": "applied",
        "application_stage": "PASSIVE",
    }
    assert client.post("/v1/applications", headers=tenant_a.headers, json=body).status_code == 201
    headers = {**tenant_a.headers, "Idempotency-Key": "duplicate-application"}
    duplicate = client.post("/v1/applications", headers=headers, json=body)
    assert duplicate.status_code == 409
    assert (
        client.delete(f"/v1/candidates/{candidate['id']}", headers=tenant_a.headers).status_code
        == 204
    )
    replay = client.post("/v1/applications", headers=headers, json=body)
    assert replay.status_code == 409 and replay.headers["Idempotent-Answer-Omitted"] == "erased"
    assert set(replay.json) == {"status", "error"} and replay.json["status"] == 409
    assert (
        set(replay.json["error"]) >= {"type", "message"}
        and "erased" in replay.json["error"]["message"]
    )


def test_jobs_questions_are_untouched_by_an_erasure(client, tenant_a):
    job = create_job_with_questions(client, tenant_a)
    person, candidate, _ = person_with_application(client, tenant_a, job=job)
    assert (
        client.delete(f"/v1/candidates/{candidate['id']}", headers=tenant_a.headers).status_code
        == 204
    )
    questions = client.get(f"/v1/jobs/{job['id']}/questions", headers=tenant_a.headers).json
    assert [q["question_text"] for q in questions["data"]][: len(JOB_QUESTIONS)] == list(
        JOB_QUESTIONS
    )


def test_an_erasure_reads_only_the_stored_answers_naming_its_subject(app, tenant_a, caplog):
    """The stored answers naming a record are found by an index of the ids they name: the erasure's
    cost inside its transaction (SQLite's write lock) does not grow with every answer the tenant has
    stored."""
    import logging

    client = app.test_client()
    others = [a_person() for _ in range(20)]
    for number, other in enumerate(others):
        created = client.post(
            "/v1/candidates",
            json=candidate_body(other),
            headers={**tenant_a.headers, "Idempotency-Key": f"other-{number}"},
        )
        assert created.status_code == 201
    person = a_person()
    mine = {**tenant_a.headers, "Idempotency-Key": "mine"}
    candidate = client.post("/v1/candidates", json=candidate_body(person), headers=mine).json
    with caplog.at_level(logging.DEBUG, logger="peewee"):
        assert (
            client.delete(f"/v1/candidates/{candidate['id']}", headers=tenant_a.headers).status_code
            == 204
        )
    statements = [str(record.msg) for record in caplog.records if record.name == "peewee"]
    answers_read = [
        sql for sql in statements if 'FROM "idempotency_keys"' in sql and "'done'" in sql
    ]
    assert answers_read and all("idempotency_record_names" in sql for sql in answers_read)
    assert not [sql for sql in statements if "instr(" in sql.lower() or " like " in sql.lower()]
    log = client.get(
        "/v1/privacy/erasures", query_string={"page": 1, "size": 1}, headers=tenant_a.headers
    ).json
    assert log["data"][0]["counts"]["stored_answers"] == 1
    assert (
        client.post("/v1/candidates", json=candidate_body(person), headers=mine).headers[
            "Idempotent-Answer-Omitted"
        ]
        == "erased"
    )
    untouched = client.post(
        "/v1/candidates",
        json=candidate_body(others[0]),
        headers={**tenant_a.headers, "Idempotency-Key": "other-0"},
    )
    assert untouched.json["email"] == others[0].email
