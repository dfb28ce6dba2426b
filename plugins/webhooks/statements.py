"""The delivery hot path's two writes as plain SQL: building them with peewee on every send cost
more than running them.

Values go through the models' own field conversions, so rows read and written here are the rows
peewee reads and writes.
"""

from __future__ import annotations

import datetime as dt


from app.data.db import database, is_postgres
from plugins.webhooks.models import DELIVERY_PENDING, WebhookAttempt, WebhookDelivery

D, A = WebhookDelivery, WebhookAttempt
SEND_FIELDS = (
    D.id,
    D.webhook,
    D.event_id,
    D.event_type,
    D.payload,
    D.attempt_count,
    D.failures_in_row,
)

CLAIM_SQL = (
    'UPDATE "webhook_deliveries" SET "claimed_until" = {p} '
    'WHERE "id" = {p} AND "status" = {p} AND "next_attempt_at" <= {p} '
    'AND ("claimed_until" IS NULL OR "claimed_until" < {p}) '
    'RETURNING ' + ", ".join(f'"{field.column_name}"' for field in SEND_FIELDS)
)
INSERT_ATTEMPT_SQL = (
    'INSERT INTO "webhook_attempts" ("delivery_id", "number", "started_at", "duration_ms", '
    '"status_code", "error", '
    '"response_body", "next_retry_at") VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p}, {p})'
)
UPDATE_DELIVERY_SQL = (
    'UPDATE "webhook_deliveries" SET "attempt_count" = {p}, "claimed_until" = NULL, '
    '"last_status_code" = {p}, '
    '"last_error" = {p}, "updated_at" = {p}, "status" = {p}, "next_attempt_at" = {p}, '
    '"failures_in_row" = {p}, '
    '"delivered_at" = COALESCE({p}, "delivered_at") WHERE "id" = {p}'
)


def _sql(template: str) -> str:
    return template.format(p=database.obj.param)


def claim(
    delivery_id, now: dt.datetime, lease_until: dt.datetime, due_by: dt.datetime
) -> WebhookDelivery | None:
    """Lease a pending, due, unheld delivery and read what sending it needs, in one statement; None
    when not claimable."""
    params = (
        D.claimed_until.db_value(lease_until),
        D.id.db_value(delivery_id),
        DELIVERY_PENDING,
        D.next_attempt_at.db_value(due_by),
        D.claimed_until.db_value(now),
    )
    row = database.execute_sql(_sql(CLAIM_SQL), params).fetchone()
    if row is None:
        return None
    return WebhookDelivery(
        **{field.name: field.python_value(value) for field, value in zip(SEND_FIELDS, row)}
    )


def record_attempt(
    delivery_id,
    *,
    number: int,
    started_at: dt.datetime,
    duration_ms: int,
    status_code: int | None,
    error: str | None,
    response_body: str | None,
    next_retry_at: dt.datetime | None,
    status: str,
    next_attempt_at: dt.datetime | None,
    failures_in_row: int,
    delivered_at: dt.datetime | None,
    now: dt.datetime,
    also=None,
) -> None:
    """Log one attempt and move its delivery on, atomically. `also()` runs in the same transaction
    (webhook changes).

    On PostgreSQL without `also`, both statements travel in one round trip: a multi-statement query
    is one transaction.
    """
    ident = D.id.db_value(delivery_id)
    next_at = D.next_attempt_at.db_value(next_attempt_at)
    insert = (
        ident,
        number,
        A.started_at.db_value(started_at),
        duration_ms,
        status_code,
        error,
        response_body,
        A.next_retry_at.db_value(next_retry_at),
    )
    update = (
        number,
        status_code,
        error,
        D.updated_at.db_value(now),
        status,
        next_at,
        failures_in_row,
        D.delivered_at.db_value(delivered_at),
        ident,
    )
    if is_postgres() and also is None and not database.in_transaction():
        database.execute_sql(_sql(INSERT_ATTEMPT_SQL + "; " + UPDATE_DELIVERY_SQL), insert + update)
        return
    with database.atomic():
        database.execute_sql(_sql(INSERT_ATTEMPT_SQL), insert)
        database.execute_sql(_sql(UPDATE_DELIVERY_SQL), update)
        if also is not None:
            also()
