"""More request threads than pooled database connections: a thread waits for a free connection, on
SQLite as on PostgreSQL, instead of failing (SQLite's pool used to raise at once: a 500)."""

import threading
import time

from app import create_app


def test_more_threads_than_connections_wait_for_one_and_all_succeed(base_config, tenant_a):
    app = create_app({**base_config, "DATABASE_POOL_SIZE": 2})
    answers, start = [], threading.Barrier(6)

    def one_thread():
        client = app.test_client()
        start.wait()
        for _ in range(4):
            answers.append(
                client.get("/v1/jobs?page=1&size=10", headers=tenant_a.headers).status_code
            )

    began = time.monotonic()
    threads = [threading.Thread(target=one_thread) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [200] * 24
    # waits are for a busy connection, never the pool's 10 s timeout
    assert time.monotonic() - began < 5


def test_a_pool_still_exhausted_after_its_wait_is_a_503(base_config, tenant_a, monkeypatch):
    from playhouse.pool import MaxConnectionsExceeded, PooledDatabase

    from app.data.db import database

    app = create_app(base_config)
    monkeypatch.setattr(database.obj, "_wait_timeout", 0.2)  # the pool's 10 s wait, shortened

    def exhausted(self, *args, **kwargs):
        raise MaxConnectionsExceeded("Exceeded maximum connections.")

    monkeypatch.setattr(PooledDatabase, "_connect", exhausted)
    answer = app.test_client().get("/v1/jobs?page=1&size=10", headers=tenant_a.headers)
    assert answer.status_code == 503 and answer.headers["Retry-After"]
    assert answer.json["error"]["type"] == "service_unavailable"
