"""GET-by-id answers and list items built once per distinct row: rows are read on every request, their JSON reused.

A record's JSON is a pure function of its row and its schema, so the body dumped for a row can be answered again for
an identical row read later: any change to the row changes the key. Nothing is served that the database did not
return for this request. What is skipped is building the model instance, the marshmallow dump and the JSON encoding,
and on PostgreSQL the decoding of typed columns, since the row is read as one text value there
(`app.records.get_owned_version`). Integrations poll the same jobs and candidates over and over, which is the read
this serves; a row not seen before costs one more query on PostgreSQL and what it did without the cache elsewhere.
A list page reuses each row's dumped item the same way.
"""

from __future__ import annotations

from functools import lru_cache

import peewee as pw
from flask import Response, current_app

from app.api import page_schema
from app import listing
from app.listing import ListWindow, page_body, page_query, paginate, within_window
from app.db import database
from app.json import dumps_bytes
from app.records import TenantRecord, get_owned_version, get_owned_versioned_row, instance_from_row

MAX_BODIES = 2048  # per process, for each of the two memos; at a few KiB each, a few MiB at most

_bodies: dict[tuple, bytes] = {}  # (schema class, row version) -> the GET-by-id body
_items: dict[tuple, dict] = {}  # (schema class, row) -> the dumped item of a list page


def owned_record_response(model: type[TenantRecord], schema_class: type, tenant_id: str, record_id) -> Response:
    """200 with the tenant's record dumped by `schema_class` (a 404 as `get_owned` answers it)."""
    version, row = get_owned_version(model, tenant_id, record_id)
    key, body = _recall(_bodies, (schema_class, version))
    if body is None:
        if row is None:  # the version alone was read: read it again with the row, consistently
            version, row = get_owned_versioned_row(model, tenant_id, record_id)
            key = (schema_class, version)
        body = dumps_bytes(_schema(schema_class).dump(instance_from_row(model, row)))
        if key is not None:
            _remember(_bodies, key, body)
    return _json_response(body)


def owned_page_response(query, schema_class: type, *, page: int, size: int, total: int | None = None) -> Response:
    """200 with what `paginate(query)` dumped by `page_schema(schema_class)` answers, each row's item reused as above;
    `total` when known (app.listing.known_total), else counted.

    For a query of one model's own rows (no joins), read as the table's columns: compiling a 30-column select list
    costs peewee more than the query. Anything else takes `paginate`."""
    if query._joins:
        body = _schema(page_schema(schema_class)).dump(paginate(query, page=page, size=size, total=total))
        return _json_response(dumps_bytes(body))
    if total is None:
        total = query.count()
    items, _ = _dumped_rows(page_query(query, page=page, size=size), schema_class)
    return _json_response(dumps_bytes(page_body(items, page=page, size=size, total=total)))


def owned_list_response(query, schema_class: type, window: ListWindow, *, tenant_id: str, list_name: str,
                        filters: dict) -> Response:
    """200 with a list in either mode (app.listing): page mode as `owned_page_response`, cursor mode by keyset."""
    if not window.by_cursor:
        total = listing.known_total(query.model, window, tenant_id=tenant_id, list_name=list_name, filters=filters)
        return owned_page_response(within_window(query, query.model, window), schema_class, page=window.page,
                                   size=window.size, total=total)
    if query._joins:
        body = listing.answer(query, window, tenant_id=tenant_id, list_name=list_name, filters=filters)
        return _json_response(dumps_bytes(_schema(page_schema(schema_class)).dump(body)))
    scope = listing.cursor_scope(tenant_id, list_name, window, filters)
    items, positions = _dumped_rows(listing.keyset_query(query, query.model, window, scope), schema_class)
    last = positions[window.size - 1] if len(positions) > window.size else None
    return _json_response(dumps_bytes(listing.cursor_body(items, size=window.size, last_position=last, scope=scope)))


def _dumped_rows(query, schema_class: type) -> tuple[list[dict], list[tuple]]:
    """Each row of a one-model query dumped (reusing the item of an identical row), and its (updated_at, id)."""
    model = query.model
    cursor = database.execute(query.select(pw.SQL('"t1".*')))
    fields = _fields_of(model, tuple(column[0] for column in cursor.description))
    updated_at, ident = (next(i for i, field in enumerate(fields) if field is wanted)  # Field == builds SQL, so `is`
                         for wanted in (model.updated_at, model._meta.primary_key))
    schema = _schema(schema_class)
    items, positions = [], []
    for row in cursor.fetchall():
        key, item = _recall(_items, (schema_class, row))
        if item is None:
            item = schema.dump(instance_from_row(model, row, fields))
            if key is not None:
                _remember(_items, key, item)
        items.append(item)
        positions.append((model.updated_at.python_value(row[updated_at]), model._meta.primary_key.python_value(row[ident])))
    return items, positions


@lru_cache(maxsize=256)
def _fields_of(model, columns: tuple[str, ...]) -> list:
    """The model field of each column the table returned (None for a column the model does not declare)."""
    return [model._meta.columns.get(column) for column in columns]


def _recall(memo: dict, key: tuple) -> tuple[tuple | None, object]:
    """(key, what is kept under it or None); the key comes back None when it cannot be kept, because a column the
    driver returns as a list or dict makes it unhashable."""
    try:
        return key, memo.get(key)
    except TypeError:
        return None, None


def _remember(memo: dict, key, value) -> None:
    if len(memo) >= MAX_BODIES:
        memo.clear()
    memo[key] = value


def _json_response(body: bytes) -> Response:
    return current_app.response_class(body, mimetype=current_app.json.mimetype)


@lru_cache(maxsize=None)
def _schema(schema_class):
    return schema_class()
