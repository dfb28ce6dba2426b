"""Periodic background passes on RQ's scheduler (reapers): one chain per pass, kept alive by the pass itself.

Each pass is a @task that calls `schedule_next(...)` when it ends (`@chained(...)` makes a function one); `start(...)` runs one pass as soon as a worker
starts (so a fresh worker picks up what a dead one left) and the chain carries on from there. A fixed job id keeps the
scheduled pass single however many workers start.

Plugins declare their passes (`Plugin.tasks.periodic`, PeriodicJobs naming their job) and only `python worker.py` starts
them, through `start_declared`: building the app (gunicorn workers, CLI commands) never talks to Redis. Without Redis
there is no chain: app.queue keeps no work for later.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
from dataclasses import dataclass
from typing import Callable

from flask import current_app
from redis.exceptions import RedisError

from app.queue import task

log = logging.getLogger("hirekit.queue")


@dataclass(frozen=True)
class PeriodicJob:
    """A pass a plugin keeps running: the @task (or its dotted name), the queue it runs on, the config name of its
    interval in seconds."""

    func: Callable | str
    queue: str
    interval_setting: str


def _interval(app, interval_setting: str) -> float:
    return float(app.config[interval_setting])


def schedule_next(func, *, queue: str, job_id: str, interval_setting: str, app=None) -> None:
    """Schedule the next pass `interval_setting` seconds ahead (0 turns the pass off; nothing without Redis)."""
    app = app or current_app
    interval = _interval(app, interval_setting)
    tasks = app.extensions["hirekit_queue"]
    if interval <= 0:
        return
    try:
        tasks.enqueue_in(dt.timedelta(seconds=interval), func, queue=queue, job_id=job_id, result_ttl=0)
    except RedisError as exc:
        log.warning("could not schedule %s: %s", job_id, exc)


def chained(*, job_id: str, queue: str, interval_setting: str):
    """Make a function a pass: a @task that, however it ends, schedules its next run (one chain: a fixed job id)."""
    def decorate(func):
        @task
        @functools.wraps(func)
        def run_then_schedule_next(*args, **kwargs):
            try:
                return func(*args, **kwargs)
            finally:
                schedule_next(run_then_schedule_next, queue=queue, job_id=job_id, interval_setting=interval_setting)

        return run_then_schedule_next

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
    """Worker start: one pass now of each periodic job (the app's and the enabled plugins') whose queue this worker serves."""
    started = []
    for job in declared(app):
        if job.queue in queue_names:
            start(app, job.func, queue=job.queue, interval_setting=job.interval_setting)
            started.append(job)
    return started
