"""The PostgreSQL pool hands a recently used connection out without a round trip, and still never
reuses a dead one: a connection idle for a while is pinged and replaced when the server dropped it,
and one the server dropped while it was in use fails one statement, then is replaced."""

from __future__ import annotations

import psycopg2
import peewee as pw
import pytest

from app.data import postgres_pool
from app.data.db import _open_database
from tests.conftest import POSTGRES_URL

pytestmark = pytest.mark.skipif(
    not POSTGRES_URL,
    reason="PostgreSQL tests need HIREKIT_TEST_DATABASE_URL "
    "(e.g. postgresql://postgres@127.0.0.1:5432/test)",
)


def backend_pid(database) -> int:
    with database.connection_context():
        return database.execute_sql("SELECT pg_backend_pid()").fetchone()[0]


def terminate(pid: int) -> None:
    admin = psycopg2.connect(POSTGRES_URL)
    admin.autocommit = True
    try:
        admin.cursor().execute("SELECT pg_terminate_backend(%s)", (pid,))
    finally:
        admin.close()


@pytest.fixture
def database():
    database = _open_database(POSTGRES_URL, pool_size=1)
    yield database
    database.close_all()


def last_statement_of(pid: int) -> str:
    """The last statement the backend ran (pg_stat_activity's query of an idle backend)."""
    admin = psycopg2.connect(POSTGRES_URL)
    try:
        cursor = admin.cursor()
        cursor.execute("SELECT query FROM pg_stat_activity WHERE pid = %s", (pid,))
        return cursor.fetchone()[0]
    finally:
        admin.close()


def test_a_connection_back_a_moment_ago_is_handed_out_without_a_ping(database, monkeypatch):
    monkeypatch.setattr(postgres_pool, "PING_AFTER_IDLE", 3600.0)  # however slow this machine is
    pid = backend_pid(database)
    with database.connection_context():  # a checkout, and no statement of its own
        assert last_statement_of(pid) == "SELECT pg_backend_pid()"


def test_a_connection_idle_for_a_while_is_pinged_when_handed_out(database, monkeypatch):
    monkeypatch.setattr(postgres_pool, "PING_AFTER_IDLE", 0.0)
    pid = backend_pid(database)
    with database.connection_context():
        assert last_statement_of(pid) == "SELECT 1"


def test_an_idle_connection_is_pinged_and_replaced_when_the_server_dropped_it(
    database, monkeypatch
):
    monkeypatch.setattr(postgres_pool, "PING_AFTER_IDLE", 0.0)
    pid = backend_pid(database)
    terminate(pid)
    # the checkout's ping finds it dead: a new connection, and no statement fails
    assert backend_pid(database) != pid


def test_a_recently_used_connection_the_server_dropped_fails_once_then_is_replaced(
    database, monkeypatch
):
    monkeypatch.setattr(postgres_pool, "PING_AFTER_IDLE", 3600.0)
    pid = backend_pid(database)
    terminate(pid)
    with pytest.raises((pw.OperationalError, pw.InterfaceError)):
        backend_pid(database)
    assert backend_pid(database) != pid
