"""Background work: inline without Redis, RQ on Redis with a real worker; the caller sees the same
behaviour."""

import os
import subprocess
import sys
from pathlib import Path

from app.data.db import database
from app.background.queue import enqueue, enqueue_each, enqueue_in, get_queue, task
from app.data.records import next_in_sequence
from app.data.tenancy import Counter

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

ROOT = Path(__file__).resolve().parent.parent


@task
def bump_counter(tenant_id: str) -> int:
    """A job that needs the database, as real jobs do."""
    return next_in_sequence(tenant_id, "queue-test")


@task
def explode(tenant_id: str):
    raise RuntimeError("boom")


def counter_value(app, tenant_id):
    with app.app_context(), database.connection_context():
        row = Counter.get_or_none((Counter.tenant == tenant_id) & (Counter.name == "queue-test"))
        return row.value if row else 0


def test_inline_queue_runs_the_job_now(app, tenant_a):
    with app.app_context():
        job = enqueue(bump_counter, tenant_a.id)
    assert job.get_status() == "finished" and job.result == 1
    assert counter_value(app, tenant_a.id) == 1


def test_a_job_can_be_enqueued_by_its_dotted_name(app, tenant_a):
    with app.app_context():
        job = enqueue("tests.test_queue.bump_counter", tenant_a.id)
    assert job.get_status() == "finished" and job.result == 1
    assert counter_value(app, tenant_a.id) == 1


def test_redis_queue_runs_a_job_enqueued_by_name(make_app, tenant_a, redis_url):
    from rq import SimpleWorker

    app = make_app(REDIS_URL=redis_url)
    with app.app_context():
        job = enqueue("tests.test_queue.bump_counter", tenant_a.id, queue="default")
        queue = app.extensions["hirekit_queue"].queue("default")
        SimpleWorker([queue], connection=queue.connection).work(burst=True)
        job.refresh()
        assert job.get_status() == "finished"
    assert counter_value(app, tenant_a.id) == 1


def test_without_redis_work_for_later_is_not_kept(app, tenant_a):
    import datetime as dt

    with app.app_context():
        assert (
            enqueue_in(dt.timedelta(seconds=1), "tests.test_queue.bump_counter", tenant_a.id)
            is None
        )
        assert get_queue().grace(30.0) == dt.timedelta(0) and get_queue().depths() == {}
    assert counter_value(app, tenant_a.id) == 0


def test_enqueue_each_runs_each_job_inline_and_hands_over_the_batch_on_redis(
    make_app, app, tenant_a, redis_url
):
    handed_over = []
    with app.app_context(), database.connection_context():
        with database.atomic():
            enqueue_each(
                bump_counter,
                [(tenant_a.id,), (tenant_a.id,)],
                batched=lambda: handed_over.append("inline"),
            )
            # inline jobs wait for the commit
            assert not Counter.select().where(Counter.tenant == tenant_a.id).exists()
    assert counter_value(app, tenant_a.id) == 2 and handed_over == []

    on_redis = make_app(REDIS_URL=redis_url)
    with on_redis.app_context(), database.connection_context():
        with database.atomic():
            enqueue_each(
                bump_counter, [(tenant_a.id,)], batched=lambda: handed_over.append("redis")
            )
            assert handed_over == []
        assert handed_over == ["redis"] and get_queue().depths()["default"] == 0


def test_inline_failure_is_recorded_not_raised(app, tenant_a):
    with app.app_context():
        job = enqueue(explode, tenant_a.id)
    assert job.get_status() == "failed" and "boom" in job.exc_string


def test_redis_queue_defers_until_a_worker_runs(make_app, tenant_a, redis_url):
    from rq import SimpleWorker

    app = make_app(REDIS_URL=redis_url)
    with app.app_context():
        job = enqueue(bump_counter, tenant_a.id, queue="default")
        assert job.get_status() == "queued"
        assert counter_value(app, tenant_a.id) == 0
        queue = app.extensions["hirekit_queue"].queue("default")
        SimpleWorker([queue], connection=queue.connection).work(burst=True)
        job.refresh()
        assert job.get_status() == "finished"
    assert counter_value(app, tenant_a.id) == 1


def test_worker_process_runs_jobs_with_the_app(make_app, tenant_a, redis_url, db_url):
    app = make_app(REDIS_URL=redis_url)
    with app.app_context():
        for _ in range(3):
            enqueue(bump_counter, tenant_a.id, queue="calls")
    env = {
        **os.environ,
        "HIREKIT_REDIS_URL": redis_url,
        "HIREKIT_DATABASE_URL": db_url,
        "HIREKIT_LOG_LEVEL": "WARNING",
    }
    done = subprocess.run(
        [sys.executable, "worker.py", "--burst", "calls"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert counter_value(app, tenant_a.id) == 3


def test_worker_without_redis_explains_itself(db_url):
    env = {**os.environ, "HIREKIT_REDIS_URL": "", "HIREKIT_DATABASE_URL": db_url}
    done = subprocess.run(
        [sys.executable, "worker.py", "--burst"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "HIREKIT_REDIS_URL" in done.stderr
