"""Domain events: written durably with a sequence number first, then handed to listeners (webhook delivery)."""

from __future__ import annotations

import logging

import peewee as pw
from flask import current_app, has_app_context

from app.db import BaseModel, JSONField, database, new_uuid, utcnow
from app.tenancy import Tenant

log = logging.getLogger("hirekit.events")

CALL_ACTIVITY = "call_activity"
APPLICATION_ACTIVITY = "application_activty"  # spelled as SPEC 2.8 spells it
EVENT_TYPES = (CALL_ACTIVITY, APPLICATION_ACTIVITY)


class Event(BaseModel):
    """One thing that happened to a record; `sequence` orders a tenant's events, `event_id` is the public id."""

    sequence = pw.BigAutoField()
    event_id = pw.UUIDField(default=new_uuid, unique=True)
    tenant = pw.ForeignKeyField(Tenant, on_delete="CASCADE", column_name="tenant_id")
    type = pw.CharField(max_length=64)
    record_id = pw.CharField(max_length=64, null=True)
    payload = JSONField()
    created_at = pw.DateTimeField(default=utcnow)

    class Meta:
        table_name = "events"
        indexes = ((("tenant", "type", "sequence"), False),)


MODELS = (Event,)


def add_listener(app, listener) -> None:
    """listener(event: Event) runs after the event is stored, inside the emitting transaction."""
    app.extensions.setdefault("hirekit_event_listeners", []).append(listener)


def emit(tenant_id: str, event_type: str, record: dict) -> Event:
    """Record the event (nothing is lost even if delivery is down), then notify listeners."""
    if event_type not in EVENT_TYPES:
        raise ValueError(f"unknown event type {event_type!r}")
    with database.atomic():
        event = Event.create(tenant=tenant_id, type=event_type, record_id=str(record.get("id")) if record.get("id") else None,
                             payload=record)
        listeners = current_app.extensions.get("hirekit_event_listeners", []) if has_app_context() else []
        for listener in listeners:
            listener(event)
    return event
