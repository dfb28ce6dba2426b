"""Under pytest-xdist (`make test` runs two workers) each worker tests in a PostgreSQL database and
a Redis database of its own, so one worker's schema resets, emptied tables and flushes never reach
another's."""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

import pytest

# gw0, gw1, ... when the suite runs under pytest -n
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")


def worker_database_url(url: str, worker: str) -> str:
    """Under pytest-xdist each worker tests in a PostgreSQL database of its own: the one named for
    gw0, one beside it for the others (test -> test_gw1), created on first use, so no worker's
    schema reset reaches another's."""
    if not url or worker in ("", "gw0"):
        return url
    import psycopg2

    parts = urlsplit(url)
    name = f"{parts.path.lstrip('/') or 'postgres'}_{worker}"
    try:
        connection = psycopg2.connect(url)
    except psycopg2.OperationalError as exc:
        raise pytest.UsageError(
            f"HIREKIT_TEST_DATABASE_URL: cannot reach it to create worker {worker}'s database: "
            f"{exc}"
        ) from None
    try:
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
            if cursor.fetchone() is None:
                try:
                    cursor.execute(f'CREATE DATABASE "{name}"')
                except psycopg2.errors.DuplicateDatabase:
                    pass
    finally:
        connection.close()
    return urlunsplit(parts._replace(path=f"/{name}"))


def worker_redis_url(url: str, worker: str) -> str:
    """Under pytest-xdist each worker counts, queues and flushes in a Redis database of its own: the
    one named for gw0, the one below it for gw1, and so on (redis://127.0.0.1:6379/15 -> /14 for
    gw1)."""
    if not url or not worker:
        return url
    parts = urlsplit(url)
    number = int(parts.path.lstrip("/") or 0) - int(worker.removeprefix("gw"))
    if number < 0:
        raise pytest.UsageError(
            f"{url} leaves no Redis database for xdist worker {worker}: name a higher one or run "
            "fewer workers"
        )
    return urlunsplit(parts._replace(path=f"/{number}"))


def use_worker_databases() -> None:
    """Replace the named test databases with this worker's own in the environment, so test modules
    and the servers tests spawn see them; nothing changes outside pytest-xdist."""
    for variable, per_worker in (
        ("HIREKIT_TEST_DATABASE_URL", worker_database_url),
        ("HIREKIT_TEST_REDIS_URL", worker_redis_url),
    ):
        if os.environ.get(variable) and XDIST_WORKER:
            os.environ[variable] = per_worker(os.environ[variable], XDIST_WORKER)
