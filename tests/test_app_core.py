"""The factory's cross-cutting behaviour: config layering, request ids, health, the error body for
every failure."""

import json


from app import create_app
from app.config import load_config


def test_config_layers_defaults_file_env_then_mapping(tmp_path):
    config_file = tmp_path / "hirekit.json"
    config_file.write_text(json.dumps({"RATE_LIMIT": "9/minute", "LOG_LEVEL": "ERROR"}))
    environ = {
        "HIREKIT_RATE_LIMIT": "7/minute",
        "HIREKIT_BEHIND_PROXY": "true",
        "HIREKIT_AUTH_CACHE_SECONDS": "2.5",
        "HIREKIT_PLUGINS": "jobs,scheduling",
        "HIREKIT_CONFIG": str(config_file),
    }
    config = load_config({"LOG_LEVEL": "DEBUG"}, environ=environ)
    assert config["BEHIND_PROXY"] is True and config["AUTH_CACHE_SECONDS"] == 2.5
    assert config["PLUGINS"] == ["jobs", "scheduling"]
    assert config["RATE_LIMIT"] == "7/minute"  # the environment wins over the file (12-factor)
    assert config["LOG_LEVEL"] == "DEBUG"  # the mapping wins over everything


def test_every_response_carries_a_request_id(client):
    assert len(client.get("/healthz").headers["X-Request-Id"]) == 32
    assert (
        client.get("/healthz", headers={"X-Request-Id": "abc-123"}).headers["X-Request-Id"]
        == "abc-123"
    )
    assert (
        client.get("/healthz", headers={"X-Request-Id": "bad id!"}).headers["X-Request-Id"]
        != "bad id!"
    )


def test_readyz_reports_each_dependency(make_app):
    response = make_app(PLUGINS=["jobs"]).test_client().get("/readyz")
    assert response.status_code == 200
    assert response.json["checks"]["database"] == "ok"


def test_readyz_is_503_naming_what_is_down(make_app):
    client = make_app(REDIS_URL="redis://127.0.0.1:1/0", PLUGINS=["jobs"]).test_client()
    response = client.get("/readyz")
    assert response.status_code == 503
    assert "redis" in response.json["status"] and response.json["checks"]["redis"].startswith(
        "down"
    )
    assert response.headers["Retry-After"]


def test_unknown_path_and_method_use_the_error_body(client, tenant_a):
    missing = client.get("/v1/nothing-here", headers=tenant_a.headers)
    assert missing.status_code == 404 and missing.json["error"]["type"] == "not_found"
    wrong = client.delete("/v1/jobs", headers=tenant_a.headers)
    assert wrong.status_code == 405 and "POST" in wrong.headers["Allow"]


def test_unexpected_errors_are_500_without_a_trace(make_app, caplog):
    app = make_app(PLUGINS=["jobs"])

    @app.route("/boom")
    def boom():
        raise RuntimeError("secret internals")

    response = app.test_client().get("/boom")
    assert response.status_code == 500
    assert "secret" not in response.get_data(as_text=True)
    assert response.json["error"]["type"] == "api_error"
    assert response.headers["X-Request-Id"] in response.json["error"]["message"]
    assert any("secret internals" in (r.exc_text or "") for r in caplog.records)


def test_database_unreachable_is_503(base_config, tenant_a):
    app = create_app({**base_config, "DATABASE_URL": "postgresql://postgres@127.0.0.1:1/none"})
    response = app.test_client().get("/v1/jobs?page=1&size=1", headers=tenant_a.headers)
    assert response.status_code == 503
    assert (
        response.json["error"]["type"] == "service_unavailable" and response.headers["Retry-After"]
    )


def test_oversized_body_is_413(make_app, tenant_a):
    app = make_app(MAX_RESUME_BYTES=1024, MAX_CONTENT_LENGTH=2048)
    response = app.test_client().post(
        "/v1/jobs",
        data=b"x" * 5000,
        headers={**tenant_a.headers, "Content-Type": "application/json"},
    )
    assert response.status_code == 413 and response.json["error"]["type"] == "payload_too_large"


def test_proxy_headers_are_trusted_only_when_configured(make_app):
    seen = {}

    def build(behind):
        app = make_app(BEHIND_PROXY=behind)

        @app.route("/whoami")
        def whoami():
            from flask import request

            seen[behind] = (request.remote_addr, request.scheme)
            return "ok"

        return app.test_client()

    for behind in (True, False):
        build(behind).get(
            "/whoami", headers={"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https"}
        )
    assert seen[True] == ("203.0.113.9", "https")
    assert seen[False][0] != "203.0.113.9"
