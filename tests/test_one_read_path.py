"""REST and MCP answer a record and a list through the same service and the same schema dump."""

from __future__ import annotations

from tests.factories import create_application, create_job
from tests.test_mcp_protocol import tool_result


def test_an_application_and_its_list_answer_the_same_over_rest_and_mcp(client, tenant_a):
    first = create_application(client, tenant_a)
    create_application(client, tenant_a)
    rest_record = client.get(f"/v1/applications/{first['id']}", headers=tenant_a.headers).json
    mcp_record = tool_result(client, tenant_a, "get_application", {"application_id": first["id"]})
    assert mcp_record["structuredContent"] == rest_record
    assert (
        rest_record["candidate"]["id"] == first["candidate_id"]
        and rest_record["job"]["id"] == first["job_id"]
    )
    rest_page = client.get("/v1/applications?page=1&size=20", headers=tenant_a.headers).json
    mcp_page = tool_result(client, tenant_a, "list_applications", {"page": 1, "size": 20})[
        "structuredContent"
    ]
    assert mcp_page == rest_page and rest_page["total"] == 2


def test_a_changed_job_is_answered_changed_at_once_by_id_and_in_its_list(client, tenant_a):
    job = create_job(client, tenant_a, title="Night Nurse")
    for _ in range(2):  # read twice: nothing kept from the first read answers the second
        assert (
            client.get(f"/v1/jobs/{job['id']}", headers=tenant_a.headers).json["title"]
            == "Night Nurse"
        )
    changed = client.patch(
        f"/v1/jobs/{job['id']}", json={"title": "Day Nurse"}, headers=tenant_a.headers
    )
    assert changed.status_code == 200
    assert client.get(f"/v1/jobs/{job['id']}", headers=tenant_a.headers).json == changed.json
    listed = client.get("/v1/jobs?page=1&size=20", headers=tenant_a.headers).json["data"]
    assert [item for item in listed if item["id"] == job["id"]] == [changed.json]
    mcp_record = tool_result(client, tenant_a, "get_job", {"job_id": job["id"]})[
        "structuredContent"
    ]
    assert mcp_record == changed.json
