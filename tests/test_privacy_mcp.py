"""MCP tools after an erasure: the erased candidate's application and call are not found (a tool
error), and list tools show no tombstones, cursor mode included (their answers are typed as live
records)."""

from __future__ import annotations

import jsonschema

from tests.privacy_factories import a_person, candidate_with_everything
from tests.test_mcp_jobs import listed_tools
from tests.test_mcp_protocol import tool_result


def test_mcp_tools_no_longer_find_an_erased_candidates_records(client, tenant_a, httpserver):
    held = candidate_with_everything(client, tenant_a, a_person(), httpserver.url_for("/hooks"))
    kept = candidate_with_everything(
        client, tenant_a, a_person(), httpserver.url_for("/hooks"), job=held.job
    )
    assert (
        tool_result(client, tenant_a, "get_call", {"call_id": held.call["id"]})["isError"] is False
    )
    assert (
        client.delete(
            f"/v1/candidates/{held.candidate['id']}", headers=tenant_a.headers
        ).status_code
        == 204
    )

    for name, arguments in (
        ("get_application", {"application_id": held.application["id"]}),
        ("get_call", {"call_id": held.call["id"]}),
    ):
        result = tool_result(client, tenant_a, name, arguments)
        assert result["isError"] is True and "not found" in result["content"][0]["text"], name
    tools = listed_tools(client, tenant_a)
    for name in ("list_applications", "list_calls"):
        for arguments in ({}, {"cursor": "", "size": 100}):
            listed = tool_result(client, tenant_a, name, arguments)["structuredContent"]
            assert {item.get("deleted") for item in listed["data"]} == {None}, (name, arguments)
            jsonschema.validate(listed, tools[name]["outputSchema"])
    applications = tool_result(client, tenant_a, "list_applications", {"cursor": "", "size": 100})[
        "structuredContent"
    ]
    assert [item["id"] for item in applications["data"]] == [kept.application["id"]]
    # the same walk over REST is a sync: it shows the tombstone
    rest = client.get(
        "/v1/applications", query_string={"cursor": "", "size": 100}, headers=tenant_a.headers
    ).json
    assert {item["id"] for item in rest["data"] if item.get("deleted")} == {held.application["id"]}
