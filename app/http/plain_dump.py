"""A plain dump of an answer schema: the same body marshmallow's dump makes, in one pass per record.

marshmallow runs about seven Python calls for each field it dumps (`Field.serialize`, the value
look-up through the schema's accessor, the field's `_serialize`); a page of 50 applications has
1,400 fields, and those calls were a third of the page's CPU. `plan_for(schema)` reads the
schema's declared dump fields once (`Schema.dump_fields`, `data_key`, `attribute`, `dump_default`)
and answers a function of one record that reads each value once and converts it with a plain
function chosen by the field's class:

- marshmallow's String, UUID, Integer, Float, Boolean, Raw and Nested, and any subclass of theirs
  that leaves `_serialize` and `get_value` alone, are dumped the way their `_serialize` does;
- a field class of this project that overrides `_serialize` may also define `plain_value(value)`,
  the same answer for a value that is not None, and is then dumped through it;
- any other field (Function, Method, Decimal, List of those, a custom `get_value`...) is dumped by
  marshmallow itself (`Field.serialize`), so a new field type is always right, if slower.

Schemas using it must not declare pre_dump or post_dump hooks (none does);
tests/test_plain_dump.py holds the plain dump to marshmallow's own for every answer schema.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import marshmallow as ma

MISSING = ma.missing

# Each as its field's _serialize converts a value that is not None (Number: as_string off).
_CONVERTERS: dict[type, Callable[[ma.fields.Field], Callable[[Any], Any] | None]] = {
    ma.fields.String: lambda field: str,
    ma.fields.UUID: lambda field: str,
    ma.fields.Integer: lambda field: None if field.as_string else int,
    ma.fields.Float: lambda field: None if field.as_string else float,
    ma.fields.Boolean: lambda field: _as_is,
    ma.fields.Raw: lambda field: _as_is,
    ma.fields.Nested: lambda field: _nested_dump(field),
}


def _as_is(value):
    return value


def _nested_dump(field: ma.fields.Nested) -> Callable[[Any], Any]:
    schema = field.schema
    many = schema.many or field.many
    return lambda value: schema.dump(value, many=many)


def converter(field: ma.fields.Field) -> Callable[[Any], Any] | None:
    """The plain conversion of a non-None value for this field, or None when only marshmallow's
    own `serialize` dumps it right."""
    for cls in type(field).__mro__:
        own = vars(cls)
        if "plain_value" in own:
            return field.plain_value
        if "get_value" in own and cls is not ma.fields.Field:
            return None
        if cls in _CONVERTERS:
            return _CONVERTERS[cls](field)
        if "_serialize" in own:
            return None
    return None


def plan_for(schema: ma.Schema) -> Callable[[Any], dict]:
    """A function dumping one record as `schema.dump` would, keys in the same order, reading a dict
    by key and anything else by attribute (as FullAnswerSchema.get_attribute does)."""
    steps = []
    for name, field in schema.dump_fields.items():
        key = field.data_key if field.data_key is not None else name
        convert = converter(field)
        attribute = field.attribute or name
        if convert is None or "." in attribute:
            steps.append((key, name, None, field, True))
        else:
            steps.append((key, attribute, None if convert is _as_is else convert, field, False))
    accessor = schema.get_attribute

    def dump_one(obj) -> dict:
        out = {}
        by_key = type(obj) is dict
        for key, attribute, convert, field, by_marshmallow in steps:
            if by_marshmallow:
                value = field.serialize(attribute, obj, accessor=accessor)
                if value is not MISSING:
                    out[key] = value
                continue
            value = obj.get(attribute, MISSING) if by_key else getattr(obj, attribute, MISSING)
            if value is MISSING:
                value = field.dump_default() if callable(field.dump_default) else field.dump_default
                if value is MISSING:
                    continue
            out[key] = value if value is None or convert is None else convert(value)
        return out

    return dump_one
