"""The /mcp/sourcing tools: people search and enrich answer what the person REST routes answer,
failures as isError results."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest

from tests.test_mcp_jobs import listed_tools
from tests.test_mcp_protocol import call, tool_result

pytestmark = pytest.mark.plugins("jobs", "mcp", "person")

SAMPLE = Path(__file__).parent / "person" / "people8.jsonl"
SOURCING_TOOLS = ["people_search", "people_search_page", "people_enrich", "people_bulk_enrich"]
ENGINEERS = {"match": {"job_title": "engineer"}}


def load_people(app) -> None:
    """Load the eight-profile sample into the app's production dataset (the embedded index under
    SEARCH_INDEX)."""
    from plugins.person.loader import load_file

    with app.app_context():
        report = load_file(
            app.extensions["hirekit_person"][False].backend(), str(SAMPLE), processes=1
        )
    assert report.loaded == 8 and not report.skipped


def sourcing(client, tenant, name, arguments) -> dict:
    return tool_result(client, tenant, name, arguments, path="/mcp/sourcing")


@pytest.fixture
def people(app):
    load_people(app)


def test_sourcing_tools_are_listed_with_valid_schemas(client, tenant_a):
    tools = listed_tools(client, tenant_a, "/mcp/sourcing")
    assert list(tools) == SOURCING_TOOLS
    for tool in tools.values():
        jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])
        jsonschema.Draft202012Validator.check_schema(tool["outputSchema"])
        assert tool["annotations"]["readOnlyHint"] is True
    assert tools["people_search"]["inputSchema"]["properties"]["query"]["type"] == "object"
    search_input = tools["people_search"]["inputSchema"]
    # query or sql
    assert search_input["properties"]["sql"]["type"] == "string" and "required" not in search_input
    assert tools["people_enrich"]["inputSchema"]["properties"]["required"]["type"] == "string"
    assert tools["people_bulk_enrich"]["inputSchema"]["properties"]["requests"]["maxItems"] == 100
    assert "list_jobs" not in tools and "people_search" not in listed_tools(client, tenant_a)


def test_people_search_answers_the_rest_body_and_scrolls(client, tenant_a, people):
    first = sourcing(client, tenant_a, "people_search", {"query": ENGINEERS, "size": 2})[
        "structuredContent"
    ]
    rest = client.post(
        "/v2/person/search", json={"query": ENGINEERS, "size": 2}, headers=tenant_a.person_headers
    ).json
    assert (
        first == rest and first["total"] == 4 and len(first["data"]) == 2 and first["scroll_token"]
    )
    rest_of = sourcing(
        client,
        tenant_a,
        "people_search",
        {"query": ENGINEERS, "size": 2, "scroll_token": first["scroll_token"]},
    )["structuredContent"]
    assert len(rest_of["data"]) == 2 and "scroll_token" not in rest_of
    assert {p["id"] for p in first["data"]}.isdisjoint(p["id"] for p in rest_of["data"])


def test_people_search_page_answers_numbered_pages(client, tenant_a, people):
    tools = listed_tools(client, tenant_a, "/mcp/sourcing")
    page = sourcing(
        client, tenant_a, "people_search_page", {"query": ENGINEERS, "size": 3, "page": 2}
    )["structuredContent"]
    assert (page["total"], page["page"], page["size"], page["total_pages"], len(page["data"])) == (
        4,
        2,
        3,
        2,
        1,
    )
    jsonschema.validate(page, tools["people_search_page"]["outputSchema"])


def test_people_enrich_and_bulk_enrich(client, tenant_a, people):
    tools = listed_tools(client, tenant_a, "/mcp/sourcing")
    single = sourcing(
        client, tenant_a, "people_enrich", {"servicegraph_id": "p1", "include_if_matched": True}
    )
    assert single["isError"] is False
    found = single["structuredContent"]
    assert (
        found["likelihood"] == 10
        and found["data"]["id"] == "p1"
        and found["matched"] == ["servicegraph_id"]
    )
    jsonschema.validate(found, tools["people_enrich"]["outputSchema"])
    bulk = sourcing(
        client,
        tenant_a,
        "people_bulk_enrich",
        {"requests": [{"servicegraph_id": "p2"}, {"servicegraph_id": "nobody"}]},
    )["structuredContent"]
    assert [item["status"] for item in bulk["data"]] == [200, 404]
    jsonschema.validate(bulk, tools["people_bulk_enrich"]["outputSchema"])


@pytest.mark.parametrize(
    "name, arguments, expected",
    [
        ("people_enrich", {"servicegraph_id": "nobody"}, "No records were found"),
        ("people_enrich", {"first_name": "Ada"}, "Not enough to identify a person"),
        ("people_search", {"query": {"florp": {}}}, "florp"),
        ("people_search", {"query": ENGINEERS, "from": 2, "scroll_token": "abc"}, "scroll_token"),
    ],
)
def test_domain_failures_are_tool_errors_a_model_can_act_on(
    client, tenant_a, people, name, arguments, expected
):
    result = sourcing(client, tenant_a, name, arguments)
    assert result["isError"] is True and expected in result["content"][0]["text"]


def test_an_unconfigured_dataset_is_a_tool_error_not_a_crash(client, tenant_a):
    result = sourcing(client, tenant_a, "people_search", {"query": ENGINEERS})
    assert result["isError"] is True and "dataset is not available" in result["content"][0]["text"]


def test_search_arguments_that_miss_the_schema_are_invalid_params_before_2025_11_25(
    client, tenant_a, people
):
    reply = call(
        client,
        tenant_a,
        "tools/call",
        {"name": "people_search", "arguments": {"size": 500}},
        path="/mcp/sourcing",
        version="2025-06-18",
    ).json
    assert reply["error"]["code"] == -32602 and set(reply["error"]["data"]["fields"]) == {
        "query",
        "size",
    }


def test_sourcing_tools_are_absent_without_the_person_family(make_app, make_tenant):
    app = make_app(PLUGINS=["jobs", "mcp"])
    tenant = make_tenant("no-person")
    assert listed_tools(app.test_client(), tenant, "/mcp/sourcing") == {}


def test_people_search_takes_sql_instead_of_query(client, tenant_a, people):
    by_sql = sourcing(
        client,
        tenant_a,
        "people_search",
        {"sql": "SELECT * FROM person WHERE job_title = 'engineer'", "size": 10},
    )["structuredContent"]
    by_dsl = sourcing(
        client,
        tenant_a,
        "people_search",
        {"query": {"match_phrase": {"job_title": "engineer"}}, "size": 10},
    )
    assert by_sql == by_dsl["structuredContent"] and by_sql["total"] == 4
    refused = sourcing(client, tenant_a, "people_search", {"sql": "SELECT * FROM person LIMIT 2"})
    assert refused["isError"] is True and "LIMIT is not supported" in refused["content"][0]["text"]
    both = sourcing(
        client, tenant_a, "people_search", {"sql": "SELECT * FROM person", "query": ENGINEERS}
    )
    assert both["isError"] is True and "not both" in both["content"][0]["text"]


def test_people_enrich_takes_required(client, tenant_a, people):
    found = sourcing(
        client,
        tenant_a,
        "people_enrich",
        {"servicegraph_id": "p1", "required": "experience AND skills"},
    )
    assert found["isError"] is False and found["structuredContent"]["data"]["id"] == "p1"
    lacking = sourcing(
        client, tenant_a, "people_enrich", {"servicegraph_id": "p2", "required": "experience"}
    )
    assert lacking["isError"] is True and "required" in lacking["content"][0]["text"]


def test_people_search_sorts_with_specs_field_and_order_items(client, tenant_a, people):
    spec = sourcing(
        client,
        tenant_a,
        "people_search",
        {"query": {"match_all": {}}, "size": 8, "sort": [{"field": "birth_year", "order": "desc"}]},
    )
    elastic = sourcing(
        client,
        tenant_a,
        "people_search",
        {"query": {"match_all": {}}, "size": 8, "sort": [{"birth_year": "desc"}]},
    )
    ids = [hit["id"] for hit in spec["structuredContent"]["data"]]
    assert ids == [hit["id"] for hit in elastic["structuredContent"]["data"]] and len(ids) > 1
