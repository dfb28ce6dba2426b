"""Request threads keep their database connection between requests (app.db), without starving threads that hold none
and without trusting a connection that sat idle too long."""

import threading
import time

from app import create_app, db
from app.db import database
from tests.factories import job_body


def pool_of(app):
    with app.app_context():
        return database.obj


def test_a_request_thread_reuses_its_connection(base_config, tenant_a):
    app = create_app(base_config)
    client = app.test_client()
    job = client.post("/v1/jobs", json=job_body(source_id="kept"), headers=tenant_a.headers).json
    pool = pool_of(app)
    kept = database.connection()
    assert not database.is_closed() and len(pool._in_use) == 1  # still this thread's, not back in the pool
    for _ in range(3):
        assert client.get(f"/v1/jobs/{job['id']}", headers=tenant_a.headers).status_code == 200
        assert database.connection() is kept


def test_an_idle_kept_connection_goes_back_through_the_pool(base_config, tenant_a, monkeypatch):
    app = create_app(base_config)
    client = app.test_client()
    assert client.get("/v1/jobs?page=1&size=10", headers=tenant_a.headers).status_code == 200
    kept = database.connection()
    monkeypatch.setattr(db, "KEPT_IDLE_SECONDS", 0.0)
    time.sleep(0.01)
    checked_in = []
    real_close = type(database.obj)._close
    monkeypatch.setattr(type(database.obj), "_close", lambda self, conn, *a, **k: (checked_in.append(conn),
                                                                                    real_close(self, conn, *a, **k))[1])
    assert client.get("/v1/jobs?page=1&size=10", headers=tenant_a.headers).status_code == 200
    assert checked_in[:1] == [kept]  # handed back before the request used it (the pool's checkout pings old ones)


def test_more_threads_than_connections_never_wait_for_an_idle_one(base_config, tenant_a):
    """A pool of 2 and 6 threads: a thread keeps its connection only while the pool has another to spare, so no
    thread waits out the pool's 10 s timeout behind connections idle threads hold."""
    app = create_app({**base_config, "DATABASE_POOL_SIZE": 2})
    answers, start = [], threading.Barrier(6)

    def one_thread():
        client = app.test_client()
        start.wait()
        for _ in range(4):
            answers.append(client.get("/v1/jobs?page=1&size=10", headers=tenant_a.headers).status_code)
            time.sleep(0.02)  # idle between requests, as a keep-alive client's thread is

    began = time.monotonic()
    threads = [threading.Thread(target=one_thread) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [200] * 24
    assert time.monotonic() - began < 5
