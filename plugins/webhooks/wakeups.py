"""Waking webhook senders through Redis so that one drain job serves many deliveries instead of one
RQ job each; the drain job is enqueued here by name, with its options (queue, time budget, timeout)
beside the keys it works with.

Per webhook there are three keys:
- a mailbox (list) of new delivery ids, pushed by the emitting transaction;
- a doorbell (string, with a TTL) meaning "a drain job for this webhook is queued or running": only
  the emitter that sets it enqueues a job, the others just leave mail;
- a wake-up mark holding the time of the earliest scheduled drain (for retries), so passes do not
  pile up.

The table of deliveries stays the source of truth: every key here is a hint, and the reaper finds
whatever a lost hint would have left behind.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import time

from flask import current_app
from redis.exceptions import RedisError

from app.background.queue import get_queue

log = logging.getLogger("hirekit.webhooks")

QUEUE = "webhooks"
DRAIN_JOB = "plugins.webhooks.tasks.drain_webhook"
# a drain pass then hands over to a fresh job, so other queued work gets its turn
DRAIN_BUDGET_SECONDS = 5.0
# outlives a drain pass (refreshed each round); a SIGKILLed drain's doorbell expires
DOORBELL_TTL_SECONDS = 120
WAKEUP_SLACK_SECONDS = 0.05

# Emitter: leave the mail and ring; 1 when this caller set the doorbell (and so must enqueue the
# drain)
_POST = """
redis.call('RPUSH', KEYS[1], unpack(ARGV, 2))
if redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[1]) then return 1 end
return 0
"""
# Drain, before leaving: answer the doorbell; 1 when mail arrived meanwhile and this drain took the
# doorbell again
_LEAVE = """
redis.call('DEL', KEYS[2])
if redis.call('LLEN', KEYS[1]) == 0 then return 0 end
if redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[1]) then return 1 end
return 0
"""
# Drain: every id in the mailbox, emptied in the same step, and the doorbell's TTL renewed
_TAKE = """
local ids = redis.call('LRANGE', KEYS[1], 0, -1)
redis.call('DEL', KEYS[1])
redis.call('EXPIRE', KEYS[2], ARGV[1])
return ids
"""


def mailbox_key(webhook_id: str) -> str:
    return f"hirekit:webhooks:mailbox:{webhook_id}"


def doorbell_key(webhook_id: str) -> str:
    return f"hirekit:webhooks:doorbell:{webhook_id}"


def wakeup_key(webhook_id: str) -> str:
    return f"hirekit:webhooks:wakeup:{webhook_id}"


def _redis():
    return get_queue().connection


def _job_options(**extra) -> dict:
    """A drain job's options: time for its budget and one last send, and a retry for a drain whose
    worker died."""
    from rq import Retry

    timeout = int(DRAIN_BUDGET_SECONDS + float(current_app.config["WEBHOOK_TIMEOUT"])) + 30
    # Retry: RQ's abandoned-job handling re-queues a drain whose worker died
    return {
        "queue": QUEUE,
        "job_timeout": timeout,
        "result_ttl": 0,
        "failure_ttl": 24 * 3600,
        "retry": Retry(max=3),
        **extra,
    }


def post(webhook_id: str, delivery_ids: list[str]) -> None:
    """New deliveries for a webhook: mail their ids and, unless a drain is already on its way, enqueue one."""  # noqa: E501
    try:
        rang = _redis().eval(
            _POST,
            2,
            mailbox_key(webhook_id),
            doorbell_key(webhook_id),
            DOORBELL_TTL_SECONDS,
            *delivery_ids,
        )
        if rang:
            try:
                get_queue().enqueue(DRAIN_JOB, webhook_id, **_job_options())
            except RedisError:
                release(webhook_id)  # no drain is coming: let the next emitter ring
                raise
    except RedisError as exc:
        log.warning(
            "could not wake the sender of webhook %s (%s); the reaper will send its deliveries",
            webhook_id,
            exc,
        )


def take_mail(webhook_id: str) -> list[str]:
    ids = _redis().eval(
        _TAKE, 2, mailbox_key(webhook_id), doorbell_key(webhook_id), DOORBELL_TTL_SECONDS
    )
    return [i.decode() if isinstance(i, bytes) else i for i in ids]


def may_leave(webhook_id: str) -> bool:
    """Answer the doorbell before a drain ends; False when mail arrived meanwhile and this drain
    must go on."""
    return not _redis().eval(
        _LEAVE, 2, mailbox_key(webhook_id), doorbell_key(webhook_id), DOORBELL_TTL_SECONDS
    )


def release(webhook_id: str) -> None:
    """A drain that fails or has nothing to drain drops the doorbell so the next emitter enqueues a
    new one."""
    try:
        _redis().delete(doorbell_key(webhook_id))
    except RedisError as exc:
        log.debug("could not release the doorbell of webhook %s: %s", webhook_id, exc)


def enqueue_drain(webhook_id: str) -> None:
    """A drain now, whatever the doorbell says (the reaper, a drain out of time, a manual
    redelivery)."""
    try:
        get_queue().enqueue(DRAIN_JOB, webhook_id, **_job_options())
    except RedisError as exc:
        log.warning(
            "could not enqueue a drain of webhook %s (%s); the reaper will retry", webhook_id, exc
        )


def schedule_wakeup(webhook_id: str, at: dt.datetime) -> None:
    """A drain at `at` (naive UTC) for the webhook's next retry, unless one is already scheduled no
    later than that."""
    # RQ's scheduler keeps whole seconds (rounded down): round up so that a drain never wakes before
    # the retry is due
    epoch = float(math.ceil(at.replace(tzinfo=dt.timezone.utc).timestamp()))
    key = wakeup_key(webhook_id)
    try:
        connection = _redis()
        current = connection.get(key)
        if current is not None and float(current) <= epoch + WAKEUP_SLACK_SECONDS:
            return
        ttl = max(60, int(epoch - time.time()) + 3600)
        connection.set(key, repr(epoch), ex=ttl)
        get_queue().enqueue_at(
            dt.datetime.fromtimestamp(epoch, dt.timezone.utc),
            DRAIN_JOB,
            **_job_options(args=(webhook_id,), kwargs={"wakeup": repr(epoch)}),
        )
    except RedisError as exc:
        log.warning(
            "could not schedule the next retry of webhook %s (%s); the reaper will send it",
            webhook_id,
            exc,
        )


def woke_up(webhook_id: str, mark: str) -> None:
    """A scheduled drain started: clear the wake-up mark if it is still this drain's, so the next
    one can be set."""
    try:
        connection = _redis()
        if (connection.get(wakeup_key(webhook_id)) or b"").decode() == mark:
            connection.delete(wakeup_key(webhook_id))
    except RedisError as exc:
        log.debug("could not clear the wake-up mark of webhook %s: %s", webhook_id, exc)
