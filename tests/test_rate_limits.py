"""Rate limits per API key: 429 in the error body with Retry-After and X-RateLimit-*, a per-tenant
override, Redis shared."""

import pytest

from tests.factories import job_body

LIST = "/v1/jobs?page=1&size=1"


def test_429_after_the_limit_with_headers(make_app, make_tenant):
    app = make_app(RATE_LIMIT="3/minute")
    tenant = make_tenant("limited")
    client = app.test_client()
    answers = [client.get(LIST, headers=tenant.headers) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 200]
    assert (
        answers[-1].headers["X-RateLimit-Remaining"] == "0"
        and "Retry-After" not in answers[-1].headers
    )
    limited = client.get(LIST, headers=tenant.headers)
    assert limited.status_code == 429
    assert limited.json["error"]["type"] == "rate_limit_error"
    assert "3 per 1 minute" in limited.json["error"]["message"]
    assert int(limited.headers["Retry-After"]) > 0
    assert (
        limited.headers["X-RateLimit-Limit"] == "3"
        and limited.headers["X-RateLimit-Remaining"] == "0"
    )
    assert int(limited.headers["X-RateLimit-Reset"]) > 0


def test_limits_are_per_key(make_app, make_tenant):
    app = make_app(RATE_LIMIT="2/minute")
    first, second = make_tenant("first"), make_tenant("second")
    client = app.test_client()
    for _ in range(2):
        client.get(LIST, headers=first.headers)
    assert client.get(LIST, headers=first.headers).status_code == 429
    assert client.get(LIST, headers=second.headers).status_code == 200


def test_one_limit_counts_every_route_of_a_key(make_app, make_tenant):
    app = make_app(RATE_LIMIT="3/minute")
    tenant = make_tenant("roaming")
    client = app.test_client()
    job_id = client.post("/v1/jobs", json=job_body(), headers=tenant.headers).json["id"]
    assert client.get(f"/v1/jobs/{job_id}", headers=tenant.headers).status_code == 200
    assert client.get(f"/v1/jobs/{job_id}/scheduling", headers=tenant.headers).status_code == 200
    assert client.get(LIST, headers=tenant.headers).status_code == 429


def test_tenant_override_raises_the_limit(make_app, make_tenant):
    app = make_app(RATE_LIMIT="2/minute")
    vip = make_tenant("vip", rate_limit="5/minute")
    client = app.test_client()
    assert [client.get(LIST, headers=vip.headers).status_code for _ in range(6)] == [200] * 5 + [
        429
    ]


def test_health_is_not_limited(make_app):
    client = make_app(RATE_LIMIT="1/minute").test_client()
    assert {client.get("/healthz").status_code for _ in range(3)} == {200}


def test_limit_is_shared_by_two_apps_on_one_redis(make_app, make_tenant, redis_url):
    first = make_app(RATE_LIMIT="4/minute", REDIS_URL=redis_url)
    second = make_app(RATE_LIMIT="4/minute", REDIS_URL=redis_url)
    tenant = make_tenant("shared")
    a, b = first.test_client(), second.test_client()
    statuses = [
        client.get(LIST, headers=tenant.headers).status_code for client in (a, b, a, b, a, b)
    ]
    assert statuses == [200, 200, 200, 200, 429, 429]


@pytest.mark.parametrize("fail_open, expected", [(True, 200), (False, 503)])
def test_limiter_storage_down_fails_open_or_closed(make_app, make_tenant, fail_open, expected):
    app = make_app(
        RATE_LIMIT="100/minute",
        RATELIMIT_STORAGE_URI="redis://127.0.0.1:1/0",
        RATE_LIMIT_FAIL_OPEN=fail_open,
    )
    tenant = make_tenant("stormy")
    response = app.test_client().get(LIST, headers=tenant.headers)
    assert response.status_code == expected
    if expected == 503:
        assert (
            response.json["error"]["type"] == "service_unavailable"
            and response.headers["Retry-After"]
        )


@pytest.mark.parametrize("strategy", ["moving-window", "sliding-window-counter"])
def test_other_flask_limiter_strategies_count_the_same(make_app, make_tenant, strategy):
    # a day's window: the sliding window counter weighs the previous window's hits down as the next
    # one begins, so requests that straddle a window's end would count fewer (a minute's window did,
    # once in a full run)
    app = make_app(RATE_LIMIT="3/day", RATELIMIT_STRATEGY=strategy)
    tenant = make_tenant("strategist")
    client = app.test_client()
    answers = [client.get(LIST, headers=tenant.headers) for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    assert [a.headers["X-RateLimit-Remaining"] for a in answers] == ["2", "1", "0", "0"]
    assert (
        int(answers[-1].headers["Retry-After"]) > 0
        and answers[-1].headers["X-RateLimit-Limit"] == "3"
    )


def test_remaining_counts_down_per_request(make_app, make_tenant):
    app = make_app(RATE_LIMIT="5/minute")
    tenant = make_tenant("counter")
    client = app.test_client()
    remaining = [
        client.get(LIST, headers=tenant.headers).headers["X-RateLimit-Remaining"] for _ in range(5)
    ]
    # one hit per request: Flask-Limiter's own hook does not count too
    assert remaining == ["4", "3", "2", "1", "0"]
