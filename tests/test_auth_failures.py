"""Failed authentication has a bounded cost: an address past AUTH_FAILURE_LIMIT unknown keys is refused 429 before any
key lookup, and unknown keys never push known ones out of the key cache."""

from __future__ import annotations

import logging
import secrets

from app.config import DEFAULTS
from app.data.db import database
from app.data.tenancy import resolve_key
from tests.limit_storage import limit_storage  # noqa: F401 (fixture)

LIST = "/v1/jobs?page=1&size=1"
ELSEWHERE = {"REMOTE_ADDR": "192.0.2.7"}


def guessed_key() -> dict:
    return {"Authorization": f"Bearer hk_{secrets.token_urlsafe(32)}"}


def key_lookups(records) -> list:
    """The SQL statements peewee ran that read api_keys."""
    return [record for record in records if record.name == "peewee" and "api_keys" in str(record.msg)]


def test_an_address_past_its_failed_attempts_gets_429_without_a_lookup(make_app, make_tenant, limit_storage, caplog):  # noqa: F811
    app = make_app(AUTH_FAILURE_LIMIT="3/minute", REDIS_URL=limit_storage)
    client, tenant = app.test_client(), make_tenant("guarded")
    assert [client.get(LIST, headers=guessed_key()).status_code for _ in range(3)] == [401] * 3
    with caplog.at_level(logging.DEBUG, logger="peewee"):
        refused = client.get(LIST, headers=guessed_key())
        person = client.get("/v2/person/search?query={}", headers={"X-API-Key": "hk_" + "x" * 40})
    assert refused.status_code == 429 and person.status_code == 429
    assert refused.json["error"]["type"] == "rate_limit_error"
    assert "unknown or revoked API key from your address (3 per 1 minute)" in refused.json["error"]["message"]
    assert 0 < int(refused.headers["Retry-After"]) <= 60 and f"retry in {refused.headers['Retry-After']} s" in refused.json["error"]["message"]
    assert key_lookups(caplog.records) == []  # the flood costs no database lookup
    # another address is not held back, and its good key works
    assert client.get(LIST, headers=guessed_key(), environ_base=ELSEWHERE).status_code == 401
    assert client.get(LIST, headers=tenant.headers, environ_base=ELSEWHERE).status_code == 200


def test_a_cached_good_key_keeps_working_from_an_address_that_failed(make_app, make_tenant, limit_storage):  # noqa: F811
    app = make_app(AUTH_FAILURE_LIMIT="2/minute", AUTH_CACHE_SECONDS=60, REDIS_URL=limit_storage)
    client, tenant = app.test_client(), make_tenant("shared-nat")
    assert client.get(LIST, headers=tenant.headers).status_code == 200
    assert [client.get(LIST, headers=guessed_key()).status_code for _ in range(3)] == [401, 401, 429]
    assert client.get(LIST, headers=tenant.headers).status_code == 200


def test_good_keys_stay_cached_through_a_flood_of_unknown_ones(app, tenant_a, caplog):
    with app.app_context(), database.connection_context():
        assert resolve_key(tenant_a.key, cache_seconds=300) is not None
        for _ in range(10_050):  # more than the whole cache used to hold before it emptied itself
            assert resolve_key(f"hk_{secrets.token_urlsafe(32)}", cache_seconds=300) is None
        with caplog.at_level(logging.DEBUG, logger="peewee"):
            assert resolve_key(tenant_a.key, cache_seconds=300).tenant_id == tenant_a.id
    assert key_lookups(caplog.records) == []


def test_the_failed_attempt_limit_is_documented_with_the_security_schemes(client):
    schemes = client.get("/openapi.json").json["components"]["securitySchemes"]
    for scheme in schemes.values():
        assert f"AUTH_FAILURE_LIMIT, default {DEFAULTS['AUTH_FAILURE_LIMIT']})" in scheme["description"]
        assert "429" in scheme["description"]
