"""A list answers each record exactly as the record's own GET does, in both list modes: lists read
their rows in the shape that is cheapest for them, and a client must never see the difference."""

from __future__ import annotations

import base64

import pytest

from tests.factories import create_application, create_candidate, create_job, pdf_bytes


def listed(client, tenant, path: str) -> list[dict]:
    """Every item of the list, once by page and once by cursor walk (which must agree)."""
    page = client.get(f"{path}?page=1&size=100", headers=tenant.headers)
    assert page.status_code == 200, page.json
    walked, cursor = [], ""
    while True:
        answer = client.get(f"{path}?size=2&cursor={cursor}", headers=tenant.headers)
        assert answer.status_code == 200, answer.json
        walked += answer.json["data"]
        cursor = answer.json.get("next_cursor")
        if not cursor:
            break
    assert sorted(walked, key=lambda item: item["id"]) == sorted(
        page.json["data"], key=lambda item: item["id"]
    )
    return page.json["data"]


@pytest.mark.parametrize("path", ["/v1/jobs", "/v1/candidates", "/v1/applications"])
def test_each_listed_record_is_what_its_get_answers(client, tenant_a, path):
    resume = base64.b64encode(pdf_bytes()).decode()
    first = create_application(client, tenant_a, base64file=resume, file_name="jane.pdf")
    create_application(client, tenant_a, file="https://ats.example.com/resumes/2")
    create_application(client, tenant_a)
    create_job(
        client, tenant_a, city=None, min_pay_rate=50, max_pay_rate=70, pay_frequency="hourly"
    )
    create_candidate(client, tenant_a, last_name=None)
    items = listed(client, tenant_a, path)
    assert len(items) == {"/v1/jobs": 4, "/v1/candidates": 4, "/v1/applications": 3}[path]
    for item in items:
        record = client.get(f"{path}/{item['id']}", headers=tenant_a.headers)
        assert record.status_code == 200
        assert item == record.json
    if path == "/v1/applications":
        with_resume = next(item for item in items if item["id"] == first["id"])
        assert (
            with_resume["resume"]["file_name"] == "jane.pdf"
            and with_resume["candidate"]["first_name"] == "Jane"
        )
