"""The OpenAPI document: valid, complete (every route and method), secured, with summaries and error
bodies."""

import re

from openapi_spec_validator import validate

UNDOCUMENTED = {
    "static",
    "api-docs.openapi_json",
    "swagger_ui.page",
    "swagger_ui.static",
    "swagger_ui.initializer",
}
NOT_REST = ("mcp",)  # JSON-RPC endpoints are described by MCP's tools/list, not OpenAPI


def openapi_path(rule: str) -> str:
    return re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule)


def documented_routes(app):
    for rule in app.url_map.iter_rules():
        if rule.endpoint in UNDOCUMENTED or rule.endpoint.split(".")[0] in NOT_REST:
            continue
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            yield openapi_path(rule.rule), method.lower()


def test_document_is_valid_openapi(client):
    spec = client.get("/openapi.json").json
    validate(spec)
    assert spec["info"]["title"] == "Hirekit"
    assert {"bearerAuth", "apiKeyAuth"} <= set(spec["components"]["securitySchemes"])


def test_every_route_is_documented_with_summary_and_errors(app, client):
    spec = client.get("/openapi.json").json
    routes = list(documented_routes(app))
    assert routes, "no routes found"
    for path, method in routes:
        assert path in spec["paths"], f"{path} missing from the OpenAPI document"
        operation = spec["paths"][path].get(method)
        assert operation is not None, f"{method.upper()} {path} missing"
        assert operation.get("summary"), f"{method.upper()} {path} has no summary"
        assert "429" in operation["responses"], f"{method.upper()} {path} does not document 429"
        if operation.get("security"):
            assert "401" in operation["responses"]


def test_error_responses_use_the_one_error_body(client):
    spec = client.get("/openapi.json").json
    error = spec["components"]["schemas"]["Error"]
    assert set(error["properties"]) == {"status", "error"}
    job_get = spec["paths"]["/v1/jobs/{job_id}"]["get"]
    assert job_get["responses"]["404"] == {"$ref": "#/components/responses/NOT_FOUND"}
    assert job_get["security"] == [{"bearerAuth": []}]


def test_swagger_ui_is_served(client):
    response = client.get("/docs")
    assert response.status_code == 200 and b"swagger" in response.data.lower()


def test_routes_naming_a_record_document_404_and_upserts_do_not(app, client):
    """app.http.api.Blueprint documents 404 for every route with a path variable, so no route can
    forget it; an upsert creates what its path names and never answers 404."""
    spec = client.get("/openapi.json").json
    for path, method in documented_routes(app):
        if "{" not in path:
            continue
        responses = spec["paths"][path][method]["responses"]
        if responses.get("404", {}).get("description", "").endswith("(HTML)"):
            # a page a person opens answers its own plain HTML page, not the API's error body
            continue
        if path.endswith("/by-source-id/{source_id}"):
            assert "404" not in responses, f"{method.upper()} {path} creates what it names: no 404"
        else:
            assert responses.get("404") == {"$ref": "#/components/responses/NOT_FOUND"}, (
                f"{method.upper()} {path}"
            )


def test_record_families_routes_have_the_same_operation_names(client):
    """Each record family names its list, create, read, update and upserts the same way."""
    spec = client.get("/openapi.json").json
    names = {
        (path, method): operation.get("operationId")
        for path, operations in spec["paths"].items()
        for method, operation in operations.items()
        if method != "parameters"
    }
    for family, label in (
        ("jobs", "job"),
        ("candidates", "candidate"),
        ("applications", "application"),
    ):
        item = f"/v1/{family}/{{{label}_id}}"
        assert names[(f"/v1/{family}", "get")] == f"list_{family}"
        assert names[(f"/v1/{family}", "post")] == f"create_{label}"
        assert names[(item, "get")] == f"get_{label}"
        assert names[(item, "patch")] == f"update_{label}"
        assert (
            names[(f"/v1/{family}/by-source-id/{{source_id}}", "put")]
            == f"upsert_{label}_by_source_id"
        )
    assert (
        names[("/v1/calls", "get")] == "list_calls"
        and names[("/v1/calls/{call_id}", "get")] == "get_call"
    )
