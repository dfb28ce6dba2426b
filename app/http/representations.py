"""GET-by-id answers and list items built once per distinct row: rows are read on every request, their JSON reused.

A record's JSON is a pure function of its row and its schema, so the body dumped for a row can be answered again for
an identical row read later: any change to the row changes the key. Nothing is served that the database did not
return for this request. What is skipped is building the model instance, the marshmallow dump and the JSON encoding,
and on PostgreSQL the decoding of typed columns, since the row is read as one text value there
(`app.data.records.get_owned_version`). Integrations poll the same jobs and candidates over and over, which is the read
this serves; a row not seen before costs one more query on PostgreSQL and what it did without the cache elsewhere.
A list page reuses each row's dumped item the same way.

That holds only for a schema whose dump reads nothing but the row's own columns, so the reuse is fenced: the routes
that answer this way are registered by app.http.record_routes, which declares their (model, schema) pair as it registers
the route; `declare` fails with the field at fault (a Method, Function, Nested or Pluck field off the row's own JSON
columns, a field that reads a related row or a model property, a custom serialize not declared PURE_FUNCTION_OF_ROW,
a dump hook). A pair no route declared is checked the same way on its first use, before any body is kept.
"""

from __future__ import annotations

from functools import lru_cache

import marshmallow as ma
import peewee as pw
from flask import Response, current_app

from app.http.api import TombstoneSchema, page_schema
from app.security.auth import current_tenant_id
from app.http import listing
from app.http.listing import ListWindow, page_body, page_query, paginate, within_window
from app.data.db import database
from app.http.json import dumps_bytes
from app.data.records import TenantRecord, get_owned_version, get_owned_versioned_row, instance_from_row

MAX_BODIES = 2048  # per process, for each of the two memos; at a few KiB each, a few MiB at most

_bodies: dict[tuple, bytes] = {}  # (schema class, row version) -> the GET-by-id body
_items: dict[tuple, dict] = {}  # (schema class, row) -> the dumped item of a list page


_declared: set[tuple] = set()  # (model, schema class) pairs checked to dump nothing but the row's own columns


class ImpureSchemaError(TypeError):
    """A schema asked to reuse bodies dumps something that is not a pure function of the row."""


def declare(model: type[TenantRecord], schema_class: type[ma.Schema]) -> None:
    """Check that `schema_class` dumps a `model` row from its own columns alone, and allow its bodies to be reused."""
    if (model, schema_class) in _declared:
        return
    problems = _impurities(model, _schema(schema_class))
    if problems:
        raise ImpureSchemaError(
            f"{schema_class.__name__} cannot have its bodies reused for {model.__name__} rows (app.http.representations): "
            + "; ".join(problems) + ". A reused body would be answered after what it depends on changed: dump it "
            "without app.http.representations, or make the field read a column of the row.")
    _declared.add((model, schema_class))


# Field methods that decide what is dumped: marshmallow's own read one attribute of the object and convert its value.
_VALUE_METHODS = ("serialize", "_serialize", "get_value")


def _impurities(model, schema: ma.Schema, *, path: str = "", in_json: bool = False) -> list[str]:
    """What keeps a schema's dump from being a pure function of a row (or, in_json, of a JSON column's value)."""
    name = type(schema).__name__
    problems = []
    if schema._hooks.get("pre_dump") or schema._hooks.get("post_dump"):
        problems.append(f"{name}{' at ' + path if path else ''} has a dump hook")
    if type(schema).get_attribute is not ma.Schema.get_attribute:
        problems.append(f"{name}{' at ' + path if path else ''} overrides get_attribute")
    for field_name, field in schema.dump_fields.items():
        problems.extend(_field_impurities(model, field_name, field, f"{path}.{field_name}" if path else field_name,
                                          in_json))
    return problems


def _field_impurities(model, name: str, field: ma.fields.Field, where: str, in_json: bool) -> list[str]:
    if getattr(type(field), "PURE_FUNCTION_OF_ROW", False):
        return []
    kind = type(field).__name__
    if isinstance(field, (ma.fields.Method, ma.fields.Function)):
        return [f"field {where!r} is a {kind} field (computed at dump time)"]
    custom = [method for method in _VALUE_METHODS
              if not getattr(type(field), method).__module__.startswith("marshmallow.")]
    if custom:
        return [f"field {where!r} ({kind}) has a custom {'/'.join(custom)} not declared PURE_FUNCTION_OF_ROW"]
    if not in_json:  # a field of the row itself: it must read one of the row's columns
        attribute = field.attribute or name
        column = model._meta.fields.get(attribute) or model._meta.columns.get(attribute)
        if "." in attribute or column is None:
            return [f"field {where!r} reads {attribute!r}, which is not a column of {model.__name__}"]
        if isinstance(column, pw.ForeignKeyField) and (attribute != column.column_name
                                                       or isinstance(field, ma.fields.Nested)):
            return [f"field {where!r} reads the related row {column.name!r}"]
    if isinstance(field, ma.fields.Pluck):
        plucked = field.schema.fields[field.field_name]
        return _field_impurities(model, field.field_name, plucked, f"{where}.{field.field_name}", True)
    if isinstance(field, ma.fields.Nested):  # of a JSON column: its dump reads the column's value alone
        return _impurities(model, field.schema, path=where, in_json=True)
    inner = [field.inner] if isinstance(field, ma.fields.List) else list(getattr(field, "tuple_fields", ()))
    if isinstance(field, ma.fields.Mapping) and field.value_field is not None:
        inner.append(field.value_field)
    return [problem for part in inner for problem in _field_impurities(model, name, part, f"{where}[]", True)]


def owned_record_response(model: type[TenantRecord], schema_class: type, tenant_id: str, record_id) -> Response:
    """200 with the tenant's record dumped by `schema_class` (a 404 as `get_owned` answers it)."""
    if (model, schema_class) not in _declared:
        declare(model, schema_class)
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
    `total` when known (app.http.listing.known_total), else counted.

    For a query of one model's own rows (no joins), read as the table's columns: compiling a 30-column select list
    costs peewee more than the query. Anything else takes `paginate`."""
    if query._joins:
        body = _schema(page_schema(schema_class)).dump(paginate(query, page=page, size=size, total=total))
        return _json_response(dumps_bytes(body))
    if total is None:
        total = query.count()
    items, _ = _dumped_rows(page_query(query, page=page, size=size), schema_class)
    return _json_response(dumps_bytes(page_body(items, page=page, size=size, total=total)))


def tenant_list_response(args: dict, query_for, schema_class: type, *, list_name: str) -> Response:
    """A family's list route: the caller's tenant's rows of `query_for(tenant_id, **filters)` in either list mode."""
    window, filters = listing.split_window(args)
    tenant_id = current_tenant_id()
    return owned_list_response(query_for(tenant_id, **filters), schema_class, window, tenant_id=tenant_id,
                               list_name=list_name, filters=filters)


def owned_list_response(query, schema_class: type, window: ListWindow, *, tenant_id: str, list_name: str,
                        filters: dict) -> Response:
    """200 with a list in either mode (app.http.listing): page mode as `owned_page_response`, cursor mode by keyset."""
    if not window.by_cursor:
        total = listing.known_total(query.model, window, tenant_id=tenant_id, list_name=list_name, filters=filters)
        return owned_page_response(within_window(query, query.model, window), schema_class, page=window.page,
                                   size=window.size, total=total)
    if query._joins:
        body = listing.answer(query, window, tenant_id=tenant_id, list_name=list_name, filters=filters)
        return _json_response(dumps_bytes(_schema(page_schema(schema_class)).dump(body)))
    scope = listing.cursor_scope(tenant_id, list_name, window, filters)
    items, positions = _dumped_rows(listing.keyset_query(query, query.model, window, scope), schema_class)
    items, positions = listing.with_tombstones(items, positions, window, scope, tenant_id=tenant_id, list_name=list_name,
                                               filters=filters, shown=_dumped_tombstones)
    last = positions[window.size - 1] if len(positions) > window.size else None
    return _json_response(dumps_bytes(listing.cursor_body(items, size=window.size, last_position=last, scope=scope)))


def _dumped_tombstones(stones: list) -> list[dict]:
    return _schema(TombstoneSchema).dump(stones, many=True)


def _dumped_rows(query, schema_class: type) -> tuple[list[dict], list[tuple]]:
    """Each row of a one-model query dumped (reusing the item of an identical row), and its (updated_at, id)."""
    model = query.model
    if (model, schema_class) not in _declared:
        declare(model, schema_class)
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
    app = current_app._get_current_object()
    return app.response_class(body, mimetype=app.json.mimetype)


@lru_cache(maxsize=None)
def _schema(schema_class):
    return schema_class()
