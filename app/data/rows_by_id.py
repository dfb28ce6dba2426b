"""Rows read by primary key through SQL text built once: peewee compiles a query's SQL at every execution, and for a
wide model (a call has forty columns) that costs more CPU than the database's own work. The call relay and the worker
completing calls read the same call, job and candidate rows for every call, so those reads build their SELECT once per
database and run it through Model.raw(), peewee's public way of running SQL text into model instances."""

from __future__ import annotations

from app.data.db import database

_SELECT_BY_ID: dict[tuple, str] = {}


def by_id(model, key):
    """The `model` row whose primary key is `key`, or None; the same instance a `model.get_or_none(pk == key)` gives."""
    primary_key = model._meta.primary_key
    cache_key = (model, type(database.obj))
    sql = _SELECT_BY_ID.get(cache_key)
    if sql is None:
        sql, _ = model.select().where(primary_key == key).sql()
        sql = _SELECT_BY_ID.setdefault(cache_key, sql)
    return next(iter(model.raw(sql, primary_key.db_value(key))), None)
