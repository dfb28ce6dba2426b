"""The MCP endpoints' HTTP and JSON-RPC layers, spoken raw: status codes, error codes, batches,
auth, origins, tenants."""

from __future__ import annotations

import json

import pytest

from tests.factories import job_body

pytestmark = pytest.mark.plugins("jobs", "mcp")

ENDPOINTS = ["/mcp", "/mcp/sourcing"]
INITIALIZE_PARAMS = {"capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}


def post_rpc(client, tenant, message, *, path="/mcp", version=None, headers=None):
    """POST one JSON-RPC message (or batch) the way a client does; `version` sets
    MCP-Protocol-Version."""
    sent = {
        "Accept": "application/json, text/event-stream",
        **(tenant.headers if tenant else {}),
        **(headers or {}),
    }
    if version:
        sent["MCP-Protocol-Version"] = version
    body = message if isinstance(message, (str, bytes)) else json.dumps(message)
    return client.post(path, data=body, headers=sent, content_type="application/json")


def call(client, tenant, method, params=None, *, request_id=1, path="/mcp", version="2025-11-25"):
    message = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return post_rpc(client, tenant, message, path=path, version=version)


def call_tool(client, tenant, name, arguments=None, *, version="2025-11-25", path="/mcp"):
    response = call(
        client,
        tenant,
        "tools/call",
        {"name": name, "arguments": arguments or {}},
        path=path,
        version=version,
    )
    assert response.status_code == 200, response.data
    return response.json


def tool_result(client, tenant, name, arguments=None, **kwargs) -> dict:
    reply = call_tool(client, tenant, name, arguments, **kwargs)
    assert "result" in reply, reply
    return reply["result"]


# ---- initialize, ping, notifications ------------------------------------


@pytest.mark.parametrize("path", ENDPOINTS)
def test_initialize_answers_the_clients_version_when_supported(client, tenant_a, path):
    for version in ("2025-11-25", "2025-06-18", "2025-03-26"):
        response = call(
            client,
            tenant_a,
            "initialize",
            {"protocolVersion": version, **INITIALIZE_PARAMS},
            path=path,
            version=None,
        )
        assert response.status_code == 200
        assert response.headers["Content-Type"] == "application/json"
        assert "Mcp-Session-Id" not in response.headers
        result = response.json["result"]
        assert response.json["id"] == 1
        assert result["protocolVersion"] == version
        assert (
            result["capabilities"]
            == {
                "/mcp": {
                    "tools": {"listChanged": False},
                    "resources": {"listChanged": False},
                    "prompts": {"listChanged": False},
                },
                "/mcp/sourcing": {"tools": {"listChanged": False}},
            }[path]
        )
        assert (
            result["serverInfo"]["name"]
            == {"/mcp": "hirekit-jobs", "/mcp/sourcing": "hirekit-sourcing"}[path]
        )
        assert "stateless" in result["instructions"]


def test_initialize_with_an_unsupported_version_answers_the_latest(client, tenant_a):
    for offered in ("2026-07-28", "2024-11-05", "next"):
        response = call(
            client,
            tenant_a,
            "initialize",
            {"protocolVersion": offered, **INITIALIZE_PARAMS},
            version=None,
        )
        assert response.json["result"]["protocolVersion"] == "2025-11-25", offered


def test_initialize_without_a_protocol_version_is_invalid_params(client, tenant_a):
    response = call(client, tenant_a, "initialize", INITIALIZE_PARAMS, version=None)
    assert response.status_code == 200
    assert response.json["error"]["code"] == -32602


def test_ping_answers_an_empty_result_with_the_same_id(client, tenant_a):
    response = call(client, tenant_a, "ping", request_id="ping-7")
    assert response.json == {"jsonrpc": "2.0", "id": "ping-7", "result": {}}


NOT_REQUESTS = [
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}},
    {"jsonrpc": "2.0", "method": "notifications/never-heard-of-it"},
    {"jsonrpc": "2.0", "id": 9, "result": {}},  # a client's response to a server request
]


@pytest.mark.parametrize("path", ENDPOINTS)
def test_notifications_and_client_responses_are_202_with_no_body(client, tenant_a, path):
    for message in NOT_REQUESTS:
        response = post_rpc(client, tenant_a, message, path=path)
        assert (response.status_code, response.data) == (202, b""), message


# ---- malformed messages --------------------------------------------------


def test_a_body_that_is_not_json_is_a_parse_error(client, tenant_a):
    for body in ("{not json", "", b"\xff\xfe", '{"jsonrpc": "2.0", "id": 1, "method": "ping"'):
        response = post_rpc(client, tenant_a, body)
        assert response.status_code == 400, body
        assert response.json == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": response.json["error"]["message"]},
        }


INVALID_REQUESTS = [
    ({"id": 1, "method": "ping"}, 1),
    ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, 1),
    ({"jsonrpc": "2.0", "id": 1, "method": 42}, 1),
    ({"jsonrpc": "2.0", "id": 1}, 1),
    ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None),
    ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None),
    ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, None),
    ({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": "x"}, 1),
    ('"a JSON string"', None),
    ("17", None),
]


def test_an_invalid_request_object_is_400_invalid_request(client, tenant_a):
    for message, echoed_id in INVALID_REQUESTS:
        response = post_rpc(client, tenant_a, message)
        assert response.status_code == 400, message
        assert response.json["error"]["code"] == -32600, message
        assert response.json["id"] == echoed_id, message


def test_an_unknown_method_is_method_not_found_on_200(client, tenant_a):
    for method, path in (
        ("resources/list", "/mcp/sourcing"),
        ("prompts/list", "/mcp/sourcing"),
        ("server/discover", "/mcp"),
        ("tools/destroy", "/mcp"),
    ):
        response = call(client, tenant_a, method, {}, request_id="abc", path=path)
        assert response.status_code == 200
        assert response.json["id"] == "abc"
        assert response.json["error"]["code"] == -32601
        assert method in response.json["error"]["message"]


def test_an_unknown_tool_is_invalid_params(client, tenant_a):
    reply = call_tool(client, tenant_a, "drop_database")
    assert reply["error"]["code"] == -32602
    assert reply["error"]["message"] == "Unknown tool: drop_database"


def test_malformed_tool_call_params_are_invalid_params(client, tenant_a):
    for params in (
        {"arguments": {}},
        {"name": 5},
        {"name": "list_jobs", "arguments": [1]},
        {"name": "list_jobs", "arguments": "page=1"},
    ):
        response = call(client, tenant_a, "tools/call", params)
        assert response.status_code == 200
        assert response.json["error"]["code"] == -32602, params


def test_params_given_as_an_array_are_invalid_params(client, tenant_a):
    response = call(client, tenant_a, "tools/list", [])
    assert response.json["error"]["code"] == -32602


@pytest.mark.parametrize("version", ["2025-06-18", "2025-03-26"])
def test_arguments_that_miss_the_input_schema_are_invalid_params_before_2025_11_25(
    client, tenant_a, version
):
    reply = call_tool(
        client, tenant_a, "list_jobs", {"page": "first", "colour": "red"}, version=version
    )
    assert reply["error"]["code"] == -32602
    assert set(reply["error"]["data"]["fields"]) == {"page", "colour"}


def test_arguments_that_miss_the_input_schema_are_a_tool_error_in_2025_11_25(client, tenant_a):
    """2025-11-25 (SEP-1303) moved argument errors into the result, so the model can read and
    correct them."""
    result = tool_result(client, tenant_a, "create_job", {**job_body(), "title": 5, "size": "big"})
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "title" in text and "size" in text


def test_an_unknown_tools_list_cursor_is_invalid_params(client, tenant_a):
    assert (
        call(client, tenant_a, "tools/list", {"cursor": "page-2"}).json["error"]["code"] == -32602
    )


# ---- batches -------------------------------------------------------------


def test_a_batch_in_2025_03_26_answers_each_request_and_skips_notifications(client, tenant_a):
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "two", "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "nope"},
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "initialize",
            "params": {"protocolVersion": "2025-03-26"},
        },
    ]
    response = post_rpc(client, tenant_a, batch, version="2025-03-26")
    assert response.status_code == 200
    replies = {reply["id"]: reply for reply in response.json}
    assert set(replies) == {1, "two", 3, 4}
    assert replies[1]["result"] == {}
    assert any(tool["name"] == "list_jobs" for tool in replies["two"]["result"]["tools"])
    assert replies[3]["error"]["code"] == -32601
    assert replies[4]["error"]["code"] == -32600  # initialize must not be batched


def test_a_batch_without_a_version_header_is_taken_as_2025_03_26(client, tenant_a):
    response = post_rpc(client, tenant_a, [{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    assert response.status_code == 200 and response.json == [
        {"jsonrpc": "2.0", "id": 1, "result": {}}
    ]


def test_a_batch_of_notifications_only_is_202(client, tenant_a):
    response = post_rpc(
        client,
        tenant_a,
        [{"jsonrpc": "2.0", "method": "notifications/initialized"}],
        version="2025-03-26",
    )
    assert response.status_code == 202 and response.data == b""


def test_an_empty_batch_is_invalid_request(client, tenant_a):
    response = post_rpc(client, tenant_a, [], version="2025-03-26")
    assert response.status_code == 400 and response.json["error"]["code"] == -32600


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_a_batch_is_invalid_request_where_the_version_has_no_batches(client, tenant_a, version):
    response = post_rpc(
        client, tenant_a, [{"jsonrpc": "2.0", "id": 1, "method": "ping"}], version=version
    )
    assert response.status_code == 400
    assert response.json["error"]["code"] == -32600 and version in response.json["error"]["message"]


# ---- HTTP layer ----------------------------------------------------------


@pytest.mark.parametrize("path", ENDPOINTS)
@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer not-a-key"}, {"Authorization": "Basic dXNlcjpwdw=="}],
    ids=["missing", "unknown", "basic"],
)
def test_a_missing_or_wrong_key_is_401_with_www_authenticate_before_json_rpc(client, path, headers):
    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        "{junk",
    ):
        response = post_rpc(client, None, message, path=path, headers=headers)
        assert response.status_code == 401
        challenge = response.headers["WWW-Authenticate"]
        assert challenge.startswith('Bearer realm="hirekit"')
        # a request without credentials is told nothing more (RFC 6750 3.1); a wrong one is named
        # invalid_token
        named = 'error="invalid_token"' in challenge and "error_description=" in challenge
        assert named is bool(headers)
        assert (
            response.json["status"] == 401
            and response.json["error"]["type"] == "authentication_error"
        )


@pytest.mark.parametrize("path", ENDPOINTS)
def test_anything_but_post_is_405_allow_post(client, tenant_a, path):
    for method in ("GET", "DELETE", "PUT"):
        response = client.open(path, method=method, headers=tenant_a.headers)
        assert response.status_code == 405, method
        assert set(response.headers["Allow"].split(", ")) == {"OPTIONS", "POST"}
        assert response.json["status"] == 405


@pytest.mark.parametrize("path", ENDPOINTS)
def test_a_page_on_an_allowed_origin_may_call_with_fetch_and_read_the_challenge(
    make_app, make_tenant, path
):
    app = make_app(MCP_ALLOWED_ORIGINS=["https://agents.example.com"])
    client = app.test_client()
    tenant = make_tenant("cors-co")
    preflight = {
        "Origin": "https://agents.example.com",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version",
    }
    answered = client.options(path, headers=preflight)
    assert answered.status_code == 200
    assert answered.headers["Access-Control-Allow-Origin"] == "https://agents.example.com"
    assert "POST" in answered.headers["Access-Control-Allow-Methods"]
    assert {"authorization", "content-type", "mcp-protocol-version"} <= {
        name.strip().lower() for name in answered.headers["Access-Control-Allow-Headers"].split(",")
    }
    assert "Access-Control-Allow-Credentials" not in answered.headers

    refused = client.options(path, headers=preflight | {"Origin": "http://evil.example"})
    assert refused.status_code == 403 and "Access-Control-Allow-Origin" not in refused.headers

    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    challenged = post_rpc(
        client, None, ping, path=path, headers={"Origin": "https://agents.example.com"}
    )
    assert challenged.status_code == 401
    assert challenged.headers["Access-Control-Allow-Origin"] == "https://agents.example.com"
    assert "WWW-Authenticate" in challenged.headers["Access-Control-Expose-Headers"]
    pong = post_rpc(
        client, tenant, ping, path=path, headers={"Origin": "https://agents.example.com"}
    )
    assert (
        pong.status_code == 200
        and pong.headers["Access-Control-Allow-Origin"] == "https://agents.example.com"
    )


def test_no_origin_is_answered_cross_origin_by_default(client, tenant_a):
    preflight = {"Origin": "https://agents.example.com", "Access-Control-Request-Method": "POST"}
    assert client.options("/mcp", headers=preflight).status_code == 403
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert "Access-Control-Allow-Origin" not in post_rpc(client, tenant_a, ping).headers


def test_a_foreign_origin_is_403_before_auth_and_an_allowed_one_passes(make_app, make_tenant):
    app = make_app(MCP_ALLOWED_ORIGINS=["https://agents.example.com"])
    client = app.test_client()
    tenant = make_tenant("origin-co")
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    refused = post_rpc(client, None, ping, headers={"Origin": "http://evil.example"})
    assert refused.status_code == 403 and refused.json["error"]["type"] == "permission_error"
    assert (
        post_rpc(client, tenant, ping, headers={"Origin": "http://evil.example"}).status_code == 403
    )
    allowed = post_rpc(client, tenant, ping, headers={"Origin": "https://agents.example.com"})
    assert allowed.status_code == 200 and allowed.json["result"] == {}


def test_any_origin_is_refused_by_default_but_requests_without_origin_pass(client, tenant_a):
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert (
        post_rpc(client, tenant_a, ping, headers={"Origin": "http://localhost:3000"}).status_code
        == 403
    )
    assert post_rpc(client, tenant_a, ping).status_code == 200


def test_an_accept_header_without_json_is_406(client, tenant_a):
    response = post_rpc(
        client,
        tenant_a,
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={"Accept": "text/html"},
    )
    assert response.status_code == 406 and response.json["status"] == 406
    wildcard = post_rpc(
        client, tenant_a, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={"Accept": "*/*"}
    )
    assert wildcard.status_code == 200


def test_tool_calls_count_against_the_keys_rate_limit(make_app, make_tenant):
    app = make_app(RATE_LIMIT="3/minute")
    client = app.test_client()
    tenant = make_tenant("limited")
    statuses = [
        call(client, tenant, "tools/call", {"name": "list_jobs", "arguments": {}}).status_code
        for _ in range(4)
    ]
    assert statuses == [200, 200, 200, 429]
    limited = call(client, tenant, "ping")
    assert limited.status_code == 429 and limited.json["error"]["type"] == "rate_limit_error"
    assert "Retry-After" in limited.headers


def test_both_endpoints_are_described_in_openapi(client):
    paths = client.get("/openapi.json").json["paths"]
    for path in ENDPOINTS:
        operation = paths[path]["post"]
        assert operation["summary"] and {"200", "202", "400", "401", "403", "429"} <= set(
            operation["responses"]
        )
        assert operation["security"] == [{"bearerAuth": []}]
