"""The one front door for background work: whether a job runs on RQ (Redis configured) or inline in
the process is decided here and nowhere else; callers name the job (a function or its dotted name)
and the queue.

Either way a job enqueued inside a database transaction starts only once that transaction commits,
and never when it rolls back: a job never sees a write that is not there, and a slow inline job (a
webhook to a slow receiver) does not hold the writer's transaction, and so SQLite's write lock,
open. Work for later (enqueue_in, enqueue_at) needs RQ's scheduler: without Redis it is not kept,
and each family's sweep (a reaper, `flask calls run-due`) does it instead."""

from __future__ import annotations

import datetime as dt
import functools
import logging
import uuid
from dataclasses import dataclass, field

from flask import current_app
from werkzeug.utils import import_string

from app.data.db import after_commit, database

DEFAULT_QUEUE = "default"  # the core's queue, and any job's that names none

log = logging.getLogger("hirekit.queue")


def task(func):
    """Mark a function as a background job: it gets a database connection whether it runs in a
    worker or inline."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        opened = database.is_closed()
        if opened:
            database.connect()
        try:
            return func(*args, **kwargs)
        finally:
            if opened and not database.is_closed() and not database.in_transaction():
                database.close()

    return wrapper


@dataclass
class InlineJob:
    """What an inline or deferred enqueue answers: the shape callers read from an RQ Job (id,
    status, result)."""

    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    status: str = "queued"
    result: object = None
    exc_string: str | None = None

    def get_status(self):
        return self.status


class TaskQueue:
    """enqueue/enqueue_in over RQ, or inline when no Redis URL is configured."""

    def __init__(self, redis_url: str, queue_names, *, default_timeout: int = 180):
        self.redis_url = redis_url
        self.queue_names = list(queue_names)
        self.default_timeout = default_timeout
        self._connection = None
        self._queues = {}

    @property
    def is_inline(self) -> bool:
        return not self.redis_url

    @property
    def connection(self):
        if self._connection is None:
            from redis import Redis

            self._connection = Redis.from_url(
                self.redis_url, socket_connect_timeout=2, socket_timeout=5
            )
        return self._connection

    def queue(self, name: str = DEFAULT_QUEUE):
        if name not in self.queue_names:
            raise ValueError(f"unknown queue {name!r}; configured: {', '.join(self.queue_names)}")
        if name not in self._queues:
            from rq import Queue

            self._queues[name] = Queue(
                name, connection=self.connection, default_timeout=self.default_timeout
            )
        return self._queues[name]

    def enqueue(self, func, *args, queue: str = DEFAULT_QUEUE, **options):
        """`func` is the job or its dotted name (e.g. "plugins.webhooks.tasks.drain_webhook"): a
        name spares the caller importing the job's module."""
        return self._submit(
            queue, lambda target: target.enqueue(func, *args, **options), func, args, options
        )

    def enqueue_in(self, delay: dt.timedelta, func, *args, queue: str = DEFAULT_QUEUE, **options):
        """`func` in `delay` on a worker; None without Redis (see the module's docstring)."""
        if self.is_inline:
            log.info("no Redis configured: %s is not scheduled in %s", _name(func), delay)
            return None
        return self._submit(
            queue,
            lambda target: target.enqueue_in(delay, func, *args, **options),
            func,
            args,
            options,
        )

    def enqueue_at(self, when: dt.datetime, func, *args, queue: str = DEFAULT_QUEUE, **options):
        """`func` at `when` on a worker; None without Redis (see the module's docstring)."""
        if self.is_inline:
            log.info("no Redis configured: %s is not scheduled at %s", _name(func), when)
            return None
        return self._submit(
            queue,
            lambda target: target.enqueue_at(when, func, *args, **options),
            func,
            args,
            options,
        )

    def enqueue_each(
        self, func, arg_tuples, *, queue: str = DEFAULT_QUEUE, batched=None, **options
    ) -> None:
        """`func(*args)` for each of `arg_tuples`. On RQ, `batched` (when given) replaces them: a
        zero-argument callable that hands the same work to the workers in one go (webhooks: one
        drain per webhook, woken through a mailbox), called once the surrounding transaction
        commits, like any enqueue."""
        if batched is not None and not self.is_inline:
            after_commit(batched)
            return
        for args in arg_tuples:
            self.enqueue(func, *args, queue=queue, **options)

    def cancel_scheduled(self, job_ids, *, queue: str) -> None:
        """Drop scheduled jobs by id, where they exist (nothing is scheduled without Redis); a
        failure is logged, since jobs re-check their work's state when they run."""
        if self.is_inline:
            return
        from redis.exceptions import RedisError
        from rq.exceptions import NoSuchJobError

        registry = self.queue(queue).scheduled_job_registry
        for job_id in job_ids:
            try:
                registry.remove(job_id, delete_job=True)
            except (RedisError, NoSuchJobError) as exc:
                log.debug("could not drop RQ job %s: %s", job_id, exc)

    def grace(self, seconds: float) -> dt.timedelta:
        """How long work handed to the queue may wait before a sweep counts it as lost: `seconds` on
        RQ, where jobs wait for a worker; none inline, where every job has run by the time its
        transaction has committed."""
        return dt.timedelta(0) if self.is_inline else dt.timedelta(seconds=seconds)

    def depths(self) -> dict[str, int]:
        """Jobs waiting per queue, for metrics: none inline; a queue Redis does not answer for is
        left out."""
        found = {}
        if not self.is_inline:
            for name in self.queue_names:
                try:
                    found[name] = self.queue(name).count
                except Exception:  # noqa: BLE001 - an unreachable Redis must not break the scrape
                    continue
        return found

    def check_reachable(self) -> None:
        """For a write that must not be stored without its job (an instant call): raise inside its
        transaction when Redis is down, since the job itself is enqueued only after the commit."""
        if not self.is_inline:
            self.connection.ping()

    def _submit(self, queue: str, enqueue_on, func, args, options):
        """Run inline, or enqueue on the RQ queue: now outside a transaction, once it commits inside
        one (the answer then knows only the job's id)."""
        if self.is_inline:
            # a wrong name fails the caller
            func = import_string(func) if isinstance(func, str) else func

            def start():
                return self._run_inline(func, args, options)
        else:
            target = self.queue(queue)  # an unknown queue fails the caller, not the commit

            def start():
                return enqueue_on(target)

        if not database.in_transaction():
            return start()
        pending = InlineJob(id=options.setdefault("job_id", uuid.uuid4().hex), status="deferred")

        def start_and_record():
            started = start()
            if isinstance(started, InlineJob):
                pending.status, pending.result, pending.exc_string = (
                    started.status,
                    started.result,
                    started.exc_string,
                )
            else:
                pending.status = "queued"

        after_commit(start_and_record)
        return pending

    @staticmethod
    def _run_inline(func, args, options):
        """Run now; like a worker, a failing job is recorded and logged, not raised into the
        request."""
        kwargs = options.pop("kwargs", None) or {}
        job = InlineJob(id=options.get("job_id") or uuid.uuid4().hex)
        try:
            job.result = func(*args, **kwargs)
            job.status = "finished"
        except Exception as exc:  # noqa: BLE001 - a job failure must not fail the caller, as with RQ
            log.exception("inline job %s failed", _name(func))
            job.status = "failed"
            job.exc_string = repr(exc)
        return job


def _name(func) -> str:
    return func if isinstance(func, str) else getattr(func, "__name__", repr(func))


def init_app(app) -> TaskQueue:
    queue = TaskQueue(app.config["REDIS_URL"], app.config["QUEUES"])
    app.extensions["hirekit_queue"] = queue
    return queue


def get_queue() -> TaskQueue:
    return current_app.extensions["hirekit_queue"]


def enqueue(func, *args, queue: str = DEFAULT_QUEUE, **options):
    """Run func (a function or its dotted name) in the background on the named queue (inline without
    Redis)."""
    return get_queue().enqueue(func, *args, queue=queue, **options)


def enqueue_in(delay: dt.timedelta, func, *args, queue: str = DEFAULT_QUEUE, **options):
    return get_queue().enqueue_in(delay, func, *args, queue=queue, **options)


def enqueue_at(when: dt.datetime, func, *args, queue: str = DEFAULT_QUEUE, **options):
    return get_queue().enqueue_at(when, func, *args, queue=queue, **options)


def enqueue_each(func, arg_tuples, *, queue: str = DEFAULT_QUEUE, batched=None, **options) -> None:
    get_queue().enqueue_each(func, arg_tuples, queue=queue, batched=batched, **options)
