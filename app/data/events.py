"""Domain events: written durably with a sequence number first, then handed to listeners (webhook
delivery)."""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import logging

import marshmallow as ma
import peewee as pw
from flask import current_app, has_app_context

from app.background import periodic
from app.data.db import BaseModel, JSONField, after_commit, database, new_uuid, utcnow
from app.data.records import inserted
from app.data.tenancy import Tenant

log = logging.getLogger("hirekit.events")

ERASED_PAYLOAD_KEY = "erased"


class Event(BaseModel):
    """One thing that happened to a record; `sequence` orders a tenant's events, `event_id` is the
    public id."""

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


def declared_types() -> dict:
    """The event types the enabled families emit (app.plugins.EventType by name, in their published
    order): the current app's; none outside an app."""
    return current_app.extensions.get("hirekit_event_types", {}) if has_app_context() else {}


class DeclaredEventType(ma.validate.Validator):
    """OneOf the declared event types, read when used rather than when the schema is made: the
    enabled families' (declared_types). `choices` is also what apispec reads into the OpenAPI
    document's enum."""

    error = "Must be one of: {choices}."

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(declared_types())

    def __call__(self, value):
        choices = self.choices
        if value not in choices:
            raise ma.ValidationError(self.error.format(input=value, choices=", ".join(choices)))
        return value


def add_listener(app, listener, *, once_committed: bool = False) -> None:
    """listener(event: Event) runs after the event is stored, inside the emitting transaction; with
    `once_committed`, once that transaction commits (never when it rolls back), after the listeners
    inside it: for a reaction that is a write of its own, made after the event's (a call series'
    next attempt after the last one's end)."""
    key = "hirekit_event_committed_listeners" if once_committed else "hirekit_event_listeners"
    app.extensions.setdefault(key, []).append(listener)


def emit(tenant_id: str, event_type: str, record: dict) -> Event:
    """Record the event (nothing is lost even if delivery is down), then notify listeners: in the
    caller's transaction, or in one of its own when there is none (a savepoint inside the caller's
    would add two statements to every write and change nothing: a failure here fails the write)."""
    if event_type not in declared_types():
        raise ValueError(f"unknown event type {event_type!r}")
    with contextlib.nullcontext() if database.in_transaction() else database.atomic():
        event = inserted(
            Event,
            tenant=tenant_id,
            type=event_type,
            record_id=str(record.get("id")) if record.get("id") else None,
            payload=record,
        )
        extensions = current_app.extensions if has_app_context() else {}
        for listener in extensions.get("hirekit_event_listeners", ()):
            listener(event)
        for listener in extensions.get("hirekit_event_committed_listeners", ()):
            after_commit(functools.partial(listener, event))
    return event


def erase_payloads(tenant_id: str, record_ids) -> list:
    """Erasure: the tenant's events about these records keep their id, type and record id, and their
    payload becomes {"id": record id, "erased": true}; answers the event ids (their webhook
    deliveries carry the same payloads)."""
    record_ids = [str(record_id) for record_id in record_ids]
    if not record_ids:
        return []
    named = (Event.tenant == tenant_id) & Event.record_id.in_(record_ids)
    event_ids = [row.event_id for row in Event.select(Event.event_id).where(named)]
    for record_id in record_ids:
        (
            Event.update(payload={"id": record_id, ERASED_PAYLOAD_KEY: True})
            .where((Event.tenant == tenant_id) & (Event.record_id == record_id))
            .execute()
        )
    return event_ids


# ---- retention: how long events are served and replayable, and the worker's pass that deletes
# older ones ----------

PURGE_JOB_ID = "hirekit-event-purge"
PURGE_QUEUE = "default"
PURGE_BATCH = 5000  # rows per DELETE: a long-idle tenant's backlog goes in short transactions


def retention(config=None) -> dt.timedelta:
    """HIREKIT_EVENT_RETENTION_DAYS (30), or HIREKIT_EVENT_RETENTION in seconds when an operator set
    that name."""
    config = config if config is not None else current_app.config
    seconds = config.get("EVENT_RETENTION")
    if seconds is None:
        seconds = float(config["EVENT_RETENTION_DAYS"]) * 86400
    return dt.timedelta(seconds=float(seconds))


def retained_since(now: dt.datetime | None = None) -> dt.datetime:
    """The oldest instant whose events are still kept."""
    return (now or utcnow()) - retention()


def purge_expired(now: dt.datetime | None = None) -> int:
    """Delete the events past the retention, oldest first, PURGE_BATCH per transaction; answers how
    many."""
    cutoff = retained_since(now)
    purged = 0
    while True:
        with database.atomic():
            oldest = (
                Event.select(Event.sequence)
                .where(Event.created_at < cutoff)
                .order_by(Event.sequence)
                .limit(PURGE_BATCH)
            )
            deleted = Event.delete().where(Event.sequence.in_(oldest)).execute()
        purged += deleted
        if deleted < PURGE_BATCH:
            return purged


@periodic.chained(job_id=PURGE_JOB_ID, queue=PURGE_QUEUE, interval_setting="EVENT_PURGE_INTERVAL")
def purge_expired_events() -> int:
    """The worker's periodic pass: purge the events past the retention."""
    count = purge_expired()
    if count:
        log.info("purged %d events older than %s", count, retention())
    return count


def init_app(app) -> None:
    """Declare the purge pass (started by the worker) and check the retention setting at
    start-up."""
    if retention(app.config).total_seconds() < 0:
        raise ValueError("HIREKIT_EVENT_RETENTION_DAYS must be 0 or more")
    periodic.declare_core(
        app, periodic.PeriodicJob(purge_expired_events, PURGE_QUEUE, "EVENT_PURGE_INTERVAL")
    )
