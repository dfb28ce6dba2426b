"""MCP tool arguments: NUL characters are invalid arguments naming where they are (never a -32603
from the database), and read tools ignore an idempotency_key, which only writes that change state
honour."""

from __future__ import annotations

import pytest

from app.http.request_json import MAX_JSON_DEPTH
from tests.factories import create_job, job_body
from tests.test_mcp_jobs import listed_tools
from tests.test_mcp_protocol import call, post_rpc
from tests.test_mcp_sourcing import ENGINEERS, load_people

NUL_MESSAGE = "Must not contain NUL (\\u0000) characters."


def tools_call(client, tenant, name, arguments, *, version, path="/mcp") -> dict:
    response = call(
        client,
        tenant,
        "tools/call",
        {"name": name, "arguments": arguments},
        path=path,
        version=version,
    )
    assert response.status_code == 200, response.json
    return response.json


@pytest.mark.parametrize(
    "path, name, arguments, field",
    [
        ("/mcp", "create_job", job_body(title="Night\x00Nurse"), "title"),
        ("/mcp", "create_job", {**job_body(), "idempotency_key": "retry\x00-1"}, "idempotency_key"),
        ("/mcp", "list_jobs", {"status": "open\x00"}, "status"),
        (
            "/mcp/sourcing",
            "people_search",
            {"query": {"match": {"job_title": "nurse\x00"}}},
            "query.match.job_title",
        ),
    ],
    ids=["create", "idempotency-key", "list", "people-query"],
)
def test_nul_in_tool_arguments_is_invalid_params_naming_the_field(
    client, tenant_a, path, name, arguments, field
):
    before = tools_call(client, tenant_a, name, arguments, version="2025-06-18", path=path)
    assert before["error"]["code"] == -32602, before
    assert before["error"]["data"]["fields"] == {field: [NUL_MESSAGE]}
    assert f"{field}: Must not contain NUL" in before["error"]["message"]
    # SEP-1303
    since = tools_call(client, tenant_a, name, arguments, version="2025-11-25", path=path)["result"]
    assert (
        since["isError"] is True
        and f"Invalid arguments for {name}: {field}: Must not contain NUL"
        in since["content"][0]["text"]
    )
    assert client.get("/v1/jobs?page=1&size=1", headers=tenant_a.headers).json["total"] == 0


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_read_tools_ignore_an_idempotency_key_and_store_nothing(app, client, tenant_a, version):
    load_people(app)
    create_job(client, tenant_a, status="open")
    for path, name, first, second in [
        (
            "/mcp/sourcing",
            "people_search",
            {"query": ENGINEERS, "size": 1},
            {"query": ENGINEERS, "size": 3},
        ),
        ("/mcp", "list_jobs", {"status": "open"}, {"status": "closed"}),
    ]:
        assert (
            "idempotency_key"
            not in listed_tools(client, tenant_a, path)[name]["inputSchema"]["properties"]
        )
        answers = [
            tools_call(
                client,
                tenant_a,
                name,
                {**arguments, "idempotency_key": "same-key"},
                version=version,
                path=path,
            )["result"]
            for arguments in (first, second)
        ]
        assert [answer["isError"] for answer in answers] == [False, False], answers
        # nothing was stored under the key: the second call, other arguments under the same key,
        # answered itself
        assert [len(answer["structuredContent"]["data"]) for answer in answers] == (
            [1, 3] if name == "people_search" else [1, 0]
        )


def test_write_tools_still_run_once_per_idempotency_key(client, tenant_a):
    body = {**job_body(source_id="once"), "idempotency_key": "create-once"}
    assert (
        "idempotency_key"
        in listed_tools(client, tenant_a)["create_job"]["inputSchema"]["properties"]
    )
    first, again = (
        tools_call(client, tenant_a, "create_job", body, version="2025-11-25")["result"]
        for _ in range(2)
    )
    assert first["isError"] is False and again["structuredContent"] == first["structuredContent"]
    assert client.get("/v1/jobs?page=1&size=5", headers=tenant_a.headers).json["total"] == 1


@pytest.mark.parametrize(
    "name, extra",
    [("list_jobs", {}), ("create_job", {"idempotency_key": "deep-1"})],
    ids=["read-tool", "write-tool-with-key"],
)
@pytest.mark.parametrize("depth", [300, 1000])
def test_a_message_nested_past_the_json_bound_is_an_invalid_request_not_an_internal_error(
    client, tenant_a, depth, name, extra
):
    nested = "[" * depth + "]" * depth
    extra_json = "".join(f', "{key}": "{value}"' for key, value in extra.items())
    body = (
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "%s", '
        '"arguments": {"status": %s%s}}}' % (name, nested, extra_json)
    )
    response = post_rpc(client, tenant_a, body, version="2025-06-18")
    assert response.status_code == 400 and response.json["error"]["code"] == -32600, response.json
    assert f"more than {MAX_JSON_DEPTH} levels" in response.json["error"]["message"]
    assert client.get("/v1/jobs?page=1&size=1", headers=tenant_a.headers).json["total"] == 0
