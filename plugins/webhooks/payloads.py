"""What a webhook may select: the fields of each event's record, and the body built from the selection."""

from __future__ import annotations

import importlib
from urllib.parse import urlencode

import orjson

from app.events import APPLICATION_ACTIVITY, CALL_ACTIVITY

JSON = "application/json"
FORM = "application/x-www-form-urlencoded"
CONTENT_TYPES = (JSON, FORM)

# The schema each event's record is dumped with; its field names are what `fields` may select
RECORD_SCHEMAS = {
    CALL_ACTIVITY: ("plugins.calls.schemas", "CallSchema"),
    APPLICATION_ACTIVITY: ("plugins.applications.schemas", "ApplicationSchema"),
}
# Used while a family's schema does not exist yet: its table's columns plus the embedded summaries
FALLBACK_RECORD_FIELDS = {
    APPLICATION_ACTIVITY: ("id", "created_at", "updated_at", "candidate_id", "job_id", "source_id", "candidate_source_id",
                           "job_source_id", "source_application_status", "application_stage", "candidate", "job"),
}


def record_fields(event_type: str) -> frozenset[str]:
    """The field names an event's record carries."""
    module_name, class_name = RECORD_SCHEMAS[event_type]
    try:
        schema = getattr(importlib.import_module(module_name), class_name)()
    except (ImportError, AttributeError):
        return frozenset(FALLBACK_RECORD_FIELDS.get(event_type, ("id",)))
    return frozenset(field.data_key or name for name, field in schema.fields.items() if not field.load_only)


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
