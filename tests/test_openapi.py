"""The OpenAPI document: valid, complete (every route and method), secured, with summaries and error bodies."""

import re

from openapi_spec_validator import validate

UNDOCUMENTED = {"static", "api-docs.openapi_json", "swagger_ui.page", "swagger_ui.static", "swagger_ui.initializer"}
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
