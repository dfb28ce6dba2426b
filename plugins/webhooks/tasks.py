"""Background jobs of the webhooks family on the `webhooks` queue: drain a webhook's deliveries, replay a span of
events, and the reaper of stalled deliveries."""

from __future__ import annotations

from app import periodic
from app.db import after_commit
from app.queue import get_queue, task

QUEUE = "webhooks"
REAPER_JOB_ID = "hirekit-webhooks-reaper"


@task
def drain_webhook(webhook_id: str, wakeup: str | None = None) -> int:
    """Send everything the webhook is owed (one job for many deliveries); see plugins.webhooks.drain."""
    from plugins.webhooks.drain import drain

    return drain(webhook_id, wakeup=wakeup)


@task
def deliver_webhook(delivery_id: str) -> str:
    """One delivery by id: what earlier releases enqueued per delivery, still run after an upgrade."""
    from plugins.webhooks.delivery import deliver

    return deliver(delivery_id)


@task
def replay_webhook(webhook_id: str, since: str, until: str) -> int:
    """Queue a span of past events as new deliveries, holding the webhook's replay lock; see plugins.webhooks.replay."""
    import datetime as dt

    from plugins.webhooks.replay import replay

    return replay(webhook_id, dt.datetime.fromisoformat(since), dt.datetime.fromisoformat(until))


@task
def reap_stalled_deliveries() -> int:
    """Send deliveries nobody is sending again, then schedule the next pass (one chain: a fixed job id)."""
    from plugins.webhooks.delivery import reap

    try:
        return reap()
    finally:
        schedule_reaper()


def send_soon(webhook_id: str, delivery_ids: list[str]) -> None:
    """New or replayed deliveries of a webhook, sent once the transaction that made them commits (never when it rolls
    back): a woken drain on Redis, inline without it."""
    from plugins.webhooks.wakeups import post

    if get_queue().is_inline:
        for delivery_id in delivery_ids:
            get_queue().enqueue(deliver_webhook, delivery_id, queue=QUEUE)
    else:
        after_commit(lambda: post(webhook_id, delivery_ids))  # the mailbox must not name deliveries that roll back


def schedule_reaper(app=None) -> None:
    """Keep one scheduled reaper pass WEBHOOK_REAPER_INTERVAL seconds ahead (0 turns the reaper off)."""
    periodic.schedule_next(reap_stalled_deliveries, queue=QUEUE, job_id=REAPER_JOB_ID,
                           interval_setting="WEBHOOK_REAPER_INTERVAL", app=app)
