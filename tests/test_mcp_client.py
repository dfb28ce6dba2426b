"""The official MCP Python SDK, over its Streamable HTTP client, against the app served live on
127.0.0.1."""

from __future__ import annotations

import asyncio
import json

import httpx2
import jsonschema
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.factories import create_job, job_body
from tests.test_mcp_sourcing import load_people

# auto probes server/discover (2026-07-28) and adopts it; legacy runs the initialize handshake of
# 2025-11-25
NEGOTIATED = {"auto": "2026-07-28", "legacy": "2025-11-25"}
MODES = list(NEGOTIATED)


def run_session(url: str, key: str, mode: str, steps, *, sent: list | None = None):
    """Connect the SDK client with the Bearer key, run `steps(client)` (a coroutine function) and
    return its result; `sent` collects (MCP-Protocol-Version header, method) of every message the
    client posted."""

    async def record(request):
        if sent is not None:
            sent.append(
                (request.headers.get("MCP-Protocol-Version"), json.loads(request.content)["method"])
            )

    async def session():
        async with httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {key}"},
            timeout=10,
            event_hooks={"request": [record]},
        ) as http:
            async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
                return await steps(client)

    return asyncio.run(session())


def assert_valid_tool_schemas(tools):
    for tool in tools:
        for schema in (tool.input_schema, tool.output_schema):
            jsonschema.Draft202012Validator.check_schema(schema)
        assert tool.input_schema["type"] == "object" and tool.output_schema["type"] == "object"
        assert tool.description and tool.annotations is not None


@pytest.mark.parametrize("mode", MODES)
def test_the_sdk_client_lists_reads_and_writes_jobs(live_url, client, tenant_a, mode):
    existing = create_job(client, tenant_a, title="ICU Nurse")

    async def steps(mcp):
        tools = (await mcp.list_tools()).tools
        listed = await mcp.call_tool("list_jobs", {"status": "open"})
        created = await mcp.call_tool(
            "create_job", job_body(title="Night Charge Nurse", source_id="mcp-made")
        )
        read = await mcp.call_tool("get_job", {"job_id": existing["id"]})
        missing = await mcp.call_tool("get_job", {"job_id": "6f1c1c1e-0000-4000-8000-000000000000"})
        return mcp.protocol_version, mcp.server_info, tools, listed, created, read, missing

    sent = []
    version, server_info, tools, listed, created, read, missing = run_session(
        f"{live_url}/mcp", tenant_a.key, mode, steps, sent=sent
    )
    assert version == NEGOTIATED[mode] and server_info.name == "hirekit-jobs"
    if mode == "auto":  # the newest revision from the first request on: no initialize, no fallback
        assert sent[0] == ("2026-07-28", "server/discover")
        assert all(
            header == ("2026-07-28", method)
            for header, method in zip(sent[1:], ["tools/list"] + ["tools/call"] * 4)
        )

    names = [tool.name for tool in tools]
    assert names == [
        "list_jobs",
        "get_job",
        "create_job",
        "update_job",
        "upsert_jobs",
        "upsert_candidate",
        "get_candidate",
        "list_candidates",
        "upsert_application",
        "list_applications",
        "get_application",
        "list_job_questions",
        "generate_job_questions",
        "start_instant_call",
        "reschedule_call",
        "cancel_call",
        "get_call",
        "list_calls",
    ]
    assert_valid_tool_schemas(tools)
    by_name = {tool.name: tool for tool in tools}
    assert by_name["list_jobs"].annotations.read_only_hint is True
    assert by_name["create_job"].annotations.read_only_hint is False
    assert by_name["create_job"].annotations.destructive_hint is False

    assert not listed.is_error and [job["id"] for job in listed.structured_content["data"]] == [
        existing["id"]
    ]
    assert not read.is_error and read.structured_content == existing
    assert not created.is_error and created.structured_content["title"] == "Night Charge Nurse"
    stored = client.get(f"/v1/jobs/{created.structured_content['id']}", headers=tenant_a.headers)
    assert stored.status_code == 200 and stored.json == created.structured_content
    assert missing.is_error and "not found" in missing.content[0].text


def test_the_sdk_client_pushes_a_batch_of_jobs_with_upsert_jobs(live_url, client, tenant_a):
    """An agent's initial sync through the SDK: one upsert_jobs call creates, a second replaces by
    source_id."""
    items = [job_body(title=f"Nurse {n}", source_id=f"sdk-{n}") for n in range(3)]

    async def steps(mcp):
        first = await mcp.call_tool("upsert_jobs", {"items": items})
        again = await mcp.call_tool(
            "upsert_jobs",
            {"items": [{**items[0], "title": "Charge Nurse"}, {"source_id": "sdk-bad"}]},
        )
        return first, again

    first, again = run_session(f"{live_url}/mcp", tenant_a.key, "auto", steps)
    assert not first.is_error and [
        item["status"] for item in first.structured_content["items"]
    ] == [201, 201, 201]
    assert first.structured_content["created"] == 3
    assert [item["status"] for item in again.structured_content["items"]] == [200, 422]
    replaced = again.structured_content["items"][0]
    assert replaced["id"] == first.structured_content["items"][0]["id"]
    assert (
        client.get(f"/v1/jobs/{replaced['id']}", headers=tenant_a.headers).json["title"]
        == "Charge Nurse"
    )


@pytest.mark.parametrize("mode", MODES)
def test_the_sdk_client_searches_and_enriches_people_on_the_sourcing_server(
    app, live_url, tenant_a, mode
):
    load_people(app)

    async def steps(mcp):
        tools = (await mcp.list_tools()).tools
        found = await mcp.call_tool(
            "people_search", {"query": {"match": {"job_title": "engineer"}}, "size": 10}
        )
        enriched = await mcp.call_tool(
            "people_enrich", {"servicegraph_id": found.structured_content["data"][0]["id"]}
        )
        return mcp.protocol_version, mcp.server_info, tools, found, enriched

    sent = []
    version, server_info, tools, found, enriched = run_session(
        f"{live_url}/mcp/sourcing", tenant_a.key, mode, steps, sent=sent
    )
    assert version == NEGOTIATED[mode] and server_info.name == "hirekit-sourcing"
    assert ("initialize" in [method for _, method in sent]) is (mode == "legacy")
    assert [tool.name for tool in tools] == [
        "people_search",
        "people_search_page",
        "people_enrich",
        "people_bulk_enrich",
    ]
    assert_valid_tool_schemas(tools)
    assert not found.is_error and found.structured_content["total"] == 4
    assert not enriched.is_error and enriched.structured_content["likelihood"] == 10


def test_the_sdk_client_is_refused_without_a_valid_key(live_url):
    async def steps(mcp):
        return await mcp.list_tools()

    with pytest.raises(BaseExceptionGroup) as refused:
        run_session(f"{live_url}/mcp", "not-a-key", "legacy", steps)
    # the SDK surfaces the 401 as an error instead of a tool listing
    assert refused.group_contains(MCPError)
