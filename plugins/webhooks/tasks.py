"""Background jobs of the webhooks family on the `webhooks` queue: drain a webhook's deliveries,
replay a span of events, and the reaper of stalled deliveries. Nothing imports this module: jobs are
enqueued by dotted name."""

from __future__ import annotations

import datetime as dt

from app.background import periodic
from app.background.queue import task
from plugins.webhooks import delivery, dispatch, drain, replay
from plugins.webhooks.wakeups import QUEUE

REAPER_JOB_ID = "hirekit-webhooks-reaper"


@task
def drain_webhook(webhook_id: str, wakeup: str | None = None) -> int:
    """Send everything the webhook is owed (one job for many deliveries); see
    plugins.webhooks.drain."""
    return drain.drain(webhook_id, wakeup=wakeup)


@task
def deliver_webhook(delivery_id: str) -> str:
    """One delivery by id: sends without Redis, and what earlier releases enqueued per delivery."""
    return delivery.deliver(delivery_id)


@task
def replay_webhook(webhook_id: str, since: str, until: str) -> int:
    """Queue a span of past events as new deliveries, holding the webhook's replay lock; see
    plugins.webhooks.replay."""
    return replay.replay(
        webhook_id, dt.datetime.fromisoformat(since), dt.datetime.fromisoformat(until)
    )


@periodic.chained(job_id=REAPER_JOB_ID, queue=QUEUE, interval_setting="WEBHOOK_REAPER_INTERVAL")
def reap_stalled_deliveries() -> int:
    """Send deliveries nobody is sending again."""
    return dispatch.reap()
