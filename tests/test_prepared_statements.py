"""Kept list statements (app.data.prepared) answer each request with its own values: the tenant,
filters, window and page of one request never leak into another's answer, on both databases."""

from __future__ import annotations

import uuid

import peewee as pw

from app.data import prepared
from app.data.db import database
from app.data.list_rows import uuid_text
from app.data.prepared import Slots
from plugins.jobs.models import Job
from tests.factories import create_application, create_job


def _jobs(client, tenant, query: str) -> dict:
    answer = client.get(f"/v1/jobs?{query}", headers=tenant.headers)
    assert answer.status_code == 200, answer.get_json()
    return answer.get_json()


def _create_jobs(client, tenant, statuses: dict[str, str]) -> None:
    for source_id, status in statuses.items():
        create_job(client, tenant, source_id=source_id, status=status)


def test_one_shape_answers_each_tenant_and_filter_value_with_its_own_rows(
    client, tenant_a, tenant_b
):
    _create_jobs(client, tenant_a, {"a1": "Open", "a2": "closed", "a3": "open"})
    _create_jobs(client, tenant_b, {"b1": "open", "b2": "CLOSED"})

    def source_ids(tenant, query):
        return sorted(job["source_id"] for job in _jobs(client, tenant, query)["data"])

    # the same shape (tenant, status, page) run with other values each time
    assert source_ids(tenant_a, "page=1&size=10&status=OPEN") == ["a1", "a3"]
    assert source_ids(tenant_b, "page=1&size=10&status=open") == ["b1"]
    assert source_ids(tenant_a, "page=1&size=10&status=closed") == ["a2"]
    assert source_ids(tenant_b, "page=1&size=10&status=Closed") == ["b2"]
    # page and size are values of the same statement too
    first = _jobs(client, tenant_a, "page=1&size=2")
    second = _jobs(client, tenant_a, "page=2&size=2")
    assert (first["total"], len(first["data"]), len(second["data"])) == (3, 2, 1)
    shown = [job["source_id"] for job in first["data"] + second["data"]]
    assert sorted(shown) == ["a1", "a2", "a3"]


def test_cursor_pages_of_one_shape_move_on_with_each_cursor(client, tenant_a, tenant_b):
    _create_jobs(client, tenant_a, {f"a{n}": "open" for n in range(5)})
    _create_jobs(client, tenant_b, {"b1": "open"})
    seen, cursor = [], ""
    while True:
        page = _jobs(client, tenant_a, f"size=2&cursor={cursor}")
        seen += [job["source_id"] for job in page["data"]]
        cursor = page.get("next_cursor")
        if not cursor:
            break
    assert sorted(seen) == [f"a{n}" for n in range(5)] and len(seen) == 5
    assert [job["source_id"] for job in _jobs(client, tenant_b, "size=2&cursor=")["data"]] == ["b1"]


def test_a_foreign_key_filter_is_converted_like_the_field_converts_it(client, tenant_a):
    first, second = create_job(client, tenant_a), create_job(client, tenant_a)
    for job in (first, second, second):
        create_application(client, tenant_a, job=job)
    for job, expected in ((first, 1), (second, 2)):
        for mode in ("page=1", "cursor="):
            listed = client.get(
                f"/v1/applications?{mode}&size=10&job_id={job['id']}", headers=tenant_a.headers
            ).get_json()
            assert len(listed["data"]) == expected
            assert {item["job"]["id"] for item in listed["data"]} == {job["id"]}


def test_statements_are_kept_per_shape_not_per_value(app, tenant_a, tenant_b):
    def build(slots: Slots):
        query = Job.select(Job.source_id).where(Job.tenant == slots.value("tenant", Job.tenant))
        if "status" in slots:
            query = query.where(pw.fn.LOWER(Job.status) == slots.lowered("status"))
        return query.order_by(Job.source_id)

    with app.app_context(), database.connection_context():
        for tenant, status in ((tenant_a, "open"), (tenant_b, "closed")):
            Job.create(
                tenant=tenant.id, number=1, source_id=f"{tenant.id}-x", title="T", status=status
            )

        def run(values):
            statement = prepared.statement(("test-jobs",), build, values)
            return statement, [row[0] for row in statement.run(values).fetchall()]

        first, rows_a = run({"tenant": tenant_a.id, "status": "OPEN"})
        second, rows_b = run({"tenant": tenant_b.id, "status": "Closed"})
        assert (rows_a, rows_b) == ([f"{tenant_a.id}-x"], [f"{tenant_b.id}-x"])
        assert second is first  # one shape, one statement
        unfiltered, rows = run({"tenant": tenant_b.id})
        assert unfiltered is not first and rows == [f"{tenant_b.id}-x"]
        assert run({"tenant": tenant_a.id, "status": "closed"})[1] == []


def test_uuid_text_is_the_text_answers_show_from_either_driver():
    value = uuid.uuid4()
    for driver_value in (value.hex, str(value), str(value).upper(), value.hex.upper(), value):
        assert uuid_text(driver_value) == str(value)
    assert uuid_text(None) is None


def test_one_key_kept_in_two_page_orders_answers_each_order(app, tenant_a):
    from app.data.list_rows import model_rows
    from app.http import listing

    def matching(slots: Slots):
        return Job.owned_rows(slots.value("tenant", Job.tenant))

    with app.app_context(), database.connection_context():
        for number, source_id in ((1, "c"), (2, "a"), (3, "b")):
            Job.create(tenant=tenant_a.id, number=number, source_id=source_id, title="T")
        selection = listing.Selection(Job, matching, {"tenant": tenant_a.id}, key="test-order")

        def page(order):
            body = listing.paginate(
                selection, page=1, size=10, order_by=order, total=3, read=model_rows(Job)
            )
            return [row["source_id"] for row in body["data"]]

        assert page((Job.number,)) == ["c", "a", "b"]
        assert page((Job.source_id,)) == ["a", "b", "c"]
        assert page((Job.number,)) == ["c", "a", "b"]
