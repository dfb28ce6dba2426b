"""`make test` runs the suite in several pytest-xdist workers: each tests in a PostgreSQL database
and a Redis database of its own (tests/worker_databases.py), so no worker's resets reach
another's."""

from __future__ import annotations

import pytest

from tests.conftest import POSTGRES_URL
from tests.worker_databases import worker_database_url, worker_redis_url


def test_each_worker_takes_the_redis_database_below_the_previous_ones():
    named = "redis://127.0.0.1:6379/15"
    assert worker_redis_url(named, "gw0") == named
    assert worker_redis_url(named, "gw1") == "redis://127.0.0.1:6379/14"
    assert worker_redis_url("redis://:pw@cache:6380/3", "gw3") == "redis://:pw@cache:6380/0"
    assert worker_redis_url(named, "") == named  # not under xdist: the named database itself
    with pytest.raises(pytest.UsageError, match="no Redis database for xdist worker gw4"):
        worker_redis_url("redis://127.0.0.1:6379/3", "gw4")


@pytest.mark.skipif(
    not POSTGRES_URL,
    reason="PostgreSQL tests need HIREKIT_TEST_DATABASE_URL (e.g. postgresql://postgres@127.0.0.1:5432/test)",
)
def test_each_worker_gets_a_postgresql_database_of_its_own_created_once():
    import psycopg2

    url = worker_database_url(POSTGRES_URL, "gw99")
    try:
        assert url.rsplit("/", 1)[1] == POSTGRES_URL.rsplit("/", 1)[1] + "_gw99"
        assert worker_database_url(POSTGRES_URL, "gw99") == url  # there already: used as it is
        connection = psycopg2.connect(url)
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT current_database()")
                assert cursor.fetchone()[0].endswith("_gw99")
        finally:
            connection.close()
        assert (
            worker_database_url(POSTGRES_URL, "")
            == worker_database_url(POSTGRES_URL, "gw0")
            == POSTGRES_URL
        )
    finally:
        connection = psycopg2.connect(POSTGRES_URL)
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}"')
        connection.close()
