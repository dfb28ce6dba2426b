"""What is left of an erased record for sync: its id and when it went, shown in the cursor walks of
its list.

An erasure deletes a record's row for good (docs/privacy.md, Erasure); a mirror walking the list by
cursor must still learn that the record is gone, so the erasure writes a tombstone here (the list's
name, the record id, deleted_at) and the list's cursor walk merges the tombstones into its rows in
the same (updated_at, id) order, a tombstone's updated_at being its deleted_at. Only unfiltered
walks show them (a tombstone holds no field a filter could match); page mode never does.
A list shows tombstones once a family declares it (`declare`), so lists without erasures pay no
query.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import uuid

import peewee as pw
from flask import current_app, g, has_app_context

from app.data.db import BaseModel, database
from app.data.tenancy import Tenant

DECLARED = "hirekit_tombstone_lists"
HIDDEN = "hirekit_tombstones_hidden"


class Tombstone(BaseModel):
    """An erased record of one of a tenant's lists."""

    tenant = pw.ForeignKeyField(Tenant, on_delete="CASCADE", column_name="tenant_id")
    list_name = pw.CharField(max_length=64)
    record_id = pw.UUIDField()
    deleted_at = pw.DateTimeField()

    deleted = True

    @property
    def updated_at(self) -> dt.datetime:
        return self.deleted_at

    @property
    def position(self) -> tuple[dt.datetime, uuid.UUID]:
        return self.deleted_at, self.record_id

    class Meta:
        table_name = "tombstones"
        indexes = ((("tenant", "list_name", "deleted_at", "record_id"), True),)


MODELS = (Tombstone,)


def declare(app, list_name: str) -> None:
    """Walks of `list_name` (app.http.listing's list name) show its tombstones from now on."""
    app.extensions.setdefault(DECLARED, set()).add(list_name)


def shown_in(list_name: str, filters: dict) -> bool:
    """Whether a cursor walk of this list with these filters shows tombstones: a declared list,
    walked unfiltered, by a caller that syncs (not inside `hidden()`)."""
    if not has_app_context() or g.get(HIDDEN):
        return False
    return list_name in current_app.extensions.get(DECLARED, ()) and all(
        value is None for value in filters.values()
    )


@contextlib.contextmanager
def hidden():
    """Lists read inside this block show no tombstones: for callers to whom an erased record is
    simply gone (MCP tools, whose answers are typed as live records)."""
    before = g.get(HIDDEN)
    setattr(g, HIDDEN, True)
    try:
        yield
    finally:
        setattr(g, HIDDEN, before)


def buried_since(tenant_id: str, since: dt.datetime) -> list[str]:
    """The ids of the tenant's records erased at `since` or later, in every declared list (few: an
    erasure's records), for a write that must not keep what it answered about a record erased
    meanwhile."""
    lists = sorted(current_app.extensions.get(DECLARED, ()))
    if not lists:
        return []
    query = Tombstone.select(Tombstone.record_id).where(
        (Tombstone.tenant == tenant_id)
        & Tombstone.list_name.in_(lists)
        & (Tombstone.deleted_at >= since)
    )
    return [str(row.record_id) for row in query]


def bury(tenant_id: str, list_name: str, record_ids, at: dt.datetime) -> None:
    """Tombstones for erased records of the tenant's list (inside the erasing transaction)."""
    rows = [
        {"tenant": tenant_id, "list_name": list_name, "record_id": record_id, "deleted_at": at}
        for record_id in record_ids
    ]
    if rows:
        Tombstone.insert_many(rows).execute()


def after_position(
    tenant_id: str,
    list_name: str,
    *,
    position,
    updated_after,
    updated_before,
    limit: int,
    until=None,
) -> list[Tombstone]:
    """The list's tombstones past a cursor position (None: from the start) inside the updated_at
    window, deleted at or before `until` when given (a full page's last row: later ones fall on a
    later page), in (deleted_at, record_id) order, at most `limit`. One statement text per shape:
    every cursor page of the lists that show tombstones runs it."""
    bounds = {"after": updated_after, "before": updated_before, "until": until}
    shape = tuple(name for name, value in bounds.items() if value is not None) + (
        ("position",) if position else ()
    )
    at, record = Tombstone.deleted_at.db_value, Tombstone.record_id.db_value
    params = [
        Tombstone.tenant.db_value(tenant_id),
        list_name,
        *(at(bounds[name]) for name in shape if name in bounds),
    ]
    if position is not None:
        params += [at(position[0]), at(position[0]), record(uuid.UUID(str(position[1])))]
    params.append(limit)
    cursor = database.execute_sql(_sql(shape, database.obj.param), params)
    return [
        Tombstone(
            record_id=Tombstone.record_id.python_value(record_id),
            deleted_at=Tombstone.deleted_at.python_value(deleted_at),
        )
        for deleted_at, record_id in cursor.fetchall()
    ]


_CONDITIONS = {
    "after": "deleted_at > {p}",
    "before": "deleted_at < {p}",
    "until": "deleted_at <= {p}",
    "position": "deleted_at >= {p} AND (deleted_at > {p} OR record_id > {p})",
}


@functools.lru_cache(maxsize=64)
def _sql(shape: tuple[str, ...], placeholder: str) -> str:
    conditions = " AND ".join(
        ["tenant_id = {p}", "list_name = {p}", *(_CONDITIONS[name] for name in shape)]
    )
    return (
        f'SELECT deleted_at, record_id FROM "tombstones" WHERE {conditions} '
        "ORDER BY deleted_at, record_id LIMIT {p}"
    ).replace("{p}", placeholder)


def merged(
    entries: list, positions: list[tuple], tombstones: list[Tombstone], shown: list | None = None
) -> tuple[list, list]:
    """Rows (with their (updated_at, id) positions) and tombstones as one list in position order;
    `shown` gives what each tombstone is answered as (the tombstones themselves by default)."""
    shown = tombstones if shown is None else shown
    pairs = sorted(
        [(_key(position), entry, position) for entry, position in zip(entries, positions)]
        + [
            (_key(stone.position), answer, stone.position)
            for stone, answer in zip(tombstones, shown)
        ],
        key=lambda pair: pair[0],
    )
    return [entry for _, entry, _ in pairs], [position for _, _, position in pairs]


def _key(position: tuple) -> tuple:
    updated_at, record_id = position
    return updated_at, uuid.UUID(str(record_id))
