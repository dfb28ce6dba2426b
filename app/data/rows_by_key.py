"""Rows read by one key through SQL text made once: peewee compiles a query's SQL at every
execution, and for a wide model (a call has forty columns) that costs more CPU than the database's
own work. The call relay and the worker completing calls read the same call, job, candidate and
settings rows for every call, so those reads use a SELECT made once per model, key and database from
the model's fields, and run it through Model.raw(), peewee's public way of running SQL text into
model instances (each column converted by its field)."""

from __future__ import annotations

from app.data.db import database

_SELECTS: dict[tuple, str] = {}


def by_key(model, field, key):
    """The `model` row whose `field` (a unique one) is `key`, or None: the instance
    `model.get_or_none(field == key)` gives."""
    cache_key = (model, field.name, database.param)
    sql = _SELECTS.get(cache_key)
    if sql is None:
        sql = _SELECTS.setdefault(cache_key, _select_sql(model, field))
    return next(iter(model.raw(sql, field.db_value(key))), None)


def by_id(model, key):
    """The `model` row whose primary key is `key`, or None."""
    return by_key(model, model._meta.primary_key, key)


def _select_sql(model, field) -> str:
    columns = ", ".join(f'"{each.column_name}"' for each in model._meta.sorted_fields)
    return (
        f'SELECT {columns} FROM "{model._meta.table_name}" '
        f'WHERE "{field.column_name}" = {database.param}'
    )
