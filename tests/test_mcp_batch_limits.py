"""MCP batches have a bounded cost: at most MAX_BATCH_LENGTH messages, each counted against the rate
limit it would meet POSTed alone (people tools against the person routes' limit too), an over-limit
call answered -32029 with its retry time."""

from __future__ import annotations

from plugins.mcp.protocol import MAX_BATCH_LENGTH, RATE_LIMITED
from tests.factories import job_body
from tests.limit_storage import limit_storage  # noqa: F401 (fixture)
from tests.test_mcp_protocol import call, post_rpc
from tests.test_mcp_sourcing import ENGINEERS, load_people


def tool_call(request_id, name: str, arguments: dict) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def by_id(replies: list) -> dict:
    return {reply["id"]: reply for reply in replies}


def test_a_batch_longer_than_the_cap_is_413_and_none_of_it_runs(client, tenant_a):
    too_long = [tool_call(n, "create_job", job_body()) for n in range(MAX_BATCH_LENGTH + 1)]
    refused = post_rpc(client, tenant_a, too_long, version="2025-03-26")
    assert refused.status_code == 413
    assert (
        refused.json["error"]["code"] == -32600
        and f"at most {MAX_BATCH_LENGTH} messages" in refused.json["error"]["message"]
    )
    assert refused.json["error"]["data"] == {
        "max_batch_length": MAX_BATCH_LENGTH,
        "received": MAX_BATCH_LENGTH + 1,
    }
    assert client.get("/v1/jobs?page=1&size=1", headers=tenant_a.headers).json["total"] == 0

    at_the_cap = post_rpc(
        client,
        tenant_a,
        [{"jsonrpc": "2.0", "id": n, "method": "ping"} for n in range(MAX_BATCH_LENGTH)],
        version="2025-03-26",
    )
    assert at_the_cap.status_code == 200 and len(at_the_cap.json) == MAX_BATCH_LENGTH


def test_the_cap_is_documented_on_both_endpoints(client):
    paths = client.get("/openapi.json").json["paths"]
    for path in ("/mcp", "/mcp/sourcing"):
        operation = paths[path]["post"]
        assert f"at most {MAX_BATCH_LENGTH} messages" in operation["description"]
        assert "413" in operation["responses"] and "PERSON_RATE_LIMIT" in operation["description"]


def test_every_message_of_a_batch_counts_against_the_default_limit(
    make_app,
    make_tenant,
    limit_storage,  # noqa: F811
):
    app = make_app(RATE_LIMIT="5/minute", REDIS_URL=limit_storage)
    client, tenant = app.test_client(), make_tenant("batcher")
    batch = [tool_call(n, "list_jobs", {}) for n in range(4)] + [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 9, "method": "ping"},
    ]
    response = post_rpc(client, tenant, batch, version="2025-03-26")
    assert response.status_code == 200
    replies = by_id(response.json)
    # the POST, then 3 more: 4 of 5
    assert [("result" in replies[n]) for n in range(4)] == [True] * 4
    # the notification took the fifth; the ping is the sixth message
    refused = replies[9]["error"]
    assert (
        refused["code"] == RATE_LIMITED
        and "Rate limit exceeded (5 per 1 minute)" in refused["message"]
    )
    assert (
        0 < refused["data"]["retry_after"] <= 60
        and f"retry in {refused['data']['retry_after']} s" in refused["message"]
    )
    assert response.headers["X-RateLimit-Remaining"] == "0"
    # the key's limit is spent for every route
    assert call(client, tenant, "ping").status_code == 429


def test_people_tools_count_against_the_person_routes_limit_alone_and_in_batches(
    app,
    make_app,
    make_tenant,
    limit_storage,  # noqa: F811
):
    load_people(app)
    limited = make_app(
        PERSON_RATE_LIMIT="4/minute", RATE_LIMIT="1000/minute", REDIS_URL=limit_storage
    )
    client, tenant = limited.test_client(), make_tenant("sourcer")
    assert (
        client.post(
            "/v2/person/search", json={"query": ENGINEERS}, headers=tenant.person_headers
        ).status_code
        == 200
    )
    alone = call(
        client,
        tenant,
        "tools/call",
        {"name": "people_search", "arguments": {"query": ENGINEERS}},
        path="/mcp/sourcing",
        version="2025-03-26",
    )
    assert alone.status_code == 200 and alone.json["result"]["isError"] is False
    batch = [
        tool_call(1, "people_search_page", {"query": ENGINEERS}),
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        tool_call(3, "people_enrich", {"servicegraph_id": "p1"}),
        tool_call(4, "people_search", {"query": ENGINEERS}),
    ]
    replies = by_id(
        post_rpc(client, tenant, batch, path="/mcp/sourcing", version="2025-03-26").json
    )
    # 3rd and 4th of 4
    assert replies[1]["result"]["isError"] is False and replies[3]["result"]["isError"] is False
    assert "tools" in replies[2]["result"]  # not a people tool: the default limit only
    refused = replies[4]["error"]
    assert refused["code"] == RATE_LIMITED
    assert (
        "4 per 1 minute, shared with the person REST routes" in refused["message"]
        and refused["data"]["retry_after"] > 0
    )
    # the same counter: the REST person routes are spent too
    rest = client.post(
        "/v2/person/search", json={"query": ENGINEERS}, headers=tenant.person_headers
    )
    assert rest.status_code == 429


def test_a_lone_people_call_over_the_person_limit_is_429_with_retry_after(
    make_app,
    make_tenant,
    limit_storage,  # noqa: F811
):
    app = make_app(PERSON_RATE_LIMIT="1/minute", RATE_LIMIT="1000/minute", REDIS_URL=limit_storage)
    client, tenant = app.test_client(), make_tenant("eager")
    for version, expected in (("2025-11-25", 200), ("2025-11-25", 429), ("2025-03-26", 429)):
        response = call(
            client,
            tenant,
            "tools/call",
            {"name": "people_enrich", "arguments": {"servicegraph_id": "p1"}},
            path="/mcp/sourcing",
            version=version,
        )
        assert response.status_code == expected, response.json
    assert response.json["error"]["code"] == RATE_LIMITED
    assert response.headers["Retry-After"] == str(response.json["error"]["data"]["retry_after"])
    other = call(client, tenant, "tools/call", {"name": "list_jobs", "arguments": {}})
    # the jobs tools meet the default only
    assert other.status_code == 200 and other.json["result"]["isError"] is False
