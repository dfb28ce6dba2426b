"""Page mode's exact totals read from the counts the database keeps (app.data.row_counts, migration
012): after every kind of write (create, status change, upsert, refused duplicate, cascading delete,
bulk insert, concurrent writers) each list's `total` is still the number of rows a full count finds,
per tenant and per status."""

from __future__ import annotations

import threading

import pytest
import requests
from peewee import fn

from app.data import row_counts
from app.data.db import database, is_postgres
from plugins.applications.models import Application
from plugins.candidates.models import Candidate
from plugins.jobs.models import Job
from tests.conftest import DB_BACKENDS
from tests.factories import create_application, create_candidate, create_job, job_body
from tests.tenant_records import ok
from tests.test_fault_drills import gunicorn_server  # noqa: F401 - the fixture: the app under gunicorn, 2 workers

STATUS_FILTERS = (None, "open", "OPEN", "Closed", "on hold")


def counted(model, tenant_id: str, status: str | None = None) -> int:
    query = model.select().where(model.tenant == tenant_id)
    if status is not None:
        query = query.where(fn.LOWER(Job.status) == status.lower())
    return query.count()


def upsert_body(**overrides) -> dict:
    return {name: value for name, value in job_body(**overrides).items() if name != "source_id"}


def total(client, tenant, path: str, **filters) -> int:
    query = "&".join(f"{name}={value}" for name, value in filters.items() if value is not None)
    return ok(
        client.get(f"{path}?page=1&size=5" + (f"&{query}" if query else ""), headers=tenant.headers)
    )["total"]


def assert_totals_exact(client, app, *tenants) -> None:
    with app.app_context():
        for tenant in tenants:
            for status in STATUS_FILTERS:
                assert total(client, tenant, "/v1/jobs", status=status) == counted(
                    Job, tenant.id, status
                ), (tenant.id, status)
            assert total(client, tenant, "/v1/candidates") == counted(Candidate, tenant.id)
            assert total(client, tenant, "/v1/applications") == counted(Application, tenant.id)


def test_totals_follow_creates_status_changes_upserts_refusals_and_deletes(
    app, client, tenant_a, tenant_b
):
    jobs = [
        create_job(client, tenant_a, source_id=f"j{n}", status=status)
        for n, status in enumerate(("Open", "open", "OPEN", "closed", "On Hold", "Paused"))
    ]
    create_job(client, tenant_b, source_id="b1", status="open")
    assert_totals_exact(client, app, tenant_a, tenant_b)
    assert total(client, tenant_a, "/v1/jobs", status="open") == 3

    ok(
        client.patch(
            f"/v1/jobs/{jobs[0]['id']}",
            headers=tenant_a.headers,
            json={"title": jobs[0]["title"], "status": "Closed"},
        )
    )
    ok(
        client.patch(
            f"/v1/jobs/{jobs[5]['id']}",
            headers=tenant_a.headers,
            json={"title": jobs[5]["title"], "status": "open"},
        )
    )
    ok(
        client.patch(
            f"/v1/jobs/{jobs[1]['id']}", headers=tenant_a.headers, json={"title": "Night nurse"}
        )
    )
    ok(
        client.put(
            "/v1/jobs/by-source-id/j3", headers=tenant_a.headers, json=upsert_body(status="open")
        )
    )
    ok(
        client.put(
            "/v1/jobs/by-source-id/new-one",
            headers=tenant_a.headers,
            json=upsert_body(status="open"),
        ),
        201,
    )
    refused = client.post(
        "/v1/jobs", headers=tenant_a.headers, json=job_body(source_id="j1", status="open")
    )
    assert refused.status_code == 409
    assert_totals_exact(client, app, tenant_a, tenant_b)
    assert total(client, tenant_a, "/v1/jobs", status="open") == 5

    candidate = create_candidate(client, tenant_a, source_id="c1")
    for job in jobs[:3]:
        create_application(client, tenant_a, candidate=candidate, job=job)
    assert_totals_exact(client, app, tenant_a, tenant_b)
    assert total(client, tenant_a, "/v1/applications") == 3

    # an operator's delete cascades to the job's applications
    with app.app_context(), database.atomic():
        Job.delete().where(Job.id == jobs[0]["id"]).execute()
    assert_totals_exact(client, app, tenant_a, tenant_b)
    assert total(client, tenant_a, "/v1/applications") == 2

    with app.app_context():  # a write that rolls back leaves the counts as they were
        with pytest.raises(RuntimeError), database.atomic():
            Job.delete().where(Job.tenant == tenant_a.id).execute()
            raise RuntimeError("abort")
    assert_totals_exact(client, app, tenant_a, tenant_b)


def test_filters_the_counts_do_not_answer_still_count_their_rows(client, tenant_a):
    create_job(client, tenant_a, source_id="a", status="open", city="Austin")
    create_job(client, tenant_a, source_id="b", status="open", city="Boston")
    assert total(client, tenant_a, "/v1/jobs", status="open") == 2
    assert total(client, tenant_a, "/v1/jobs", status="open", city="austin") == 1
    assert total(client, tenant_a, "/v1/jobs", updated_after="2000-01-01T00:00:00Z") == 2
    assert total(client, tenant_a, "/v1/jobs", updated_after="2999-01-01T00:00:00Z") == 0


@pytest.mark.parametrize("db_url", [DB_BACKENDS[1]], indirect=True)
def test_postgres_bulk_insert_adds_one_delta_and_readers_fold_them(app, client, tenant_a):
    template = create_job(client, tenant_a, source_id="template", status="open")
    with app.app_context():
        # the benchmark's way to a big tenant: one INSERT ... SELECT over generate_series
        database.execute_sql(
            "INSERT INTO jobs (id, tenant_id, number, source_id, title, status, created_at, "
            "updated_at) "
            "SELECT gen_random_uuid(), tenant_id, 100 + g, 'bulk-' || g, title, CASE WHEN g %% 2 = "
            "0 THEN 'Open' "
            "ELSE 'closed' END, created_at, updated_at FROM generate_series(1, 1000) AS g, jobs "
            "WHERE id = %s",
            (template["id"],),
        )
        deltas = (
            row_counts.TenantRowCount.select()
            .where(row_counts.TenantRowCount.tenant_id == tenant_a.id)
            .count()
        )
    # the template's row (+ its bucket), then one per bucket of the bulk statement
    assert deltas <= 3 + 1
    assert total(client, tenant_a, "/v1/jobs") == 1001
    assert total(client, tenant_a, "/v1/jobs", status="open") == 501

    for n in range(row_counts.FOLD_AT + 5):
        create_job(client, tenant_a, source_id=f"one-{n}", status="open")
    assert total(client, tenant_a, "/v1/jobs", status="open") == 501 + row_counts.FOLD_AT + 5
    with app.app_context():
        left = (
            row_counts.TenantRowCount.select()
            .where(row_counts.TenantRowCount.tenant_id == tenant_a.id)
            .count()
        )
    assert left <= 2, "a reader past FOLD_AT folds the list's deltas into one row per bucket"
    assert_totals_exact(client, app, tenant_a)


@pytest.mark.slow
def test_concurrent_writers_and_readers_on_gunicorn_keep_the_totals_exact(
    app,
    gunicorn_server,  # noqa: F811
    tenant_a,
):
    # six clients of one tenant: past its fair share
    live_url, _ = gunicorn_server(HIREKIT_TENANT_MAX_IN_FLIGHT="16")
    errors = []

    def write(worker: int) -> None:
        with requests.Session() as session:
            for n in range(25):
                answer = session.post(
                    f"{live_url}/v1/jobs",
                    headers=tenant_a.headers,
                    json=job_body(source_id=f"w{worker}-{n}", status="open" if n % 2 else "closed"),
                )
                if answer.status_code != 201:
                    errors.append(answer.text)

    def read() -> None:
        with requests.Session() as session:
            # past FOLD_AT deltas: PostgreSQL readers fold while writers write
            for _ in range(row_counts.FOLD_AT):
                answer = session.get(
                    f"{live_url}/v1/jobs?page=1&size=1&status=open", headers=tenant_a.headers
                )
                if answer.status_code != 200:
                    errors.append(answer.text)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)] + [
        threading.Thread(target=read) for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with app.app_context():
        assert counted(Job, tenant_a.id) == 100
    client = app.test_client()
    assert_totals_exact(client, app, tenant_a)
    assert total(client, tenant_a, "/v1/jobs", status="open") == 4 * 12
    with app.app_context():  # SQLite keeps one counter row per bucket
        assert (
            is_postgres()
            or row_counts.TenantRowCount.select()
            .where(row_counts.TenantRowCount.tenant_id == tenant_a.id)
            .count()
            == 2
        )


def test_page_totals_are_read_from_the_counts_not_counted(app, client, tenant_a):
    create_job(client, tenant_a, source_id="x", status="Open", city="Austin")
    # a count the triggers did not make: only a reader of the counts can answer it
    with app.app_context():
        row_counts.TenantRowCount.update(total=row_counts.TenantRowCount.total + 1000).where(
            row_counts.TenantRowCount.tenant_id == tenant_a.id
        ).execute()
    assert total(client, tenant_a, "/v1/jobs") == 1001
    assert total(client, tenant_a, "/v1/jobs", status="OPEN") == 1001
    # counted: a filter counts don't keep
    assert total(client, tenant_a, "/v1/jobs", status="open", city="Austin") == 1
    assert total(client, tenant_a, "/v1/jobs", updated_after="2000-01-01T00:00:00Z") == 1
    assert ok(client.get("/v1/jobs?cursor=&size=5", headers=tenant_a.headers)).get("total") is None
