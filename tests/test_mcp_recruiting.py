"""The /mcp tools of the applications and questions families: same records as REST, scoped to the
caller's tenant."""

from __future__ import annotations

import jsonschema

from tests.factories import create_application, create_job
from tests.test_mcp_jobs import listed_tools
from tests.test_mcp_protocol import tool_result

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

MISSING_ID = "6f1c1c1e-0000-4000-8000-000000000000"


def test_applications_and_questions_tools_are_listed_with_valid_schemas(client, tenant_a):
    tools = listed_tools(client, tenant_a)
    for name in (
        "list_applications",
        "get_application",
        "list_job_questions",
        "generate_job_questions",
        "start_instant_call",
        "get_call",
        "list_calls",
    ):
        jsonschema.Draft202012Validator.check_schema(tools[name]["inputSchema"])
        jsonschema.Draft202012Validator.check_schema(tools[name]["outputSchema"])
    assert tools["get_application"]["inputSchema"]["required"] == ["application_id"]
    assert tools["generate_job_questions"]["annotations"]["readOnlyHint"] is False


def test_list_and_get_application_answer_the_rest_records(client, tenant_a):
    tools = listed_tools(client, tenant_a)
    application = create_application(client, tenant_a)
    other = create_application(client, tenant_a)
    listed = tool_result(client, tenant_a, "list_applications", {"job_id": application["job_id"]})[
        "structuredContent"
    ]
    assert [item["id"] for item in listed["data"]] == [application["id"]]
    jsonschema.validate(listed, tools["list_applications"]["outputSchema"])
    read = tool_result(client, tenant_a, "get_application", {"application_id": other["id"]})[
        "structuredContent"
    ]
    assert read == client.get(f"/v1/applications/{other['id']}", headers=tenant_a.headers).json
    assert read["candidate"]["email"] and read["job"]["title"]
    jsonschema.validate(read, tools["get_application"]["outputSchema"])


def test_applications_of_another_tenant_are_not_found(client, tenant_a, tenant_b):
    application = create_application(client, tenant_a)
    assert tool_result(client, tenant_b, "list_applications")["structuredContent"]["total"] == 0
    result = tool_result(client, tenant_b, "get_application", {"application_id": application["id"]})
    assert result["isError"] is True and "not found" in result["content"][0]["text"]


def test_generated_questions_are_stored_and_listed(client, tenant_a, tenant_b):
    job = create_job(client, tenant_a)
    generated = tool_result(client, tenant_a, "generate_job_questions", {"job_id": job["id"]})
    assert generated["isError"] is False
    questions = generated["structuredContent"]["data"]
    assert len(questions) >= 5 and all(
        q["generated"] and q["job_id"] == job["id"] for q in questions
    )
    listed = tool_result(client, tenant_a, "list_job_questions", {"job_id": job["id"]})[
        "structuredContent"
    ]
    assert listed == client.get(f"/v1/jobs/{job['id']}/questions", headers=tenant_a.headers).json
    assert [q["id"] for q in listed["data"]] == [q["id"] for q in questions]
    again = tool_result(client, tenant_a, "generate_job_questions", {"job_id": job["id"]})[
        "structuredContent"
    ]
    assert again == {"data": []}  # nothing new to add
    for name in ("list_job_questions", "generate_job_questions"):
        refused = tool_result(client, tenant_b, name, {"job_id": job["id"]})
        assert refused["isError"] is True and "not found" in refused["content"][0]["text"]


def test_questions_of_a_missing_job_are_a_tool_error(client, tenant_a):
    result = tool_result(client, tenant_a, "list_job_questions", {"job_id": MISSING_ID})
    assert result["isError"] is True and MISSING_ID in result["content"][0]["text"]


def test_start_instant_call_then_read_it_like_rest(client, tenant_a, tenant_b):
    tools = listed_tools(client, tenant_a)
    assert tools["start_instant_call"]["annotations"]["readOnlyHint"] is False
    application = create_application(client, tenant_a)
    started = tool_result(
        client, tenant_a, "start_instant_call", {"application_id": application["id"]}
    )
    assert started["isError"] is False
    call_id = started["structuredContent"]["id"]
    assert started["structuredContent"]["application_id"] == application["id"]
    read = tool_result(client, tenant_a, "get_call", {"call_id": call_id})["structuredContent"]
    assert read == client.get(f"/v1/calls/{call_id}", headers=tenant_a.headers).json
    jsonschema.validate(read, tools["get_call"]["outputSchema"])
    listed = tool_result(client, tenant_a, "list_calls", {"application_id": application["id"]})[
        "structuredContent"
    ]
    assert [c["id"] for c in listed["data"]] == [call_id]
    for name, arguments in [
        ("get_call", {"call_id": call_id}),
        ("start_instant_call", {"application_id": application["id"]}),
    ]:
        refused = tool_result(client, tenant_b, name, arguments)
        assert refused["isError"] is True and "not found" in refused["content"][0]["text"]


def test_starting_a_call_for_a_missing_application_is_a_tool_error(client, tenant_a):
    result = tool_result(client, tenant_a, "start_instant_call", {"application_id": MISSING_ID})
    assert result["isError"] is True and MISSING_ID in result["content"][0]["text"]
