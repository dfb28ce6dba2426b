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
  the same answer for a value that is not None, and is then dumped through it; one that reads the
  whole record (a custom `get_value`) may define `plain_from_record(record)`, its answer from the
  record itself;
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
    """The nested schema's dump; its plain plan itself when it has one (FullAnswerSchema.plain)."""
    schema = field.schema
    many = schema.many or field.many
    plain = getattr(schema, "plain", None)
    if plain is None:
        return lambda value: schema.dump(value, many=many)
    one = plain()
    return (lambda value: [one(each) for each in value]) if many else one


def _from_record(value):
    """The mark of a field answered from the whole record (its `plain_from_record`)."""
    return value


def converter(field: ma.fields.Field) -> Callable[[Any], Any] | None:
    """The plain conversion of a non-None value for this field, _from_record for a field answered
    from the whole record, or None when only marshmallow's own `serialize` dumps it right."""
    for cls in type(field).__mro__:
        own = vars(cls)
        if "plain_from_record" in own:
            return _from_record
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
    steps = _steps(schema)
    namespace = {"M": MISSING, "accessor": schema.get_attribute}
    for index, _, attribute, convert, field in steps:
        namespace[f"field{index}"] = field
        namespace[f"convert{index}"] = convert
        namespace[f"default{index}"] = field.dump_default
    namespace["WHOLE"] = frozenset(
        attribute for _, _, attribute, convert, _ in steps if convert is not _from_record
    )
    source = "\n".join(
        [
            "def dump_one(obj):",
            "    if type(obj) is dict:",
            *_body(steps, "obj.get({!r}, M)", whole_row="obj[{!r}]", indent="        "),
            *_body(steps, "getattr(obj, {!r}, M)", indent="    "),
        ]
    )
    exec(compile(source, f"<plain dump of {type(schema).__name__}>", "exec"), namespace)  # noqa: S102
    return namespace["dump_one"]


def _steps(schema: ma.Schema) -> list[tuple]:
    """(index, answer key, attribute read, plain conversion or None, field) per dumped field; the
    conversion is None where marshmallow's `Field.serialize` dumps the field (the attribute read
    is then the field's name, as marshmallow passes it)."""
    steps = []
    for index, (name, field) in enumerate(schema.dump_fields.items()):
        key = field.data_key if field.data_key is not None else name
        convert = converter(field)
        attribute = field.attribute or name
        if "." in attribute:
            convert = None
        steps.append((index, key, name if convert is None else attribute, convert, field))
    return steps


def _converted(index: int, convert, read: str) -> str:
    """The expression of a plain step's answer, `read` the expression of its value (read once)."""
    if convert is _from_record:
        return f"field{index}.plain_from_record(obj)"
    if convert is _as_is:
        return read
    bound = read if read == "value" else f"(value := {read})"
    if convert in (str, int, float):  # a value already of the type needs no call
        kept = f"{bound} is None or type(value) is {convert.__name__}"
        return f"value if {kept} else convert{index}(value)"
    return f"None if {bound} is None else convert{index}(value)"


def _body(steps: list[tuple], read: str, indent: str, whole_row: str | None = None) -> list[str]:
    """The source lines dumping `obj` and returning the answer: `read` formats an attribute name
    into the expression reading it from `obj` (M when absent). With `whole_row` (the expression
    reading a present attribute), a record that carries every attribute the steps read (a list row)
    is dumped by one dict display, when no step needs marshmallow."""
    lines = []
    if whole_row and all(convert is not None for _, _, _, convert, _ in steps):
        lines.append(f"{indent}if obj.keys() >= WHOLE:")
        lines.append(f"{indent}    return {{")
        for index, key, attribute, convert, _ in steps:
            expression = _converted(index, convert, whole_row.format(attribute))
            lines.append(f"{indent}        {key!r}: {expression},")
        lines.append(f"{indent}    }}")
    lines.append(f"{indent}out = {{}}")
    for index, key, attribute, convert, field in steps:
        if convert is _from_record:
            lines.append(f"{indent}out[{key!r}] = field{index}.plain_from_record(obj)")
            continue
        if convert is None:
            lines += [
                f"{indent}value = field{index}.serialize({attribute!r}, obj, accessor=accessor)",
                f"{indent}if value is not M: out[{key!r}] = value",
            ]
            continue
        lines.append(f"{indent}value = {read.format(attribute)}")
        if field.dump_default is not MISSING:
            default = f"default{index}()" if callable(field.dump_default) else f"default{index}"
            lines.append(f"{indent}if value is M: value = {default}")
        converted = _converted(index, convert, "value")
        lines.append(f"{indent}if value is not M: out[{key!r}] = {converted}")
    lines.append(f"{indent}return out")
    return lines
