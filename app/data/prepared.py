"""Queries built with peewee once per shape and run again with each request's values: the list pages
integrators poll, whose compiling took more CPU than running them.

A list's query is written once, as a function of `Slots`: it reads every value that changes from
one request to the next (the tenant, the filters sent, the window, the page) through them, and
decides its shape only from which values are present. Built with `Slots.inline`, each slot is the
value itself and the query is an ordinary peewee query. Built by `statement`, each slot is a named
parameter (`peewee.Value` with no conversion), the query is compiled once with peewee's `Query.sql`,
and the SQL text is kept for that shape; later requests only fill the parameters, converting each
value the way peewee would have (the compared field's `db_value`).

A page of 50 applications with their candidates and jobs compiles 220 nodes, a quarter of the
route's CPU in-process on SQLite; a kept statement spends that once per shape and process.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import peewee as pw

from app.data.db import database

# statements kept per process; a list has a handful of shapes (its filters sent or not, two modes)
MAX_STATEMENTS = 512


@dataclass(frozen=True)
class Slot:
    """A named parameter of a kept statement: the value of `name`, lower-cased text when `lower`,
    then converted by `field` (the field it is compared with) as peewee converts compared values."""

    name: str
    field: pw.Field | None = None
    lower: bool = False

    def value_in(self, values: Mapping) -> object:
        value = values[self.name]
        if self.lower:
            value = str(value).lower()
        return value if self.field is None else self.field.db_value(value)


class Slots:
    """The values a query builder reads: each the value itself (`inline`), or a parameter of a
    statement kept for the shape (`parameters`). `name in slots` says whether a value was sent."""

    def __init__(self, values: Mapping, *, as_parameters: bool):
        self.values = values
        self.as_parameters = as_parameters

    @classmethod
    def inline(cls, values: Mapping) -> Slots:
        return cls(values, as_parameters=False)

    def __contains__(self, name: str) -> bool:
        return name in self.values

    def names(self) -> tuple[str, ...]:
        return tuple(self.values)

    def value(self, name: str, field: pw.Field | None = None):
        """The value of `name`, compared with `field` when given (which converts it)."""
        if self.as_parameters:
            return pw.Value(Slot(name, field), converter=False)
        return self.values[name]

    def lowered(self, name: str):
        """The value of `name` as lower-case text."""
        if self.as_parameters:
            return pw.Value(Slot(name, lower=True), converter=False)
        return str(self.values[name]).lower()


@dataclass(frozen=True)
class Statement:
    """SQL text compiled once, with its parameters: slots, filled per run, and constants."""

    sql: str
    params: tuple

    def run(self, values: Mapping):
        """The database cursor of this statement run with `values`."""
        params = [
            param.value_in(values) if isinstance(param, Slot) else param for param in self.params
        ]
        return database.execute_sql(self.sql, params)


_statements: dict[tuple, Statement] = {}
_statements_lock = threading.Lock()


def statement(key: tuple, build: Callable[[Slots], pw.Query], values: Mapping) -> Statement:
    """The statement `build` makes for the shape of `values` (which names are present), compiled on
    first use for this key, shape and database, then kept. `build` must read every value through
    its slots and choose its shape from their names alone."""
    shape = (type(database.obj), key, tuple(sorted(values)))
    found = _statements.get(shape)
    if found is None:
        sql, params = build(Slots(values, as_parameters=True)).sql()
        found = Statement(sql, tuple(params))
        with _statements_lock:
            if len(_statements) >= MAX_STATEMENTS:
                _statements.clear()
            _statements[shape] = found
    return found
