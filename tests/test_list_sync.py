"""Incremental sync on every /v1 list: updated_after/updated_before windows, signed keyset cursors
that never skip a record changed during a walk, and question tombstones."""

from __future__ import annotations

import datetime as dt
import re
import threading
import time

import pytest

from app.data.db import database, utcnow
from plugins.jobs.models import Job
from tests.factories import create_job, job_body
from tests.tenant_records import ok, seed_records

WALK_SIZE = 37


def record_lists(app) -> list:
    """Every GET /v1 rule whose documented answer is {data: [records with updated_at]}: the lists
    that sync."""
    spec = app.test_client().get("/openapi.json").json
    schemas = spec["components"]["schemas"]

    def resolve(schema):
        while "$ref" in schema:
            schema = schemas[schema["$ref"].rsplit("/", 1)[1]]
        return schema

    found = []
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/v1/") or "GET" not in rule.methods:
            continue
        path = rule.rule
        for name in rule.arguments:
            path = path.replace(f"<{name}>", "{" + name + "}")
        operation = spec["paths"].get(path, {}).get("get")
        answer = (
            (operation or {})
            .get("responses", {})
            .get("200", {})
            .get("content", {})
            .get("application/json", {})
        )
        body = resolve(answer.get("schema", {}))
        items = body.get("properties", {}).get("data", {}).get("items")
        if items and "updated_at" in resolve(items).get("properties", {}):
            found.append((rule.rule, operation))
    return found


def fill(rule: str, ids: dict) -> str:
    for name, value in ids.items():
        rule = rule.replace(f"<{name}>", str(value))
    return rule


def test_every_record_list_takes_the_sync_arguments_and_walks_by_cursor(app, client, tenant_a):
    ids = seed_records(client, tenant_a)
    lists = record_lists(app)
    assert {
        "/v1/jobs",
        "/v1/candidates",
        "/v1/applications",
        "/v1/calls",
        "/v1/jobs/<job_id>/questions",
        "/v1/tenant-webhook",
        "/v1/tenant-webhook/<tenant_webhook_id>/deliveries",
    } <= {rule for rule, _ in lists}
    for rule, operation in lists:
        path = fill(rule, ids)
        names = {parameter["name"] for parameter in operation.get("parameters", ())}
        assert {"updated_after", "updated_before", "cursor", "size"} <= names, rule
        first = ok(client.get(f"{path}?cursor=&size=1", headers=tenant_a.headers))
        assert (
            len(first["data"]) == 1
            and first["size"] == 1
            and "total" not in first
            and "page" not in first
        ), rule
        seen = [first["data"][0]["id"]]
        body = first
        while "next_cursor" in body:
            body = ok(
                client.get(
                    path,
                    query_string={"cursor": body["next_cursor"], "size": 1},
                    headers=tenant_a.headers,
                )
            )
            seen += [item["id"] for item in body["data"]]
        assert len(seen) == len(set(seen)), rule
        later = ok(
            client.get(
                f"{path}?cursor=&size=1&updated_after=2999-01-01T00:00:00Z",
                headers=tenant_a.headers,
            )
        )
        assert later["data"] == [] and "next_cursor" not in later, rule
        earlier = client.get(
            path,
            query_string={"cursor": "", "size": 100, "updated_before": "2000-01-01T00:00:00+02:00"},
            headers=tenant_a.headers,
        )
        assert earlier.status_code == 200 and earlier.json["data"] == [], rule
        for bad in ("2026-11-23T08:00:00", "yesterday"):
            refused = client.get(
                path,
                query_string={"cursor": "", "size": 5, "updated_after": bad},
                headers=tenant_a.headers,
            )
            assert (
                refused.status_code == 422 and "updated_after" in refused.json["error"]["fields"]
            ), (rule, bad)
        if "page" in names:
            both = client.get(f"{path}?page=1&cursor=&size=5", headers=tenant_a.headers)
            assert both.status_code == 422 and both.json["error"]["type"] == "validation_error", (
                rule
            )
            paged = ok(
                client.get(
                    f"{path}?page=1&size=5&updated_after=2000-01-01T00:00:00Z",
                    headers=tenant_a.headers,
                )
            )
            assert paged["total"] == len(paged["data"]) >= 1 and paged["page"] == 1, rule


def test_page_mode_still_requires_page(client, tenant_a):
    response = client.get("/v1/jobs?size=5", headers=tenant_a.headers)
    assert response.status_code == 422 and "page" in response.json["error"]["fields"]


def test_updated_after_windows_page_mode(client, tenant_a):
    old = create_job(client, tenant_a)
    time.sleep(0.01)
    mark = utcnow().isoformat() + "Z"
    time.sleep(0.01)
    new = create_job(client, tenant_a)
    page = ok(
        client.get(
            "/v1/jobs",
            query_string={"page": 1, "size": 10, "updated_after": mark},
            headers=tenant_a.headers,
        )
    )
    assert [item["id"] for item in page["data"]] == [new["id"]] and page["total"] == 1
    page = ok(
        client.get(
            "/v1/jobs",
            query_string={"page": 1, "size": 10, "updated_before": mark},
            headers=tenant_a.headers,
        )
    )
    assert [item["id"] for item in page["data"]] == [old["id"]]


def test_times_show_milliseconds_and_the_largest_updated_at_seen_excludes_every_record_seen(
    app, client, tenant_a
):
    """Answers show updated_at to the millisecond and updated_after/updated_before compare at that
    precision, though the database keeps microseconds: a sync that passes the largest updated_at it
    has seen gets none of those again."""
    jobs = [create_job(client, tenant_a) for _ in range(3)]
    stored = [
        dt.datetime(2026, 11, 26, 18, 13, 9, 123456),
        dt.datetime(2026, 11, 26, 18, 13, 9, 123789),
        dt.datetime(2026, 11, 26, 18, 13, 9, 500001),
    ]
    with app.app_context(), database.connection_context():
        for job, updated_at in zip(jobs, stored):
            Job.update(updated_at=updated_at).where(Job.id == job["id"]).execute()

    def ids(**window) -> list[str]:
        page = ok(
            client.get(
                "/v1/jobs", query_string={"page": 1, "size": 10, **window}, headers=tenant_a.headers
            )
        )
        return sorted(item["id"] for item in page["data"])

    seen = ok(
        client.get("/v1/jobs", query_string={"page": 1, "size": 10}, headers=tenant_a.headers)
    )["data"]
    shown = sorted(item["updated_at"] for item in seen)
    assert shown == [
        "2026-11-26T18:13:09.123Z",
        "2026-11-26T18:13:09.123Z",
        "2026-11-26T18:13:09.500Z",
    ]
    assert all(
        re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", item["created_at"]) for item in seen
    )
    assert ids(updated_after=shown[-1]) == []
    assert ids(updated_after=shown[0]) == [jobs[2]["id"]]
    assert ids(updated_before=shown[-1]) == sorted([jobs[0]["id"], jobs[1]["id"]])
    assert ids(updated_before=shown[0]) == []
    walked = ok(
        client.get(
            "/v1/jobs",
            query_string={"cursor": "", "size": 10, "updated_after": shown[0]},
            headers=tenant_a.headers,
        )
    )
    assert [item["id"] for item in walked["data"]] == [jobs[2]["id"]]


def test_a_cursor_is_bound_to_its_tenant_list_and_filters_and_refuses_tampering(
    client, tenant_a, tenant_b
):
    for _ in range(3):
        create_job(client, tenant_a)
        create_job(client, tenant_b)
    cursor = ok(client.get("/v1/jobs?cursor=&size=1", headers=tenant_a.headers))["next_cursor"]
    assert ok(
        client.get("/v1/jobs", query_string={"cursor": cursor, "size": 1}, headers=tenant_a.headers)
    )["data"]
    middle = len(cursor) // 2
    tampered = cursor[:middle] + ("A" if cursor[middle] != "A" else "B") + cursor[middle + 1 :]
    refusals = [
        client.get(
            "/v1/jobs", query_string={"cursor": tampered, "size": 1}, headers=tenant_a.headers
        ),
        client.get(
            "/v1/jobs", query_string={"cursor": "not-a-cursor", "size": 1}, headers=tenant_a.headers
        ),
        client.get(
            "/v1/jobs", query_string={"cursor": cursor, "size": 1}, headers=tenant_b.headers
        ),
        client.get(
            "/v1/candidates", query_string={"cursor": cursor, "size": 1}, headers=tenant_a.headers
        ),
        client.get(
            "/v1/jobs",
            query_string={"cursor": cursor, "size": 1, "status": "open"},
            headers=tenant_a.headers,
        ),
    ]
    for response in refusals:
        assert response.status_code == 400, response.json
        assert response.json["status"] == 400 and response.json["error"]["type"] == "invalid_cursor"


def test_a_walk_sees_every_record_and_every_change_made_during_it(app, tenant_a):
    """1,000 jobs walked 37 at a time while another thread edits and creates jobs: nothing is
    skipped."""
    with app.app_context(), database.connection_context():
        now = utcnow()
        rows = []
        for n in range(1000):
            body = job_body(title=f"initial-{n}")
            body["description"] = body.pop("desc")
            rows.append(
                {
                    **body,
                    "tenant": tenant_a.id,
                    "number": 100_000 + n,
                    "created_at": now,
                    "updated_at": now,
                }
            )
        with database.atomic():
            for start in range(0, len(rows), 200):
                Job.insert_many(rows[start : start + 200]).execute()
        initial = {str(job.id): job.title for job in Job.select(Job.id, Job.title)}
    assert len(initial) == 1000
    changes: list[tuple[str, str]] = []
    total_changes = 120
    progress = threading.Semaphore(0)
    failures: list = []

    def change_records():
        writer = app.test_client()
        try:
            ordered_ids = sorted(initial)
            for n in range(total_changes):
                if n % 4 == 3:
                    created = create_job(writer, tenant_a, title=f"created-{n}")
                    changes.append((created["id"], created["title"]))
                else:
                    job_id = ordered_ids[(n * 389) % len(ordered_ids)]
                    updated = writer.patch(
                        f"/v1/jobs/{job_id}",
                        json={"title": f"changed-{n}"},
                        headers=tenant_a.headers,
                    )
                    assert updated.status_code == 200, updated.json
                    changes.append((job_id, f"changed-{n}"))
                progress.release()
        except BaseException as error:  # surfaced by the walker's assertion below
            failures.append(error)
            for _ in range(total_changes):
                progress.release()

    writer_thread = threading.Thread(target=change_records)
    writer_thread.start()
    reader = app.test_client()
    seen: set[tuple[str, str]] = set()
    body = ok(
        reader.get(
            "/v1/jobs", query_string={"cursor": "", "size": WALK_SIZE}, headers=tenant_a.headers
        )
    )
    pages, acquired = 1, 0
    while True:
        assert len(body["data"]) <= WALK_SIZE and "total" not in body
        seen.update((item["id"], item["title"]) for item in body["data"])
        # the writer keeps pace; the last pages come after its end
        while acquired < min(pages * 5, total_changes):
            assert progress.acquire(timeout=30)
            acquired += 1
        # 1,000 / 37 pages at least, so the writer was done before this last one
        if "next_cursor" not in body:
            assert acquired == total_changes
            break
        body = ok(
            reader.get(
                "/v1/jobs",
                query_string={"cursor": body["next_cursor"], "size": WALK_SIZE},
                headers=tenant_a.headers,
            )
        )
        pages += 1
    writer_thread.join(timeout=60)
    assert not failures, failures
    seen_ids = {record_id for record_id, _ in seen}
    assert set(initial) <= seen_ids
    assert len(changes) == total_changes and set(changes) <= seen, sorted(set(changes) - seen)[:5]


def test_deleted_questions_are_tombstones_only_sync_sees(client, tenant_a):
    job = create_job(client, tenant_a)
    base = f"/v1/jobs/{job['id']}/questions"
    kept = ok(
        client.post(
            base, json={"question_text": "Kept?", "source_id": "q-kept"}, headers=tenant_a.headers
        ),
        201,
    )
    gone = ok(
        client.post(
            base, json={"question_text": "Gone?", "source_id": "q-gone"}, headers=tenant_a.headers
        ),
        201,
    )
    assert client.delete(f"{base}/{gone['id']}", headers=tenant_a.headers).status_code == 204
    assert client.get(f"{base}/{gone['id']}", headers=tenant_a.headers).status_code == 404
    assert client.delete(f"{base}/{gone['id']}", headers=tenant_a.headers).status_code == 404
    listed = ok(client.get(base, headers=tenant_a.headers))["data"]
    assert [item["id"] for item in listed] == [kept["id"]] and listed[0]["deleted"] is False
    walked = ok(
        client.get(
            base,
            query_string={"cursor": "", "size": 10, "include_deleted": "true"},
            headers=tenant_a.headers,
        )
    )["data"]
    assert [item["id"] for item in walked] == [kept["id"], gone["id"]]  # the deletion moved it last
    assert walked[1]["deleted"] is True and walked[1]["deleted_at"].endswith("Z")
    assert walked[1]["updated_at"] >= walked[0]["updated_at"]
    again = client.post(
        base,
        json={"question_text": "Gone, again?", "source_id": "q-gone"},
        headers=tenant_a.headers,
    )
    assert again.status_code == 201  # a tombstone holds no source_id


@pytest.mark.parametrize("size", ["0", "101"])
def test_cursor_size_is_bounded(client, tenant_a, size):
    response = client.get(
        "/v1/jobs", query_string={"cursor": "", "size": size}, headers=tenant_a.headers
    )
    assert response.status_code == 422 and "size" in response.json["error"]["fields"]
