"""The /mcp jobs tools: same records as REST, tenant scoping, domain failures as isError results,
plugin-gated tools."""

from __future__ import annotations

import json

import jsonschema
import pytest

from tests.factories import create_job, job_body
from tests.test_mcp_protocol import call, tool_result

pytestmark = pytest.mark.plugins("jobs", "mcp")

JOBS_TOOLS = ["list_jobs", "get_job", "create_job", "update_job", "upsert_jobs"]


def listed_tools(client, tenant, path="/mcp") -> dict:
    response = call(client, tenant, "tools/list", {}, path=path)
    assert response.status_code == 200
    return {tool["name"]: tool for tool in response.json["result"]["tools"]}


def test_tool_definitions_carry_valid_schemas_and_behaviour_hints(client, tenant_a):
    tools = listed_tools(client, tenant_a)
    assert list(tools)[: len(JOBS_TOOLS)] == JOBS_TOOLS
    for tool in tools.values():
        assert 1 <= len(tool["name"]) <= 128 and tool["description"] and tool["title"]
        jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])
        jsonschema.Draft202012Validator.check_schema(tool["outputSchema"])
        assert tool["inputSchema"]["type"] == "object"
    create = tools["create_job"]["inputSchema"]
    assert set(create["required"]) == {
        "title",
        "industry",
        "state_name",
        "country",
        "recruiter_name",
        "recruiter_email",
        "recruiter_work_phone_no",
        "status",
        "desc",
        "source_id",
    }
    assert create["additionalProperties"] is False
    assert tools["list_jobs"]["inputSchema"]["properties"]["size"]["maximum"] == 100
    assert "required" not in tools["list_jobs"]["inputSchema"]  # page and size default for agents
    assert tools["get_job"]["annotations"]["readOnlyHint"] is True
    assert {
        k: tools["update_job"]["annotations"][k]
        for k in ("readOnlyHint", "destructiveHint", "idempotentHint")
    } == {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True}


def test_results_conform_to_their_output_schema(client, tenant_a):
    tools = listed_tools(client, tenant_a)
    job = create_job(client, tenant_a, min_pay_rate=40)
    for name, arguments in [("list_jobs", {"size": 5}), ("get_job", {"job_id": job["id"]})]:
        result = tool_result(client, tenant_a, name, arguments)
        assert result["isError"] is False
        jsonschema.validate(result["structuredContent"], tools[name]["outputSchema"])


def test_create_job_answers_the_rest_record_in_both_content_forms(client, tenant_a):
    result = tool_result(client, tenant_a, "create_job", job_body(title="Travel Nurse"))
    assert result["isError"] is False
    record = result["structuredContent"]
    assert client.get(f"/v1/jobs/{record['id']}", headers=tenant_a.headers).json == record
    assert json.loads(result["content"][0]["text"]) == record


def test_list_jobs_pages_and_filters_like_rest(client, tenant_a):
    for status in ("open", "closed", "open"):
        create_job(client, tenant_a, status=status)
    result = tool_result(client, tenant_a, "list_jobs", {"status": "OPEN", "page": 1, "size": 1})[
        "structuredContent"
    ]
    rest = client.get("/v1/jobs?status=OPEN&page=1&size=1", headers=tenant_a.headers).json
    assert result == rest and result["total"] == 2 and result["total_pages"] == 2


def test_update_job_changes_only_the_fields_sent(client, tenant_a):
    job = create_job(client, tenant_a, city="Oakland")
    result = tool_result(
        client,
        tenant_a,
        "update_job",
        {"job_id": job["id"], "title": "Senior RN", "status": "closed"},
    )
    updated = result["structuredContent"]
    assert (updated["title"], updated["status"], updated["city"]) == (
        "Senior RN",
        "closed",
        "Oakland",
    )


@pytest.mark.parametrize(
    "name, arguments, expected",
    [
        (
            "get_job",
            {"job_id": "6f1c1c1e-0000-4000-8000-000000000000"},
            "job 6f1c1c1e-0000-4000-8000-000000000000 not found",
        ),
        ("get_job", {"job_id": "not-a-uuid"}, "not found"),
        (
            "update_job",
            {"job_id": "6f1c1c1e-0000-4000-8000-000000000000", "title": "x"},
            "not found",
        ),
    ],
)
def test_a_missing_job_is_a_tool_error_not_a_protocol_error(
    client, tenant_a, name, arguments, expected
):
    result = tool_result(client, tenant_a, name, arguments)
    assert result["isError"] is True and expected in result["content"][0]["text"]
    assert "structuredContent" not in result


def test_a_duplicate_source_id_is_a_tool_error_naming_the_existing_job(client, tenant_a):
    job = create_job(client, tenant_a, source_id="ats-1")
    result = tool_result(client, tenant_a, "create_job", job_body(source_id="ats-1"))
    assert result["isError"] is True and job["id"] in result["content"][0]["text"]


def test_a_domain_validation_failure_is_a_tool_error_naming_the_field(client, tenant_a):
    job = create_job(client, tenant_a, min_pay_rate=10, max_pay_rate=20)
    result = tool_result(
        client,
        tenant_a,
        "update_job",
        {"job_id": job["id"], "title": job["title"], "min_pay_rate": 30},
    )
    assert result["isError"] is True and "max_pay_rate" in result["content"][0]["text"]


def test_an_agent_sees_only_its_own_tenants_jobs(client, tenant_a, tenant_b):
    job_a = create_job(client, tenant_a)
    assert tool_result(client, tenant_b, "list_jobs")["structuredContent"]["total"] == 0
    assert tool_result(client, tenant_b, "get_job", {"job_id": job_a["id"]})["isError"] is True
    changed = tool_result(
        client, tenant_b, "update_job", {"job_id": job_a["id"], "title": "Hijacked"}
    )
    assert changed["isError"] is True
    assert (
        client.get(f"/v1/jobs/{job_a['id']}", headers=tenant_a.headers).json["title"]
        == job_a["title"]
    )
    assert tool_result(client, tenant_a, "list_jobs")["structuredContent"]["total"] == 1


def test_a_disabled_family_has_no_tools(make_app, make_tenant):
    app = make_app(PLUGINS=["jobs", "mcp"])
    client = app.test_client()
    tenant = make_tenant("jobs-only")
    assert list(listed_tools(client, tenant)) == JOBS_TOOLS
    assert listed_tools(client, tenant, "/mcp/sourcing") == {}
    reply = call(client, tenant, "tools/call", {"name": "list_applications", "arguments": {}}).json
    assert reply["error"]["code"] == -32602


def test_the_mcp_family_needs_jobs(make_app):
    from app.plugins import PluginError

    with pytest.raises(PluginError, match="jobs"):
        make_app(PLUGINS=["mcp"])
