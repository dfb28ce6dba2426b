"""MCP 2026-07-28 spoken raw on both endpoints: server/discover, the params._meta envelope, routing
headers that must match the body, the era routing by MCP-Protocol-Version, and each error with its
HTTP status."""

from __future__ import annotations

import base64

import pytest
from mcp_types import _v2026_07_28 as wire

from tests.factories import create_job
from tests.test_mcp_protocol import ENDPOINTS, post_rpc

pytestmark = pytest.mark.plugins("jobs", "mcp")

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "1"},
}
SERVER_NAMES = {"/mcp": "hirekit-jobs", "/mcp/sourcing": "hirekit-sourcing"}
FIRST_TOOL = {"/mcp": "list_jobs", "/mcp/sourcing": "people_search"}


def modern_call(
    client,
    tenant,
    method,
    params=None,
    *,
    path="/mcp",
    request_id=1,
    headers=None,
    meta=META,
    message=None,
):
    """A 2026-07-28 request as a conforming client sends it; `headers` override or (None values)
    drop the defaults."""
    params = dict(params or {})
    if meta is not None:
        params["_meta"] = meta
    sent = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if method == "tools/call" and isinstance(params.get("name"), str):
        sent["Mcp-Name"] = params["name"]
    sent.update(headers or {})
    sent = {name: value for name, value in sent.items() if value is not None}
    body = (
        message
        if message is not None
        else {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    )
    return post_rpc(client, tenant, body, path=path, headers=sent)


def assert_error(response, status: int, code: int, request_id=1) -> dict:
    assert response.status_code == status, response.data
    assert response.headers["Content-Type"] == "application/json"
    assert response.json["jsonrpc"] == "2.0" and response.json["id"] == request_id
    assert response.json["error"]["code"] == code and response.json["error"]["message"]
    return response.json["error"]


def assert_stamped(result: dict, path: str) -> None:
    assert result["resultType"] == "complete"
    info = result["_meta"]["io.modelcontextprotocol/serverInfo"]
    assert info["name"] == SERVER_NAMES[path] and info["version"]


# ---- what a 2026-07-28 client gets ----------------------------------------

CAPABILITIES = {
    "/mcp": {
        "tools": {"listChanged": False},
        "resources": {"listChanged": False},
        "prompts": {"listChanged": False},
    },
    "/mcp/sourcing": {"tools": {"listChanged": False}},
}


@pytest.mark.parametrize("path", ENDPOINTS)
def test_server_discover_names_every_served_version_and_is_cacheable(client, tenant_a, path):
    response = modern_call(client, tenant_a, "server/discover", path=path)
    assert response.status_code == 200 and "Mcp-Session-Id" not in response.headers
    result = response.json["result"]
    wire.DiscoverResult.model_validate(result)  # the revision's own schema, as the SDK generated it
    assert result["supportedVersions"] == ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]
    assert result["capabilities"] == CAPABILITIES[path]
    assert result["ttlMs"] > 0 and result["cacheScope"] == "private"
    assert_stamped(result, path)


@pytest.mark.parametrize("path", ENDPOINTS)
def test_tools_list_is_the_handshake_list_plus_cache_hints_and_the_stamp(client, tenant_a, path):
    modern = modern_call(client, tenant_a, "tools/list", path=path).json["result"]
    wire.ListToolsResult.model_validate(modern)
    handshake = post_rpc(
        client,
        tenant_a,
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        path=path,
        headers={"MCP-Protocol-Version": "2025-11-25"},
    ).json["result"]
    assert modern["tools"] == handshake["tools"]  # the same tools from the same dispatcher
    assert set(handshake) == {"tools"}  # the handshake answer is unchanged
    assert modern["ttlMs"] > 0 and modern["cacheScope"] == "private"
    assert_stamped(modern, path)


def test_tools_call_runs_the_tool_as_the_callers_tenant(client, tenant_a, tenant_b):
    job = create_job(client, tenant_a, title="Radiographer")
    mine = modern_call(client, tenant_a, "tools/call", {"name": "list_jobs", "arguments": {}}).json[
        "result"
    ]
    wire.CallToolResult.model_validate(mine)
    assert mine["isError"] is False and [j["id"] for j in mine["structuredContent"]["data"]] == [
        job["id"]
    ]
    assert_stamped(mine, "/mcp")
    theirs = modern_call(
        client, tenant_b, "tools/call", {"name": "list_jobs", "arguments": {}}
    ).json["result"]
    assert theirs["structuredContent"]["data"] == []


def test_a_tool_failure_is_a_complete_result_with_is_error(client, tenant_a):
    missing = modern_call(
        client,
        tenant_a,
        "tools/call",
        {"name": "get_job", "arguments": {"job_id": "6f1c1c1e-0000-4000-8000-000000000000"}},
    )
    result = missing.json["result"]
    assert (
        missing.status_code == 200
        and result["isError"] is True
        and "not found" in result["content"][0]["text"]
    )
    assert result["resultType"] == "complete"
    invalid = modern_call(
        client, tenant_a, "tools/call", {"name": "list_jobs", "arguments": {"limit": "many"}}
    )
    # fixable by the model
    assert invalid.status_code == 200 and invalid.json["result"]["isError"] is True


def test_a_name_the_header_cannot_carry_verbatim_may_come_base64_wrapped(client, tenant_a):
    wrapped = "=?base64?" + base64.b64encode(b"list_jobs").decode() + "?="
    response = modern_call(
        client,
        tenant_a,
        "tools/call",
        {"name": "list_jobs", "arguments": {}},
        headers={"Mcp-Name": wrapped},
    )
    assert response.status_code == 200 and response.json["result"]["isError"] is False


@pytest.mark.parametrize("path", ENDPOINTS)
def test_notifications_are_202_with_no_body(client, tenant_a, path):
    for method in ("notifications/cancelled", "notifications/initialized"):
        response = modern_call(
            client,
            tenant_a,
            method,
            path=path,
            message={"jsonrpc": "2.0", "method": method, "params": {"requestId": 1}},
        )
        assert (response.status_code, response.data) == (202, b""), method


# ---- errors of the revision ----------------------------------------------


@pytest.mark.parametrize("path", ENDPOINTS)
@pytest.mark.parametrize(
    "meta",
    [
        None,
        {},
        {"io.modelcontextprotocol/protocolVersion": MODERN},
        {"io.modelcontextprotocol/clientCapabilities": {}},
        "2026-07-28",
    ],
    ids=["absent", "empty", "no-capabilities", "no-version", "not-an-object"],
)
def test_a_request_without_the_meta_envelope_is_400_invalid_params(client, tenant_a, path, meta):
    error = assert_error(
        modern_call(client, tenant_a, "tools/list", path=path, meta=meta), 400, -32602
    )
    assert "_meta" in error["message"]


@pytest.mark.parametrize("path", ENDPOINTS)
@pytest.mark.parametrize(
    "method, headers, named",
    [
        ("tools/list", {"Mcp-Method": None}, "Mcp-Method"),
        ("tools/list", {"Mcp-Method": "tools/call"}, "Mcp-Method"),
        ("tools/call", {"Mcp-Name": None}, "Mcp-Name"),
        ("tools/call", {"Mcp-Name": "get_job"}, "Mcp-Name"),
        ("tools/call", {"Mcp-Name": "=?base64?not base64?="}, "Mcp-Name"),
        ("server/discover", {"Mcp-Method": "server/Discover"}, "Mcp-Method"),
    ],
    ids=[
        "method-missing",
        "method-other",
        "name-missing",
        "name-other",
        "name-bad-base64",
        "method-case",
    ],
)
def test_a_routing_header_that_disagrees_with_the_body_is_400_header_mismatch(
    client, tenant_a, path, method, headers, named
):
    params = {"name": FIRST_TOOL[path], "arguments": {}} if method == "tools/call" else {}
    error = assert_error(
        modern_call(client, tenant_a, method, params, path=path, headers=headers), 400, -32020
    )
    assert named in error["message"]


def test_a_version_header_that_disagrees_with_the_envelope_is_400_header_mismatch(client, tenant_a):
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}
    error = assert_error(modern_call(client, tenant_a, "tools/list", meta=meta), 400, -32020)
    assert "MCP-Protocol-Version" in error["message"]


def test_a_routing_header_sent_twice_is_400_header_mismatch(client, tenant_a):
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
    response = client.post(
        "/mcp",
        json=message,
        headers=[
            ("Authorization", tenant_a.headers["Authorization"]),
            ("MCP-Protocol-Version", MODERN),
            ("Mcp-Method", "tools/list"),
            ("Mcp-Method", "tools/call"),
        ],
    )
    # the two values match no body
    assert "Mcp-Method" in assert_error(response, 400, -32020)["message"]


@pytest.mark.parametrize("path", ENDPOINTS)
@pytest.mark.parametrize("version", ["2099-01-01", "2024-11-05", "2026-07-28-draft", ""])
def test_an_unsupported_version_header_is_400_naming_the_supported_ones(
    client, tenant_a, path, version
):
    for body in (
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled"},
        "{junk",
    ):
        response = post_rpc(
            client, tenant_a, body, path=path, headers={"MCP-Protocol-Version": version}
        )
        error = assert_error(response, 400, -32022, request_id=None)
        assert error["data"] == {
            "supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"],
            "requested": version,
        }


@pytest.mark.parametrize("path", ENDPOINTS)
@pytest.mark.parametrize(
    "method", ["resources/list", "prompts/get", "tools/destroy", "initialize", "ping"]
)
def test_an_unknown_method_is_404_method_not_found(client, tenant_a, path, method):
    if path == "/mcp" and method.startswith(("resources/", "prompts/")):
        pytest.skip("the jobs server offers resources and prompts (tests/test_mcp_resources.py)")
    error = assert_error(
        modern_call(client, tenant_a, method, path=path, request_id="r-9"),
        404,
        -32601,
        request_id="r-9",
    )
    assert method in error["message"]


def test_an_unknown_tool_and_bad_params_are_400_invalid_params(client, tenant_a):
    assert_error(
        modern_call(client, tenant_a, "tools/call", {"name": "drop_database"}), 400, -32602
    )
    assert_error(modern_call(client, tenant_a, "tools/list", {"cursor": "page-2"}), 400, -32602)
    bad_arguments = modern_call(
        client, tenant_a, "tools/call", {"name": "list_jobs", "arguments": [1]}
    )
    assert_error(bad_arguments, 400, -32602)


def test_a_batch_a_posted_response_and_a_malformed_message_are_400_invalid_request(
    client, tenant_a
):
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
    for body in (
        [request],
        {"jsonrpc": "2.0", "id": 5, "result": {}},
        {"jsonrpc": "1.0", "id": 1, "method": "x"},
        {"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"},
        '"text"',
    ):
        response = post_rpc(
            client,
            tenant_a,
            body,
            headers={"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"},
        )
        assert response.status_code == 400 and response.json["error"]["code"] == -32600, body


def test_a_body_that_is_not_json_is_400_parse_error(client, tenant_a):
    response = post_rpc(client, tenant_a, "{junk", headers={"MCP-Protocol-Version": MODERN})
    assert_error(response, 400, -32700, request_id=None)


def test_the_key_is_checked_before_the_revision(client):
    response = post_rpc(
        client,
        None,
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}},
        headers={"MCP-Protocol-Version": MODERN, "Mcp-Method": "server/discover"},
    )
    assert response.status_code == 401 and response.headers["WWW-Authenticate"].startswith(
        'Bearer realm="hirekit"'
    )


# ---- the handshake era is untouched -----------------------------------------


@pytest.mark.parametrize("path", ENDPOINTS)
def test_handshake_requests_get_no_envelope_fields_and_no_discover(client, tenant_a, path):
    for version in (None, "2025-11-25", "2025-06-18", "2025-03-26"):
        headers = {"MCP-Protocol-Version": version} if version else {}
        listed = post_rpc(
            client,
            tenant_a,
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            path=path,
            headers=headers,
        )
        assert listed.status_code == 200 and set(listed.json["result"]) == {"tools"}, version
        discover = post_rpc(
            client,
            tenant_a,
            {"jsonrpc": "2.0", "id": 2, "method": "server/discover"},
            path=path,
            headers=headers,
        )
        assert discover.status_code == 200 and discover.json["error"]["code"] == -32601, version
