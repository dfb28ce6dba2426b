"""Retention: candidates with no activity for longer than their tenant's candidate_retention_days
are erased, in bounded batches, by the worker's periodic pass or `flask privacy expire` (deployments
without Redis, from cron).

Activity is any write to the candidate, their applications or their calls (each row's
updated_at)."""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass

import peewee as pw
from flask import current_app

from app.background import periodic
from app.data.db import utcnow
from app.errors import NotFound
from app.data.tenancy import Tenant
from plugins.applications.models import Application
from plugins.calls.models import Call
from plugins.candidates.models import Candidate
from plugins.privacy.erasure import erase_candidate
from plugins.privacy.models import RETENTION

log = logging.getLogger("hirekit.privacy")

JOB_ID = "hirekit-candidate-retention"
QUEUE = "default"


@dataclass(frozen=True)
class Expired:
    """A candidate past their tenant's retention: who, and when they were last active."""

    tenant_id: str
    candidate_id: object
    last_active_at: dt.datetime


def expired_candidates(*, limit: int, now: dt.datetime | None = None) -> list[Expired]:
    """Up to `limit` candidates past their tenant's retention, longest inactive first within each
    tenant."""
    now = now or utcnow()
    found: list[Expired] = []
    for tenant in (
        Tenant.select().where(Tenant.candidate_retention_days.is_null(False)).order_by(Tenant.id)
    ):
        if len(found) >= limit:
            break
        cutoff = now - dt.timedelta(days=tenant.candidate_retention_days)
        found += [
            Expired(tenant.id, row.id, row.last_active_at)
            for row in _inactive_since(tenant.id, cutoff).limit(limit - len(found))
        ]
    return found


def _inactive_since(tenant_id: str, cutoff: dt.datetime):
    """The tenant's candidates with no write to them, their applications or calls since `cutoff`."""
    recent_application = Application.select(Application.id).where(
        (Application.candidate == Candidate.id) & (Application.updated_at >= cutoff)
    )
    recent_call = Call.select(Call.id).where(
        (Call.candidate == Candidate.id) & (Call.updated_at >= cutoff)
    )
    return (
        Candidate.select(Candidate.id, Candidate.updated_at.alias("last_active_at"))
        .where(
            (Candidate.tenant == tenant_id)
            & (Candidate.updated_at < cutoff)
            & ~pw.fn.EXISTS(recent_application)
            & ~pw.fn.EXISTS(recent_call)
        )
        .order_by(Candidate.updated_at, Candidate.id)
    )


def expire(*, limit: int, dry_run: bool = False, now: dt.datetime | None = None) -> list[Expired]:
    """Erase (or with dry_run only list) up to `limit` candidates past retention, each in its own
    transaction."""
    expired = expired_candidates(limit=limit, now=now)
    if dry_run:
        return expired
    erased = []
    for candidate in expired:
        try:
            erase_candidate(candidate.tenant_id, candidate.candidate_id, reason=RETENTION)
        except NotFound:  # erased meanwhile by a request
            continue
        erased.append(candidate)
    return erased


@periodic.chained(job_id=JOB_ID, queue=QUEUE, interval_setting="CANDIDATE_RETENTION_INTERVAL")
def expire_inactive_candidates() -> int:
    """The worker's periodic pass: candidates past retention erased, CANDIDATE_RETENTION_BATCH at a
    time, until none is left (each erasure its own short transaction)."""
    batch = int(current_app.config["CANDIDATE_RETENTION_BATCH"])
    total = 0
    while True:
        found = expired_candidates(limit=batch)
        erased = expire(limit=batch)
        total += len(erased)
        if len(found) < batch or not erased:
            break
    if total:
        log.info("erased %d candidate(s) past their tenant's retention", total)
    return total
