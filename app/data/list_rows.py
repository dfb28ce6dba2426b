"""List pages read as plain dicts straight from the database cursor, converting only the columns
whose driver value is not already what the model's field answers.

peewee's `.dicts()` calls each selected field's `python_value` on every column of every row; on a
page of 100 jobs of 30 columns that is 3,000 calls, a quarter of the page's CPU, and for the text
and integer columns that are most of a record they give back the driver's value unchanged. Here a
page runs through `Database.execute` (peewee's documented way to run a query and get the cursor),
or is a kept statement's cursor (app.data.prepared), and each row becomes `dict(zip(keys,
values))`; a field's `python_value` runs only for the columns that need it (instants and dates
on SQLite, booleans, decimals, JSON), and a UUID column becomes the text answers show. The dicts
are keyed by field name, as `.dicts()` keys them, so everything reading list rows reads these
alike; tests/test_list_items_match_records.py holds every listed record to its GET.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping

import peewee as pw

from app.data.db import database

# a reader takes a query, or the cursor its kept statement was run on (app.data.prepared)
Reader = Callable[[object], list]

# how the text, integer and floating point fields read a value: every driver already gives str,
# int and float (SQLite's REAL columns answer floats even for integral values)
KEPT = (pw.CharField.adapt, pw.TextField.adapt, pw.IntegerField.adapt, pw.FloatField.adapt)


def driver_value_is_kept(field: pw.Field) -> bool:
    """Whether the field answers what every driver gives for its column unchanged: a text (str),
    integer (int) or floating point column (float), or a foreign key to one, on a field class that
    does not change how it reads them."""
    if isinstance(field, pw.ForeignKeyField):
        return driver_value_is_kept(field.rel_field)
    kind = type(field)
    if kind.python_value is not pw.Field.python_value:
        return False
    return kind.adapt in KEPT


def uuid_text(value):
    """A UUID column's value as answers show it (8-4-4-4-12 hexadecimal digits, lower case): SQLite
    keeps the 32 digits, psycopg2 gives the dashed text, and neither needs a UUID object on the way
    to the answer."""
    if type(value) is str:
        if len(value) == 32:
            return f"{value[:8]}-{value[8:12]}-{value[12:16]}-{value[16:20]}-{value[20:]}".lower()
        if len(value) == 36:
            return value.lower()
    return None if value is None else str(uuid.UUID(str(value)))


def converter_of(field: pw.Field):
    """How a row read here turns the driver's value of the field's column into the answer's: None
    when it is kept as it is."""
    target = field.rel_field if isinstance(field, pw.ForeignKeyField) else field
    if type(target) is pw.UUIDField:
        return uuid_text
    return None if driver_value_is_kept(field) else field.python_value


def model_rows(model: type[pw.Model], aliases: Mapping[str, pw.Field] | None = None) -> Reader:
    """A reader of the rows of a query selecting the model's columns (by name or as `*`) and
    `aliases` ({alias: the field its value belongs to}), or of the cursor it ran on, as dicts keyed
    by field name, an alias by itself."""
    columns = {field.column_name: field for field in model._meta.sorted_fields}
    columns.update(aliases or {})

    def read(source) -> list[dict]:
        cursor = database.execute(source) if isinstance(source, pw.Query) else source
        keys, converters = [], []
        for description in cursor.description:
            name = description[0]
            field = columns.get(name)
            key = field.name if field is not None and name == field.column_name else name
            keys.append(key)
            convert = None if field is None else converter_of(field)
            if convert is not None:
                converters.append((key, convert))
        rows = []
        for values in cursor.fetchall():
            row = dict(zip(keys, values))
            for key, convert in converters:
                row[key] = convert(row[key])
            rows.append(row)
        return rows

    return read
