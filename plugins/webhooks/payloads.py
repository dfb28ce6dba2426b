"""What a webhook may select: the fields of each event's record, the body built from the selection,
and the sample record a test event carries."""

from __future__ import annotations

import datetime as dt
from urllib.parse import urlencode

import marshmallow as ma

import orjson

from app.data.events import declared_types
from app.http.listing import shown_instant

JSON = "application/json"
FORM = "application/x-www-form-urlencoded"
CONTENT_TYPES = (JSON, FORM)
SAMPLE_UUID = "00000000-0000-4000-8000-000000000000"


def record_schema(event_type: str) -> ma.Schema | None:
    """The schema an event's record is dumped with (its family's EventType.record_schema), None
    while no enabled family declares one."""
    declared = declared_types().get(event_type)
    if declared is None or declared.record_schema is None:
        return None
    return declared.record_schema()


def dumped_fields(schema: ma.Schema) -> dict[str, ma.fields.Field]:
    return {
        field.data_key or name: field
        for name, field in schema.fields.items()
        if not field.load_only
    }


def record_fields(event_type: str) -> frozenset[str]:
    """The field names an event's record carries."""
    schema = record_schema(event_type)
    if schema is None:
        return frozenset(("id",))
    return frozenset(dumped_fields(schema))


def sample_payload(event_type: str, fields: list[str], now: dt.datetime) -> dict:
    """A test event: each configured field with a plausible value of its type, and "test": true."""
    schema = record_schema(event_type)
    types = dumped_fields(schema) if schema is not None else {}
    payload = {name: sample_value(event_type, name, types.get(name), now) for name in fields}
    payload["test"] = True
    return payload


def sample_value(event_type: str, name: str, field: ma.fields.Field | None, now: dt.datetime):
    """The family's sample value of the field (EventType.samples), else one of the field's type."""
    declared = declared_types().get(event_type)
    samples = dict(declared.samples) if declared is not None else {}
    if name in samples:
        return samples[name]
    if isinstance(field, ma.fields.UUID) or (
        field is None and (name == "id" or name.endswith("_id"))
    ):
        return SAMPLE_UUID
    if isinstance(field, ma.fields.DateTime):
        return shown_instant(now)
    if isinstance(field, ma.fields.Boolean):
        return False
    if isinstance(field, (ma.fields.Integer, ma.fields.Float)):
        return 1
    if isinstance(field, ma.fields.List):
        return []
    if isinstance(field, (ma.fields.Nested, ma.fields.Dict)):
        return {}
    return f"sample {name}"


def select_fields(record: dict, fields: list[str]) -> dict:
    """Only the configured fields, in the configured order (absent ones as null)."""
    return {name: record.get(name) for name in fields}


def _form_value(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return orjson.dumps(value).decode()
    return str(value)


def encode_body(payload: dict, content_type: str) -> bytes:
    """JSON, or form-urlencoded with the same keys (nested values as JSON text)."""
    if content_type == FORM:
        return urlencode([(name, _form_value(value)) for name, value in payload.items()]).encode()
    return orjson.dumps(payload)
