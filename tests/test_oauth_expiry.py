"""Expired authorization codes and tokens are deleted by the worker's periodic pass; live ones keep
working."""

from __future__ import annotations

import datetime as dt

from app.data.db import database, utcnow
from plugins.oauth import expiry
from plugins.oauth.models import OAuthCode, OAuthToken
from tests.oauth_flow import Person, create_user, grant, refresh, rpc

DAY = dt.timedelta(days=1)


def counts(app) -> tuple[int, int]:
    with app.app_context(), database.connection_context():
        return OAuthCode.select().count(), OAuthToken.select().count()


def purge_at(app, moment: dt.datetime) -> dict:
    with app.app_context(), database.connection_context():
        return expiry.purge_expired(moment)


def test_live_grants_stay_and_expired_ones_go(app, live_url, client, tenant_a):
    create_user(client, tenant_a, "ann@example.com")
    client_id, first = grant(live_url, Person("ann@example.com"))
    # the first pair is rotated, still kept
    refreshed = refresh(live_url, client_id, first["refresh_token"]).json()
    assert counts(app) == (1, 2)

    assert purge_at(app, utcnow()) == {"codes": 0, "tokens": 0}
    assert rpc(live_url, "/mcp", refreshed["access_token"], "tools/list").status_code == 200
    # the rotated refresh token is still recognised: presented again, it revokes its family
    assert refresh(live_url, client_id, first["refresh_token"]).status_code == 400
    assert rpc(live_url, "/mcp", refreshed["access_token"], "tools/list").status_code == 401

    # past the access tokens' lifetime, the refresh tokens still hold their rows; a day past the
    # code's expiry, it goes
    assert purge_at(app, utcnow() + DAY + dt.timedelta(minutes=10)) == {"codes": 1, "tokens": 0}
    refresh_days = app.config["OAUTH_REFRESH_TOKEN_DAYS"]
    assert purge_at(app, utcnow() + dt.timedelta(days=refresh_days, minutes=1)) == {
        "codes": 0,
        "tokens": 2,
    }
    assert counts(app) == (0, 0)


def add_expired_code(app, tenant, email: str, expired_at: dt.datetime) -> None:
    """A code of a new user of `tenant` that expired at `expired_at`, as a replayed or abandoned
    code leaves it."""
    with app.app_context(), database.connection_context():
        user_id = create_user(app.test_client(), tenant, email)["id"]
        OAuthCode.create(
            code_hash=email.encode().hex().ljust(64, "0")[:64],
            client_id="c",
            user=user_id,
            redirect_uri="http://127.0.0.1/cb",
            scope="",
            resource="r",
            code_challenge="x",
            code_challenge_method="S256",
            expires_at=expired_at,
        )


def run_one_pass(app, redis_url: str) -> list[str]:
    """The purge pass run by a real RQ worker on the default queue; the job ids scheduled there
    afterwards."""
    from redis import Redis
    from rq import SimpleWorker
    from rq.registry import ScheduledJobRegistry

    from app.background.queue import get_queue

    connection = Redis.from_url(redis_url)
    with app.app_context():
        queue = get_queue().queue(expiry.QUEUE)
        queue.enqueue("plugins.oauth.expiry.purge_expired_grants", result_ttl=0)
        SimpleWorker([queue], connection=connection).work(burst=True, with_scheduler=False)
    return ScheduledJobRegistry(expiry.QUEUE, connection=connection).get_job_ids()


def test_the_worker_runs_the_purge_as_a_chained_pass(make_app, redis_url, tenant_a):
    from app.plugins import load_plugin

    assert [
        (job.func, job.queue, job.interval_setting) for job in load_plugin("oauth").tasks.periodic
    ] == [("plugins.oauth.expiry.purge_expired_grants", "default", "OAUTH_PURGE_INTERVAL")]
    app = make_app(REDIS_URL=redis_url)
    add_expired_code(app, tenant_a, "bo@example.com", utcnow() - 40 * DAY)
    scheduled = run_one_pass(app, redis_url)
    assert counts(app) == (0, 0)
    assert expiry.JOB_ID in scheduled


def test_an_interval_of_zero_turns_the_pass_off(make_app, redis_url):
    app = make_app(REDIS_URL=redis_url, OAUTH_PURGE_INTERVAL=0)
    assert expiry.JOB_ID not in run_one_pass(app, redis_url)


def test_the_purge_command_is_what_cron_runs_without_redis(app, tenant_a):
    add_expired_code(app, tenant_a, "cy@example.com", utcnow() - 2 * DAY)
    result = app.test_cli_runner().invoke(args=["oauth", "purge"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "purged 1 expired authorization code(s) and 0 expired token(s)"
    assert counts(app) == (0, 0)
