"""Periodic background passes on RQ's scheduler (reapers): one chain per pass, kept alive by the
pass itself.

Each pass is a @task that schedules the next one (`schedule_next(...)`) before it does its work
(`@chained(...)` makes a function one); `start(...)` runs one pass as soon as a worker starts (so a
fresh worker picks up what a dead one left) and the chain carries on from there. Scheduling first is
what keeps the chain alive when a worker host dies in the middle of a pass (SIGKILL, OOM, power): a
pass that scheduled its successor only when it ended took the whole chain with it, until some worker
restarted (the scale-out drill, tests/drills/, found it). Passes alternate between two fixed job
ids, `job_id` and `job_id + RELAY_SUFFIX`: a fixed id keeps the scheduled pass single however many
workers start (scheduling an id again replaces its schedule), and the running pass never schedules
its own id, whose job RQ deletes when it ends (result_ttl 0).

Plugins declare their passes (`Plugin.tasks.periodic`, PeriodicJobs naming their job) and only
`python worker.py` starts them, through `start_declared`: building the app (gunicorn workers, CLI
commands) never talks to Redis. Without Redis there is no chain: app.background.queue keeps no work
for later.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
from dataclasses import dataclass
from typing import Callable

from flask import current_app
from redis.exceptions import RedisError

from app.background.queue import task

log = logging.getLogger("hirekit.queue")


@dataclass(frozen=True)
class PeriodicJob:
    """A pass a plugin keeps running: the @task (or its dotted name), the queue it runs on, the
    config name of its interval in seconds."""

    func: Callable | str
    queue: str
    interval_setting: str


def _interval(app, interval_setting: str) -> float:
    return float(app.config[interval_setting])


def schedule_next(func, *, queue: str, job_id: str, interval_setting: str, app=None) -> None:
    """Schedule the next pass `interval_setting` seconds ahead (0 turns the pass off; nothing
    without Redis)."""
    app = app or current_app
    interval = _interval(app, interval_setting)
    tasks = app.extensions["hirekit_queue"]
    if interval <= 0:
        return
    try:
        tasks.enqueue_in(
            dt.timedelta(seconds=interval), func, queue=queue, job_id=job_id, result_ttl=0
        )
    except RedisError as exc:
        log.warning("could not schedule %s: %s", job_id, exc)


RELAY_SUFFIX = "-relay"


def successor_id(job_id: str) -> str:
    """The id the next pass of a chain runs under: the other of the chain's two ids than the running
    job's."""
    from rq import get_current_job

    current = get_current_job()
    return job_id + RELAY_SUFFIX if current is not None and current.id == job_id else job_id


def chained(*, job_id: str, queue: str, interval_setting: str):
    """Make a function a pass: a @task that schedules its next run first, then works, so the chain
    outlives a pass whose worker dies (one chain: two fixed job ids taking turns)."""

    def decorate(func):
        @task
        @functools.wraps(func)
        def schedule_next_then_run(*args, **kwargs):
            schedule_next(
                schedule_next_then_run,
                queue=queue,
                job_id=successor_id(job_id),
                interval_setting=interval_setting,
            )
            return func(*args, **kwargs)

        return schedule_next_then_run

    return decorate


def start(app, func, *, queue: str, interval_setting: str) -> None:
    """On a worker's start (so on Redis): one pass now; it schedules the ones after it."""
    tasks = app.extensions["hirekit_queue"]
    if _interval(app, interval_setting) <= 0:
        return
    try:
        tasks.enqueue(func, queue=queue, result_ttl=0)
    except RedisError as exc:
        log.warning("could not start %s: %s", func if isinstance(func, str) else func.__name__, exc)


def declare_core(app, job: PeriodicJob) -> None:
    """A pass of the app itself rather than of a plugin (e.g. purging expired idempotency keys)."""
    app.extensions.setdefault("hirekit_core_periodic", []).append(job)


def declared(app) -> list[PeriodicJob]:
    """The app's own passes, then those of the enabled plugins."""
    jobs = list(app.extensions.get("hirekit_core_periodic", ()))
    for plugin in app.extensions.get("hirekit_plugins", {}).values():
        jobs.extend(plugin.tasks.periodic)
    return jobs


def start_declared(app, queue_names) -> list[PeriodicJob]:
    """Worker start: one pass now of each periodic job (the app's and the enabled plugins') whose
    queue this worker serves."""
    started = []
    for job in declared(app):
        if job.queue in queue_names:
            start(app, job.func, queue=job.queue, interval_setting=job.interval_setting)
            started.append(job)
    return started
