"""List pages read as plain dicts straight from the database cursor, converting only the columns
whose driver value is not already what the model's field answers.

peewee's `.dicts()` calls each selected field's `python_value` on every column of every row; on a
page of 100 jobs of 30 columns that is 3,000 calls, a quarter of the page's CPU, and for the text
and integer columns that are most of a record they give back the driver's value unchanged. Here a
page runs through `Database.execute` (peewee's documented way to run a query and get the cursor) and
each row becomes `dict(zip(keys, values))`; a field's `python_value` runs only for the columns that
need it (UUIDs, instants and dates on SQLite, booleans, decimals, JSON). The dicts are keyed by
field name, as `.dicts()` keys them, so everything reading list rows reads these alike;
tests/test_list_items_match_records.py holds every listed record to its GET.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import peewee as pw

from app.data.db import database

Reader = Callable[[pw.SelectQuery], list]

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


def model_rows(model: type[pw.Model], aliases: Mapping[str, pw.Field] | None = None) -> Reader:
    """A reader of the rows of a query selecting the model's columns (by name or as `*`) and
    `aliases` ({alias: the field its value belongs to}), as dicts keyed by field name, an alias by
    itself."""
    columns = {field.column_name: field for field in model._meta.sorted_fields}
    columns.update(aliases or {})

    def read(query: pw.SelectQuery) -> list[dict]:
        cursor = database.execute(query)
        keys, converters = [], []
        for description in cursor.description:
            name = description[0]
            field = columns.get(name)
            key = field.name if field is not None and name == field.column_name else name
            keys.append(key)
            if field is not None and not driver_value_is_kept(field):
                converters.append((key, field.python_value))
        rows = []
        for values in cursor.fetchall():
            row = dict(zip(keys, values))
            for key, convert in converters:
                row[key] = convert(row[key])
            rows.append(row)
        return rows

    return read
