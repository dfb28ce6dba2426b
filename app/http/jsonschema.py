"""Marshmallow schemas -> JSON Schema (2020-12), so a body's schema is written once and described
everywhere (MCP tools).

Why not apispec's converter (OpenAPIConverter.fields2jsonschema, which /openapi.json uses): measured
on every MCP tool, its output differs in ways MCP clients notice, and a wrapper would have to walk
the result alongside the marshmallow fields to undo each difference, i.e. be this module again.
- outputSchema: MCP clients validate a tool's structuredContent against it. A record answers null
  for an optional field it lacks even where the field is not declared allow_none (record schemas are
  written for dumping), so every non-required property here admits null (DUMP); apispec types them
  non-null and a validating client would reject such answers.
- inputSchema: apispec drops `additionalProperties: false` (it reads only an explicit Meta.unknown,
  and fields2jsonschema not even that), which tells an agent that unknown arguments are refused; it
  adds `"default": null` to every optional argument; it writes OpenAPI's `example` where JSON Schema
  has `examples`; and it drops the schema's description.
- Nested schemas: apispec inlines them with all their fields, dump-only ones marked readOnly
  (load-only writeOnly); here a LOAD schema leaves dump-only fields out at every depth and a DUMP
  schema load-only ones.
- Tuple (prefixItems), ContainsOnly (items enum), the registered custom fields (register_field) and
  the `json_schema` metadata override have no apispec equivalent without attribute functions of our
  own.
"""

from __future__ import annotations

import datetime as dt
import decimal
import enum
import uuid
from typing import Callable

import marshmallow as ma
from marshmallow import fields, validate

LOAD = "load"  # the shape a client sends: dump_only fields left out, required fields listed
# the shape the service answers: load_only fields left out, values may be null unless required
DUMP = "dump"

# Checked in order, so subclasses (Email before String, Integer before Number) come first.
FIELD_TYPES: tuple[tuple[type, dict], ...] = (
    (fields.Email, {"type": "string", "format": "email"}),
    (fields.Url, {"type": "string", "format": "uri"}),
    (fields.UUID, {"type": "string", "format": "uuid"}),
    (fields.IPv4, {"type": "string", "format": "ipv4"}),
    (fields.IPv6, {"type": "string", "format": "ipv6"}),
    (fields.String, {"type": "string"}),
    (fields.Integer, {"type": "integer"}),
    (fields.Number, {"type": "number"}),
    (fields.Boolean, {"type": "boolean"}),
    (fields.Date, {"type": "string", "format": "date"}),
    (fields.Time, {"type": "string", "format": "time"}),
    (fields.DateTime, {"type": "string", "format": "date-time"}),
    (fields.TimeDelta, {"type": "number"}),
)

JSON_LITERALS = (str, int, float, bool)

# Custom field classes a family defines, and how to describe them: field class -> (field -> JSON
# Schema).
CUSTOM_FIELDS: dict[type, Callable[[fields.Field], dict]] = {}


def register_field(field_type: type, describe: Callable[[fields.Field], dict]) -> None:
    """Teach the converter a custom field class (e.g. a JSON-object field); subclasses are covered
    too."""
    CUSTOM_FIELDS[field_type] = describe


def schema_to_json_schema(schema: type[ma.Schema] | ma.Schema, *, mode: str = LOAD) -> dict:
    """The JSON Schema object of a marshmallow schema; `mode` picks the request (LOAD) or response
    (DUMP) side."""
    if mode not in (LOAD, DUMP):
        raise ValueError(f"mode must be {LOAD!r} or {DUMP!r}")
    instance = schema() if isinstance(schema, type) else schema
    return _object(instance, mode, seen=())


def _object(schema: ma.Schema, mode: str, seen: tuple) -> dict:
    # a recursive schema: describe the inner level loosely rather than loop
    if type(schema) in seen:
        return {"type": "object"}
    seen = (*seen, type(schema))
    chosen = schema.load_fields if mode == LOAD else schema.dump_fields
    properties: dict[str, dict] = {}
    required: list[str] = []
    for name, field in chosen.items():
        key = field.data_key or name
        properties[key] = field_to_json_schema(field, mode=mode, _seen=seen, _property=True)
        if field.required:
            required.append(key)
    result: dict = {"type": "object", "properties": properties}
    if required:
        result["required"] = required
    if mode == LOAD and schema.unknown == ma.RAISE:
        result["additionalProperties"] = False
    description = (type(schema).__doc__ or "").strip()
    if description:
        result["description"] = description.splitlines()[0]
    return result


def field_to_json_schema(
    field: fields.Field, *, mode: str = LOAD, _seen: tuple = (), _property: bool = False
) -> dict:
    """One field's JSON Schema: its type, bounds from its validators (on the LOAD side, where they
    are enforced), null when allowed, and its documentation."""
    result = _type_of(field, mode, _seen)
    if mode == LOAD:
        for validator in _validators(field):
            result.update(_validator_keywords(validator, result))
    result.update(_documentation(field, mode))
    if _nullable(field, mode, _property):
        result = _allow_null(result)
    override = field.metadata.get("json_schema")
    if override:
        result.update(override)
    return result


def _type_of(field: fields.Field, mode: str, seen: tuple) -> dict:
    for field_type, describe in CUSTOM_FIELDS.items():
        if isinstance(field, field_type):
            return describe(field)
    if isinstance(field, fields.Pluck):
        inner = field_to_json_schema(field.schema.fields[field.field_name], mode=mode, _seen=seen)
        return {"type": "array", "items": inner} if field.many else inner
    if isinstance(field, fields.Nested):
        inner = _object(field.schema, mode, seen)
        return {"type": "array", "items": inner} if field.many else inner
    if isinstance(field, fields.List):
        return {"type": "array", "items": field_to_json_schema(field.inner, mode=mode, _seen=seen)}
    if isinstance(field, fields.Tuple):
        items = [field_to_json_schema(inner, mode=mode, _seen=seen) for inner in field.tuple_fields]
        return {
            "type": "array",
            "prefixItems": items,
            "minItems": len(items),
            "maxItems": len(items),
        }
    if isinstance(field, fields.Mapping):
        result: dict = {"type": "object"}
        if field.value_field is not None:
            result["additionalProperties"] = field_to_json_schema(
                field.value_field, mode=mode, _seen=seen
            )
        return result
    if isinstance(field, fields.Enum):
        members = list(field.enum)
        values = (
            [m.name for m in members]
            if field.by_value is False
            else [_jsonable(m.value) for m in members]
        )
        return {"enum": values}
    if isinstance(field, fields.Constant):
        return {"const": _jsonable(field.constant)}
    for field_type, shape in FIELD_TYPES:
        if isinstance(field, field_type):
            return dict(shape)
    return {}  # Raw, Method, Function: any JSON value


def _validators(field: fields.Field) -> list:
    found = []
    for validator in field.validators:
        if isinstance(validator, validate.And):
            found.extend(validator.validators)
        else:
            found.append(validator)
    return found


def _validator_keywords(validator, shape: dict) -> dict:
    """The JSON Schema keywords a marshmallow validator means; validators with no JSON equivalent
    add nothing."""
    is_array = shape.get("type") == "array"
    if isinstance(validator, validate.Range):
        keywords = {}
        if validator.min is not None:
            keywords["minimum" if validator.min_inclusive else "exclusiveMinimum"] = _jsonable(
                validator.min
            )
        if validator.max is not None:
            keywords["maximum" if validator.max_inclusive else "exclusiveMaximum"] = _jsonable(
                validator.max
            )
        return keywords
    if isinstance(validator, validate.Length):
        low, high = ("minItems", "maxItems") if is_array else ("minLength", "maxLength")
        if shape.get("type") == "object":
            low, high = "minProperties", "maxProperties"
        if validator.equal is not None:
            return {low: validator.equal, high: validator.equal}
        keywords = {}
        if validator.min is not None:
            keywords[low] = validator.min
        if validator.max is not None:
            keywords[high] = validator.max
        return keywords
    if isinstance(validator, validate.ContainsOnly):
        return {
            "items": {**shape.get("items", {}), "enum": [_jsonable(c) for c in validator.choices]}
        }
    if isinstance(validator, validate.OneOf):
        return {"enum": [_jsonable(c) for c in validator.choices]}
    if isinstance(validator, validate.Equal):
        return {"const": _jsonable(validator.comparable)}
    if isinstance(validator, validate.Regexp):
        return {"pattern": validator.regex.pattern}
    return {}


def _documentation(field: fields.Field, mode: str) -> dict:
    metadata = field.metadata
    doc: dict = {}
    if metadata.get("title"):
        doc["title"] = metadata["title"]
    if metadata.get("description"):
        doc["description"] = metadata["description"]
    if "example" in metadata:
        doc["examples"] = [_jsonable(metadata["example"])]
    elif "examples" in metadata:
        doc["examples"] = [_jsonable(e) for e in metadata["examples"]]
    default = field.load_default if mode == LOAD else ma.missing
    if default is not ma.missing and not callable(default) and default is not None:
        doc["default"] = _jsonable(default)
    return doc


def _nullable(field: fields.Field, mode: str, is_property: bool) -> bool:
    if mode == DUMP and is_property and not field.required:
        return True  # a stored record answers null for an optional field it does not have
    return bool(field.allow_none)


def _allow_null(shape: dict) -> dict:
    if "enum" in shape and None not in shape["enum"]:
        return {**shape, "enum": [*shape["enum"], None]}
    kind = shape.get("type")
    if kind is None:
        return shape  # any value already admits null
    kinds = kind if isinstance(kind, list) else [kind]
    if "null" not in kinds:
        shape = {**shape, "type": [*kinds, "null"]}
    return shape


def _jsonable(value):
    """Validator bounds and choices as JSON values (dates, decimals, UUIDs and enums become their
    JSON form)."""
    if value is None or isinstance(value, JSON_LITERALS):
        return value
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, enum.Enum):
        return _jsonable(value.value)
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)
