"""Many records of one table upserted by source_id in a few statements (a batch upsert of a family
whose writes are its row alone): what app.http.upserts does for one record, done for hundreds with
one lock statement, one look-up and one multi-row INSERT ... ON CONFLICT DO UPDATE instead of a
round of statements per record.

The rows end as the single upsert leaves them: a new record gets its id, timestamps and
`new_columns` (a job's number); a stored one keeps its id, created_at and those columns, and every
field of its body replaces the stored one, updated_at now. Upserts of the same records wait for each
other on PostgreSQL's advisory locks, the very keys app.http.upserts.lock_source_id takes (in a
fixed order, so two batches cannot deadlock); SQLite's writers are serialized.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from app.data import statements
from app.data.db import database, is_postgres, new_uuid, utcnow
from app.data.records import TenantRecord, quoted


@dataclass(frozen=True)
class RowUpsert:
    """A family whose upsert writes its row alone. `new_columns(tenant_id, count)` gives the columns
    a new record gets besides its body (one dict per new record, e.g. the next job numbers); a
    stored record keeps those."""

    model: type[TenantRecord]
    new_columns: Callable[[str, int], list[dict]]
    kept_columns: tuple[str, ...] = ()


def upsert_rows(family: RowUpsert, tenant_id: str, bodies: list[dict]) -> list[tuple[str, bool]]:
    """Inside a transaction: create or replace the tenant's record of each body (each with its own
    source_id, no two alike); answers (id, created) per body, in order."""
    model = family.model
    source_ids = [body["source_id"] for body in bodies]
    lock_all(model, tenant_id, source_ids)
    stored = stored_rows(family, tenant_id, source_ids)
    fresh = iter(
        family.new_columns(tenant_id, sum(1 for source_id in source_ids if source_id not in stored))
    )
    now = utcnow()
    rows, outcomes = [], []
    for body in bodies:
        kept = stored.get(body["source_id"])
        if kept is None:
            record_id, extra = new_uuid(), next(fresh)
        else:
            record_id, extra = kept[0], dict(zip(family.kept_columns, kept[1:]))
        rows.append(
            {
                "id": record_id,
                "tenant": tenant_id,
                "created_at": now,
                "updated_at": now,
                **extra,
                **body,
            }
        )
        outcomes.append((str(record_id), kept is None))
    for columns, group in group_by_columns(rows).items():
        insert_or_replace(model, columns, group, kept=family.kept_columns)
    return outcomes


def source_id_lock_key(model: type[TenantRecord], tenant_id: str, source_id: str) -> str:
    """The advisory lock's key of one record: every upsert of it, alone or in a batch, takes this
    one."""
    return f"upsert:{model._meta.table_name}:{tenant_id}:{source_id}"


def lock_all(model: type[TenantRecord], tenant_id: str, source_ids: list[str]) -> None:
    """app.http.upserts.lock_source_id for every source id, in one statement, in sorted order
    (PostgreSQL)."""
    statements.lock_for_transaction(
        *sorted(source_id_lock_key(model, tenant_id, source_id) for source_id in source_ids)
    )


def stored_rows(family: RowUpsert, tenant_id: str, source_ids: list[str]) -> dict[str, tuple]:
    """source_id -> (id, *kept columns) of the tenant's stored records among `source_ids`."""
    model = family.model
    columns = [model.source_id, model.id, *(getattr(model, name) for name in family.kept_columns)]
    query = model.select(*columns).where(
        (model.tenant == tenant_id) & model.source_id.in_(source_ids)
    )
    return {row[0]: row[1:] for row in query.tuples()}


def group_by_columns(rows: list[dict]) -> dict[tuple[str, ...], list[dict]]:
    """Rows sharing their set of fields go in one statement (bodies of one schema all do)."""
    groups: dict[tuple[str, ...], list[dict]] = {}
    for row in rows:
        groups.setdefault(tuple(row), []).append(row)
    return groups


def insert_or_replace(
    model: type[TenantRecord], names: tuple[str, ...], rows: list[dict], *, kept: tuple[str, ...]
) -> None:
    """One INSERT ... ON CONFLICT (tenant, source_id) DO UPDATE of every row: PostgreSQL takes them
    as one multi-row VALUES list, SQLite as one prepared statement run per row."""
    fields = [model._meta.fields[name] for name in names]
    values = [
        tuple(field.db_value(row[name]) for field, name in zip(fields, names)) for row in rows
    ]
    sql = upsert_sql(model, names, kept)
    cursor = database.cursor()
    if is_postgres():
        from psycopg2.extras import execute_values

        execute_values(cursor, sql, values, page_size=len(values))
    else:
        cursor.executemany(sql, values)


_statements: dict[tuple, str] = {}
KEPT_ON_REPLACE = ("id", "tenant", "created_at", "source_id")


def upsert_sql(model: type[TenantRecord], names: tuple[str, ...], kept: tuple[str, ...]) -> str:
    """The statement for rows of these fields, built once per model, fields and database: a replace
    sets every field but the record's identity, its creation time and the columns a stored record
    keeps."""
    postgres = is_postgres()
    key = (model, names, kept, postgres)
    sql = _statements.get(key)
    if sql is None:
        fields = model._meta.fields
        quote = quoted
        columns = ", ".join(quote(fields[name].column_name) for name in names)
        values = "%s" if postgres else f"({', '.join('?' * len(names))})"
        replaced = [
            fields[name].column_name
            for name in names
            if name not in KEPT_ON_REPLACE and name not in kept
        ]
        sql = (
            f"INSERT INTO {quote(model._meta.table_name)} ({columns}) VALUES {values} "
            f"ON CONFLICT ({quote(fields['tenant'].column_name)}, "
            f"{quote(fields['source_id'].column_name)}) DO UPDATE SET "
            + ", ".join(f"{quote(column)} = excluded.{quote(column)}" for column in replaced)
        )
        _statements[key] = sql
    return sql
