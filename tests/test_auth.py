"""API keys: Bearer on /v1, X-API-Key on person routes; missing, malformed, unknown and revoked keys
are refused."""

import marshmallow as ma
import pytest

from app.http.api import Blueprint
from app.data.db import database
from app.plugins import Plugin, register
from app.data.tenancy import revoke_key


@pytest.fixture
def app_with_api_key_route(make_app):
    """An app with one extra X-API-Key family, so the scheme is tested apart from any real
    family."""
    app = make_app(PLUGINS=["jobs"])
    blp = Blueprint("keyed", __name__, url_prefix="/v9/keyed", auth="api_key")

    class Out(ma.Schema):
        tenant = ma.fields.String()

    @blp.route("")
    @blp.response(200, Out)
    def whoami():
        """Who am I"""
        from app.security.auth import current_tenant_id

        return {"tenant": current_tenant_id()}

    register(app, app.extensions["hirekit_api"], [Plugin(name="keyed", blueprints=(blp,))])
    return app


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Basic abc"},
        {"Authorization": "Bearer"},
        {"Authorization": "Bearer   "},
        {"Authorization": "Bearer hk_unknown_key_0000000000000000000"},
    ],
)
def test_bearer_routes_refuse_missing_malformed_and_unknown_keys(client, headers):
    response = client.get("/v1/jobs?page=1&size=1", headers=headers)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert response.json["error"]["type"] == "authentication_error"
    assert response.headers["X-Request-Id"]


def test_bearer_routes_do_not_take_x_api_key(client, tenant_a):
    assert client.get("/v1/jobs?page=1&size=1", headers=tenant_a.person_headers).status_code == 401
    assert client.get("/v1/jobs?page=1&size=1", headers=tenant_a.headers).status_code == 200


def test_api_key_routes_take_only_x_api_key(app_with_api_key_route, tenant_a):
    client = app_with_api_key_route.test_client()
    ok = client.get("/v9/keyed", headers=tenant_a.person_headers)
    assert ok.status_code == 200 and ok.json == {"tenant": tenant_a.id}
    refused = client.get("/v9/keyed", headers=tenant_a.headers)
    assert refused.status_code == 401
    assert "WWW-Authenticate" not in refused.headers  # not a bearer route
    assert "X-API-Key" in refused.json["error"]["message"]


def test_revoked_key_is_refused_but_other_keys_of_the_tenant_work(app, client, tenant_a, extra_key):
    second = extra_key(tenant_a.id)
    assert client.get("/v1/jobs?page=1&size=1", headers=tenant_a.headers).status_code == 200
    with app.app_context(), database.connection_context():
        assert revoke_key(tenant_a.key[:12]) == 1
    assert client.get("/v1/jobs?page=1&size=1", headers=tenant_a.headers).status_code == 401
    assert (
        client.get(
            "/v1/jobs?page=1&size=1", headers={"Authorization": f"Bearer {second}"}
        ).status_code
        == 200
    )


def test_generated_keys_are_long_and_prefixed(tenant_a):
    assert tenant_a.key.startswith("hk_") and len(tenant_a.key) >= 3 + 32


def test_keys_are_stored_only_as_hashes(app, tenant_a):
    from app.data.tenancy import ApiKey

    with app.app_context(), database.connection_context():
        row = ApiKey.get(ApiKey.tenant == tenant_a.id)
    assert tenant_a.key not in (row.key_hash, row.prefix)
    assert len(row.key_hash) == 64 and tenant_a.key.startswith(row.prefix)


def test_last_used_at_is_recorded(app, client, tenant_a):
    from app.data.tenancy import ApiKey

    client.get("/v1/jobs?page=1&size=1", headers=tenant_a.headers)
    with app.app_context(), database.connection_context():
        assert ApiKey.get(ApiKey.tenant == tenant_a.id).last_used_at is not None


def test_health_needs_no_key(client):
    assert client.get("/healthz").json == {"status": "ok"}


def test_get_tenant_answers_the_callers_tenant_and_limit(make_app, make_tenant):
    app = make_app(RATE_LIMIT="50/minute")
    plain, vip = make_tenant("plain"), make_tenant("vip", name="VIP Inc", rate_limit="5000/minute")
    client = app.test_client()
    assert client.get("/v1/tenant", headers=plain.headers).json == {
        "id": "plain",
        "name": "plain",
        "rate_limit": "50/minute",
        "candidate_retention_days": None,
    }
    assert client.get("/v1/tenant", headers=vip.headers).json == {
        "id": "vip",
        "name": "VIP Inc",
        "rate_limit": "5000/minute",
        "candidate_retention_days": None,
    }
    assert client.get("/v1/tenant").status_code == 401
