"""The statements the core writes as SQL text rather than through the models, each with why.

PostgreSQL's advisory locks are functions called for their effect, not rows of a model, and the
row-count fold is a data-modifying CTE; SQLite needs none of them, because it serializes its writers
and keeps one count row per bucket, so each is run on PostgreSQL only. A list's kept total is read
on both databases by every page of the list, and is text because building it cost more than running
it.
"""

from __future__ import annotations

from app.data.db import database, is_postgres

# One key: waits for the transaction holding it to end, then holds it until this one ends.
LOCK_ONE = "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))"
# Many keys in one round trip, in the order given: two writers sorting their keys the same way
# cannot deadlock.
LOCK_MANY = (
    "SELECT pg_advisory_xact_lock(hashtextextended(key, 0)) "
    "FROM unnest(%s::text[]) WITH ORDINALITY AS locks(key, position) ORDER BY position"
)
# Without waiting: true when this transaction now holds the key, false when another holds it.
TRY_LOCK = "SELECT pg_try_advisory_xact_lock(hashtext(%s))"


def lock_for_transaction(*keys: str) -> None:
    """Inside a transaction on PostgreSQL: hold these keys' advisory locks until it ends, taken in
    the order given (sort them: writers taking the same keys in the same order never deadlock).
    Nothing on SQLite."""
    if not is_postgres() or not keys:
        return
    if len(keys) == 1:
        database.execute_sql(LOCK_ONE, keys)
    else:
        database.execute_sql(LOCK_MANY, (list(keys),))


def try_lock_for_transaction(key: str) -> bool:
    """Inside a transaction on PostgreSQL: whether this transaction got the key's advisory lock
    without waiting."""
    return bool(database.execute_sql(TRY_LOCK, (key,)).fetchone()[0])


# app.data.row_counts on PostgreSQL: a list's delta rows replaced by one per bucket in one statement
# (a DELETE ... RETURNING feeding an INSERT), so no delta committed meanwhile is counted twice or
# lost.
FOLD_ROW_COUNTS = """
WITH folded AS (
    DELETE FROM tenant_row_counts WHERE tenant_id = %s AND table_name = %s RETURNING bucket, total
)
INSERT INTO tenant_row_counts (tenant_id, table_name, bucket, total)
SELECT %s, %s, bucket, sum(total) FROM folded GROUP BY bucket HAVING sum(total) <> 0"""


def fold_row_counts(tenant_id: str, table: str) -> None:
    database.execute_sql(FOLD_ROW_COUNTS, (tenant_id, table, tenant_id, table))


# app.data.row_counts: a counted list's total, read by every page of it. As text, on both
# databases: peewee building this aggregate took a tenth of GET /v1/jobs?page=1&size=20's CPU
# in-process on SQLite, more than running it.
ROW_TOTAL = (
    "SELECT COALESCE(SUM(total), 0), COUNT(id) FROM tenant_row_counts "
    "WHERE tenant_id = {mark} AND table_name = {mark}"
)


def row_total(tenant_id: str, table: str, bucket: str | None = None) -> tuple[int, int]:
    """(the tenant's rows of `table`, in `bucket` when given; the count rows that add up to it)."""
    mark = database.param
    sql, params = ROW_TOTAL.format(mark=mark), [tenant_id, table]
    if bucket is not None:
        sql, params = f"{sql} AND bucket = {mark}", [*params, bucket]
    total, parts = database.execute_sql(sql, params).fetchone()
    return int(total), int(parts)
