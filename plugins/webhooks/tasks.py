"""Background jobs of the webhooks family on the `webhooks` queue: send a delivery, and the reaper that re-sends stalled ones."""

from __future__ import annotations

import datetime as dt
import logging

from flask import current_app
from redis.exceptions import RedisError

from app.queue import get_queue, task

log = logging.getLogger("hirekit.webhooks")

QUEUE = "webhooks"
REAPER_JOB_ID = "hirekit-webhooks-reaper"
ABANDONED_RETRIES = 3  # RQ re-queues a job whose worker died this many times (its own abandoned-job handling)


@task
def deliver_webhook(delivery_id: str) -> str:
    from plugins.webhooks.delivery import deliver

    return deliver(delivery_id)


@task
def reap_stalled_deliveries() -> int:
    """Re-enqueue deliveries nobody is sending, then schedule the next pass (one chain: a fixed job id)."""
    from plugins.webhooks.delivery import reap

    try:
        return reap()
    finally:
        schedule_reaper()


def enqueue_delivery(delivery_id: str, *, delay: dt.timedelta | None = None) -> None:
    """Queue a send; a Redis outage is logged, not raised: the delivery row stays pending and the reaper finds it."""
    from rq import Retry

    queue = get_queue()
    options = {"queue": QUEUE, "job_timeout": int(float(current_app.config["WEBHOOK_TIMEOUT"])) + 30, "result_ttl": 0}
    if not queue.is_inline:
        options["retry"] = Retry(max=ABANDONED_RETRIES)
    try:
        if delay is None:
            queue.enqueue(deliver_webhook, delivery_id, **options)
        else:
            queue.enqueue_in(delay, deliver_webhook, delivery_id, **options)
    except RedisError as exc:
        log.warning("could not enqueue webhook delivery %s (%s); the reaper will send it", delivery_id, exc)


def schedule_reaper(app=None) -> None:
    """Keep one scheduled reaper pass WEBHOOK_REAPER_INTERVAL seconds ahead (0 turns the reaper off)."""
    config = (app or current_app).config
    interval = float(config["WEBHOOK_REAPER_INTERVAL"])
    queue = (app or current_app).extensions["hirekit_queue"]
    if interval <= 0 or queue.is_inline:
        return
    try:
        queue.enqueue_in(dt.timedelta(seconds=interval), reap_stalled_deliveries, queue=QUEUE, job_id=REAPER_JOB_ID,
                         result_ttl=0)
    except RedisError as exc:
        log.warning("could not schedule the webhook reaper: %s", exc)


def start_reaper(app) -> None:
    """On process start: one reaper pass now (so a fresh worker picks up what a dead one left) and the chain after it."""
    queue = app.extensions["hirekit_queue"]
    if float(app.config["WEBHOOK_REAPER_INTERVAL"]) <= 0 or queue.is_inline:
        return
    try:
        queue.enqueue(reap_stalled_deliveries, queue=QUEUE, result_ttl=0)
    except RedisError as exc:
        log.warning("could not start the webhook reaper: %s", exc)
