"""Database URLs keep their query parameters: sslmode, sslrootcert, application_name and
connect_timeout reach the driver's connection, over the project's pooled defaults (PostgreSQL parts
run when HIREKIT_TEST_DATABASE_URL is set)."""

import os
import sqlite3
import uuid

import pytest

from app.data.db import database_from_url

POSTGRES_URL = os.environ.get("HIREKIT_TEST_DATABASE_URL", "")
needs_postgres = pytest.mark.skipif(
    not POSTGRES_URL.startswith("postgres"), reason="HIREKIT_TEST_DATABASE_URL is not set"
)


def with_query(url: str, query: str) -> str:
    return url + ("&" if "?" in url else "?") + query


@needs_postgres
def test_postgres_url_parameters_reach_the_connection(tmp_path):
    name = f"hirekit-{uuid.uuid4().hex[:8]}"
    # prefer: the file is read only when the server offers TLS with verification
    root_cert = tmp_path / "root.crt"
    database = database_from_url(
        with_query(
            POSTGRES_URL,
            f"application_name={name}&connect_timeout=7&sslmode=prefer&sslrootcert={root_cert}",
        ),
        pool_size=2,
    )
    try:
        database.connect(reuse_if_open=True)
        assert database.execute_sql("SHOW application_name").fetchone()[0] == name
        assert (
            database.execute_sql(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (name,)
            ).fetchone()[0]
            == 1
        )
        dsn = database.connection().get_dsn_parameters()
        assert (
            dsn["connect_timeout"] == "7"
            and dsn["sslmode"] == "prefer"
            and dsn["sslrootcert"] == str(root_cert)
        )
    finally:
        database.close_all()


@needs_postgres
def test_postgres_pool_keeps_its_defaults_under_url_parameters():
    database = database_from_url(
        with_query(POSTGRES_URL, "application_name=hirekit-defaults"), pool_size=3
    )
    assert database._max_connections == 3 and database.connect_params["connect_timeout"] == 3


@needs_postgres
def test_sslmode_verify_full_is_enforced_not_dropped(tmp_path):
    missing_root = tmp_path / "absent-root.crt"
    database = database_from_url(
        with_query(POSTGRES_URL, f"sslmode=verify-full&sslrootcert={missing_root}"), pool_size=1
    )
    with pytest.raises(Exception) as refused:
        database.connect()
    assert "root certificate file" in str(refused.value) or "SSL" in str(refused.value)


def test_sqlite_url_keeps_immediate_transactions_and_pragmas(tmp_path):
    path = tmp_path / "nested" / "hirekit.sqlite3"
    database = database_from_url(f"sqlite:///{path}", pool_size=2)
    assert database.database == str(path)
    try:
        database.connect()
        assert database.execute_sql("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert database.execute_sql("PRAGMA busy_timeout").fetchone()[0] == 10000
        other_writer = sqlite3.connect(path, timeout=0)
        with database.atomic():  # BEGIN IMMEDIATE: the write lock is taken before any write
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other_writer.execute("CREATE TABLE t (x)")
        other_writer.close()
    finally:
        database.close_all()
