"""Page mode's exact totals without counting a tenant's rows: the per-tenant counts that migration
012's triggers keep.

The triggers run in the writing transaction, so a count is exactly as committed as the rows it
counts. The families declare which of their lists read their totals here
(app.plugins.Plugin.counted_lists): jobs per case-insensitive status, candidates and applications
whole. Such a list filtered by nothing else (and with no updated_at window) reads its total here,
any other filter counts its matching rows.

On PostgreSQL the triggers append one delta row per statement and bucket, so concurrent writers of
one tenant never queue on a shared counter row and a bulk INSERT ... SELECT adds one row; a reader
that finds more than FOLD_AT of them folds its list's rows into one per bucket, in one statement,
under a transaction-scoped advisory lock that lets one reader fold at a time. SQLite has a single
writer and keeps one counter row per bucket.
"""

from __future__ import annotations

import peewee as pw
from flask import current_app

from app.data import statements
from app.data.db import BaseModel, database, is_postgres
from app.data.records import sent_filters

FOLD_AT = 64


class TenantRowCount(BaseModel):
    """A count (SQLite) or a delta (PostgreSQL) of one tenant's rows of one table in one bucket.
    Migration 012 owns its table and triggers (they differ by database), so it is not among the
    models migrations are generated from."""

    tenant_id = pw.CharField(max_length=64)
    table_name = pw.CharField(max_length=64)
    bucket = pw.TextField()
    total = pw.BigIntegerField()

    class Meta:
        table_name = "tenant_row_counts"


def known_total(list_name: str, model, tenant_id: str, filters: dict) -> int | None:
    """The exact number of the tenant's rows of list `list_name` matching `filters`, when the counts
    answer it."""
    # the families' Plugin.counted_lists
    counted = current_app.extensions.get("hirekit_counted_lists", {})
    table = model._meta.table_name
    if list_name not in counted or table != list_name:
        return None
    active = sent_filters(filters)
    if not active:
        return tenant_total(tenant_id, table)
    bucket_filter = counted[table]
    if bucket_filter is None or set(active) != {bucket_filter} or str(active[bucket_filter]) == "":
        return None
    # the filter compares LOWER(column) with the value lower-cased in Python
    # (app.data.records.apply_filters): the same two sides as the bucket the trigger stored and the
    # one looked up here
    return tenant_total(tenant_id, table, str(active[bucket_filter]).lower())


def tenant_total(tenant_id: str, table: str, bucket: str | None = None) -> int:
    total, parts = statements.row_total(tenant_id, table, bucket)
    if parts > FOLD_AT and is_postgres():
        fold(tenant_id, table)
    return total


def fold(tenant_id: str, table: str) -> None:
    """PostgreSQL: replace the list's delta rows by one per bucket; skipped while another reader
    folds the same list. Deltas committed meanwhile are either in the DELETE's snapshot (and folded)
    or not (and left for the next fold)."""
    with database.atomic():
        if statements.try_lock_for_transaction(f"tenant_row_counts:{tenant_id}:{table}"):
            statements.fold_row_counts(tenant_id, table)
