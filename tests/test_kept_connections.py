"""A long-lived request thread (gunicorn's gthread pool threads) keeps its database connection between requests, and
gives it back whenever keeping it could hurt: a transaction left open, a stale or dead connection, the pool's last slot."""

from __future__ import annotations

import contextlib
import threading
import time

import pytest

from app import create_app
from app.data.db import database
from app.server.server_threads import is_long_lived_request_thread, mark_long_lived_request_thread
from tests.factories import job_body


def on_request_thread(work, *, long_lived=True):
    """Run `work()` on a new thread (marked long-lived unless told otherwise) and return what it returned. The thread
    hands back whatever it still holds before it ends, so the process-wide pool loses no slot to the test."""
    outcome = {}

    def run():
        if long_lived:
            mark_long_lived_request_thread()
        try:
            outcome["value"] = work()
        except BaseException as error:  # re-raised on the test's thread
            outcome["error"] = error
        finally:
            if not database.is_closed():
                database.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=60)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def held_connection():
    """The connection the current thread holds between requests, or None."""
    return None if database.is_closed() else database.connection()


@pytest.fixture
def job_path(app, client, tenant_a):
    job = client.post("/v1/jobs", json=job_body(source_id="kept-1"), headers=tenant_a.headers).json
    return f"/v1/jobs/{job['id']}"


def test_a_long_lived_request_thread_reuses_one_connection(app, tenant_a, job_path):
    def three_reads():
        client, held = app.test_client(), []
        for _ in range(3):
            assert client.get(job_path, headers=tenant_a.headers).status_code == 200
            held.append(held_connection())
        return held

    held = on_request_thread(three_reads)
    assert held[0] is not None and held == [held[0]] * 3


def test_other_threads_hand_their_connection_back_after_each_request(app, tenant_a, job_path):
    def read_unmarked():
        assert not is_long_lived_request_thread()
        assert app.test_client().get(job_path, headers=tenant_a.headers).status_code == 200
        return held_connection()

    assert on_request_thread(read_unmarked, long_lived=False) is None


def test_a_write_is_committed_before_its_connection_is_kept(app, tenant_a, client):
    def create():
        answer = app.test_client().post("/v1/jobs", json=job_body(source_id="kept-write"), headers=tenant_a.headers)
        return answer.status_code, held_connection()

    status, held = on_request_thread(create)
    assert status == 201 and held is not None
    # another connection (this thread's) sees the row at once: nothing was left uncommitted on the kept one
    listed = client.get("/v1/jobs?page=1&size=10", headers=tenant_a.headers).json["data"]
    assert [job["source_id"] for job in listed] == ["kept-write"]


def test_a_connection_inside_a_transaction_is_not_kept(app):
    def open_transaction():
        with app.app_context():
            database.connect()
            database.execute_sql("BEGIN")
            return database.obj.keep(database.connection())

    assert on_request_thread(open_transaction) is False


def test_the_pools_last_free_slot_is_never_kept(base_config, tenant_a):
    app = create_app({**base_config, "DATABASE_POOL_SIZE": 1})

    def read_jobs():
        assert app.test_client().get("/v1/jobs?page=1&size=10", headers=tenant_a.headers).status_code == 200
        return held_connection()

    assert on_request_thread(read_jobs) is None
    began = time.monotonic()  # a thread that is not a request thread gets the pool's one connection at once
    assert app.test_client().get("/v1/jobs?page=1&size=10", headers=tenant_a.headers).status_code == 200
    assert time.monotonic() - began < 2


def test_a_stale_connection_goes_back_to_the_pool_instead(app, tenant_a, job_path, monkeypatch):
    monkeypatch.setattr(database.obj, "_stale_timeout", 1e-6)  # every connection has outlived it

    def read():
        assert app.test_client().get(job_path, headers=tenant_a.headers).status_code == 200
        return held_connection()

    assert on_request_thread(read) is None


def test_a_kept_connection_that_died_while_idle_is_replaced_before_the_request_uses_it(app, tenant_a, job_path, db_url):
    if not db_url.startswith("postgres"):
        pytest.skip("needs a server that can end the connection")
    import psycopg2

    pool = database.obj

    def read_after_the_server_ended_the_connection():
        client = app.test_client()
        assert client.get(job_path, headers=tenant_a.headers).status_code == 200
        kept = held_connection()
        backend = kept.get_backend_pid()
        with contextlib.closing(psycopg2.connect(db_url)) as other:  # a connection outside the app's pool
            other.autocommit = True
            other.cursor().execute("SELECT pg_terminate_backend(%s)", (backend,))
        pool._returned_at[pool.conn_key(kept)] -= pool.PING_AFTER_SECONDS + 1  # idle long enough to be checked
        answer = client.get(job_path, headers=tenant_a.headers)
        return answer.status_code, held_connection().get_backend_pid() != backend

    assert on_request_thread(read_after_the_server_ended_the_connection) == (200, True)

