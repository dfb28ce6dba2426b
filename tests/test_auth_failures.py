"""Failed authentication has a bounded cost: an address past AUTH_FAILURE_LIMIT unknown keys is
refused 429 before any key lookup, while a key that works answers as usual from that address;
unknown keys never push known ones out of the key cache."""

from __future__ import annotations

import logging
import secrets
import time

from app.config import DEFAULTS
from app.data.db import database
from app.data.tenancy import VISIBLE_PREFIX_LENGTH, resolve_key, revoke_key
from app.security.auth import KnownKeys
from tests.limit_storage import limit_storage  # noqa: F401 (fixture)

LIST = "/v1/jobs?page=1&size=1"
ELSEWHERE = {"REMOTE_ADDR": "192.0.2.7"}


def guessed_key() -> dict:
    return {"Authorization": f"Bearer hk_{secrets.token_urlsafe(32)}"}


def key_lookups(records) -> list:
    """The SQL statements peewee ran that looked one key up by its hash."""
    return [
        record
        for record in records
        if record.name == "peewee"
        and "api_keys" in str(record.msg)
        and "key_hash\" = " in str(record.msg)
    ]


def key_list_reads(records) -> list:
    """The SQL statements peewee ran that read api_keys without looking one key up (the memory of
    working keys)."""
    return [
        record
        for record in records
        if record.name == "peewee"
        and "api_keys" in str(record.msg)
        and "key_hash\" = " not in str(record.msg)
    ]


def test_an_address_past_its_failed_attempts_gets_429_without_a_lookup(
    make_app,
    make_tenant,
    limit_storage,  # noqa: F811
    caplog,
):
    app = make_app(AUTH_FAILURE_LIMIT="3/minute", REDIS_URL=limit_storage)
    client, tenant = app.test_client(), make_tenant("guarded")
    assert [client.get(LIST, headers=guessed_key()).status_code for _ in range(3)] == [401] * 3
    with caplog.at_level(logging.DEBUG, logger="peewee"):
        refused = client.get(LIST, headers=guessed_key())
        person = client.get("/v2/person/search?query={}", headers={"X-API-Key": "hk_" + "x" * 40})
    assert refused.status_code == 429 and person.status_code == 429
    assert refused.json["error"]["type"] == "rate_limit_error"
    assert (
        "unknown or revoked API key from your address (3 per 1 minute)"
        in refused.json["error"]["message"]
    )
    assert (
        0 < int(refused.headers["Retry-After"]) <= 60
        and f"retry in {refused.headers['Retry-After']} s" in refused.json["error"]["message"]
    )
    assert key_lookups(caplog.records) == []  # the flood costs no database lookup
    # another address is not held back, and its good key works
    assert client.get(LIST, headers=guessed_key(), environ_base=ELSEWHERE).status_code == 401
    assert client.get(LIST, headers=tenant.headers, environ_base=ELSEWHERE).status_code == 200


def test_a_cached_good_key_keeps_working_from_an_address_that_failed(
    make_app,
    make_tenant,
    limit_storage,  # noqa: F811
):
    app = make_app(AUTH_FAILURE_LIMIT="2/minute", AUTH_CACHE_SECONDS=60, REDIS_URL=limit_storage)
    client, tenant = app.test_client(), make_tenant("shared-nat")
    assert client.get(LIST, headers=tenant.headers).status_code == 200
    assert [client.get(LIST, headers=guessed_key()).status_code for _ in range(3)] == [
        401,
        401,
        429,
    ]
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
        assert (
            f"AUTH_FAILURE_LIMIT, default {DEFAULTS['AUTH_FAILURE_LIMIT']})"
            in scheme["description"]
        )
        assert "429" in scheme["description"]


def test_a_valid_key_of_a_tenant_never_seen_answers_from_an_address_past_its_failures(
    make_app,
    make_tenant,
    limit_storage,  # noqa: F811
    caplog,
):
    """A NAT gateway or an ATS platform sends many tenants' traffic from one address: one tenant's
    revoked key retrying in a loop must not lock the others out, while the guessed keys still meet
    the limit."""
    app = make_app(AUTH_FAILURE_LIMIT="30/minute", AUTH_CACHE_SECONDS=5, REDIS_URL=limit_storage)
    client, other, person = (
        app.test_client(),
        make_tenant("behind-the-nat"),
        make_tenant("person-user"),
    )
    started = time.monotonic()
    with caplog.at_level(logging.DEBUG, logger="peewee"):
        statuses = [client.get(LIST, headers=guessed_key()).status_code for _ in range(300)]
    elapsed = time.monotonic() - started
    assert statuses == [401] * 30 + [429] * 270
    assert len(key_lookups(caplog.records)) == 30  # one lookup per key only until the limit
    # the memory of working keys is read once, then at most once a second for keys added since
    assert 1 <= len(key_list_reads(caplog.records)) <= 2 + elapsed / KnownKeys.NEW_KEYS_SECONDS
    answer = client.get(LIST, headers=other.headers)
    assert answer.status_code == 200, answer.json
    assert (
        client.get("/v2/person/search?query={}", headers=person.person_headers).status_code != 429
    )
    # the address is still past its failures
    assert client.get(LIST, headers=guessed_key()).status_code == 429


def test_a_key_created_after_the_flood_started_works_from_that_address(
    make_app, make_tenant, extra_key, monkeypatch
):
    monkeypatch.setattr(KnownKeys, "NEW_KEYS_SECONDS", 0.0)
    app = make_app(AUTH_FAILURE_LIMIT="3/minute")
    client, tenant = app.test_client(), make_tenant("late-comer")
    assert [client.get(LIST, headers=guessed_key()).status_code for _ in range(5)] == [401] * 3 + [
        429
    ] * 2
    fresh = {"Authorization": f"Bearer {extra_key(tenant.id)}"}
    assert client.get(LIST, headers=fresh).status_code == 200


def test_a_revoked_key_retrying_from_an_address_meets_the_limit(make_app, make_tenant):
    app = make_app(AUTH_FAILURE_LIMIT="3/minute")
    client, revoked, working = (
        app.test_client(),
        make_tenant("revoked-loop"),
        make_tenant("still-working"),
    )
    with app.app_context(), database.connection_context():
        assert revoke_key(revoked.key[:VISIBLE_PREFIX_LENGTH]) == 1
    assert [client.get(LIST, headers=revoked.headers).status_code for _ in range(5)] == [
        401
    ] * 3 + [429] * 2
    assert client.get(LIST, headers=working.headers).status_code == 200
