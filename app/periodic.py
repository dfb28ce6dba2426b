"""Periodic background passes on RQ's scheduler (reapers): one chain per pass, kept alive by the pass itself.

Each pass is a @task that calls `schedule_next(...)` when it ends; `start(...)` runs one pass as soon as a process
starts (so a fresh worker picks up what a dead one left) and the chain carries on from there. A fixed job id keeps the
scheduled pass single however many processes start.
"""

from __future__ import annotations

import datetime as dt
import logging

from flask import current_app
from redis.exceptions import RedisError

log = logging.getLogger("hirekit.queue")


def _interval(app, interval_setting: str) -> float:
    return float(app.config[interval_setting])


def schedule_next(func, *, queue: str, job_id: str, interval_setting: str, app=None) -> None:
    """Schedule the next pass `interval_setting` seconds ahead (0 turns the pass off; nothing without Redis)."""
    app = app or current_app
    interval = _interval(app, interval_setting)
    tasks = app.extensions["hirekit_queue"]
    if interval <= 0 or tasks.is_inline:
        return
    try:
        tasks.enqueue_in(dt.timedelta(seconds=interval), func, queue=queue, job_id=job_id, result_ttl=0)
    except RedisError as exc:
        log.warning("could not schedule %s: %s", job_id, exc)


def start(app, func, *, queue: str, interval_setting: str) -> None:
    """On process start: one pass now; it schedules the ones after it."""
    tasks = app.extensions["hirekit_queue"]
    if _interval(app, interval_setting) <= 0 or tasks.is_inline:
        return
    try:
        tasks.enqueue(func, queue=queue, result_ttl=0)
    except RedisError as exc:
        log.warning("could not start %s: %s", getattr(func, "__name__", func), exc)
