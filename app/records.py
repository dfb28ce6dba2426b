"""Tenant-scoped record helpers every family uses: fetch-or-404, unique source_id creates, partial updates, filters, sequences."""

from __future__ import annotations

import peewee as pw

from app.db import TimestampedModel, database, new_uuid, parse_uuid
from app.errors import Conflict, NotFound
from app.tenancy import Counter, Tenant


class TenantRecord(TimestampedModel):
    """A /v1 record: UUID id, owned by one tenant, timestamps."""

    id = pw.UUIDField(primary_key=True, default=new_uuid)
    tenant = pw.ForeignKeyField(Tenant, on_delete="CASCADE", column_name="tenant_id", index=True)

    # Human name used in messages ("job 123 not found")
    label = "record"

    @classmethod
    def owned_by(cls, tenant_id: str):
        return cls.select().where(cls.tenant == tenant_id)


def get_owned(model: type[TenantRecord], tenant_id: str, record_id) -> TenantRecord:
    """The tenant's record with that id; another tenant's record, or a malformed id, is a 404."""
    return instance_from_row(model, get_owned_row(model, tenant_id, record_id))


def get_owned_row(model: type[TenantRecord], tenant_id: str, record_id) -> tuple:
    """The raw row (the columns of `model._meta.sorted_fields`, as the driver returns them) behind `get_owned`."""
    ident = parse_uuid(record_id)
    if ident is None:
        raise NotFound(model.label, record_id)
    params = (model.tenant.db_value(tenant_id), model.id.db_value(ident))
    sql = _owned_record_sql(model)
    if hasattr(database.obj, "execute_prepared"):
        cursor = database.obj.execute_prepared(f"hk_owned_{model._meta.table_name}", sql, params)
    else:
        cursor = database.execute_sql(sql, params)
    row = cursor.fetchone()
    if row is None:
        raise NotFound(model.label, record_id)
    return row


def instance_from_row(model, row):
    """Build the model instance as peewee would for `select()` (same column order), without re-resolving columns."""
    instance = model(__no_default__=1)
    instance.__data__ = {field.name: field.python_value(value) for field, value in zip(model._meta.sorted_fields, row)}
    return instance


_compiled_sql: dict[tuple, str] = {}


def _owned_record_sql(model) -> str:
    """The by-id SELECT compiled once per model and database: peewee's query building costs more than the query."""
    key = (model, id(database.obj))
    sql = _compiled_sql.get(key)
    if sql is None:
        placeholder = new_uuid()
        sql, _ = model.owned_by("x").where(model.id == placeholder).limit(1).sql()
        _compiled_sql[key] = sql = sql.rsplit(" LIMIT ", 1)[0] + " LIMIT 1"
    return sql


def find_by_source_id(model, tenant_id: str, source_id: str):
    return model.owned_by(tenant_id).where(model.source_id == source_id).first()


def source_id_taken(model, source_id: str, existing_id) -> Conflict:
    """The 409 for a source_id already in use, naming the record that has it."""
    return Conflict(f"{model.label} with source_id {source_id!r} already exists", existing_id=existing_id)


def create_with_source_id(model, tenant_id: str, values: dict, **extra) -> TenantRecord:
    """Insert a record whose source_id is unique per tenant; a duplicate is 409 naming the existing id."""
    existing = find_by_source_id(model, tenant_id, values["source_id"])
    if existing is not None:
        raise source_id_taken(model, values["source_id"], existing.id)
    try:
        with database.atomic():
            return model.create(tenant=tenant_id, **values, **extra)
    except pw.IntegrityError:
        existing = find_by_source_id(model, tenant_id, values["source_id"])
        if existing is None:
            raise
        raise source_id_taken(model, values["source_id"], existing.id) from None


def apply_changes(record: TimestampedModel, values: dict) -> TimestampedModel:
    """Set the given fields and save; fields not given are left alone (PATCH)."""
    for name, value in values.items():
        setattr(record, name, value)
    record.save()
    return record


def apply_filters(query, model, filters: dict, *, case_insensitive=()):
    """AND of equality filters for the non-empty values; names in case_insensitive compare lower-cased."""
    for name, value in filters.items():
        if value is None:
            continue
        column = getattr(model, name)
        if name in case_insensitive:
            query = query.where(pw.fn.LOWER(column) == str(value).lower())
        else:
            query = query.where(column == value)
    return query


def next_in_sequence(tenant_id: str, name: str) -> int:
    """The tenant's next number in sequence `name` (1, 2, ...), safe under concurrent writers."""
    with database.atomic():
        Counter.insert(tenant=tenant_id, name=name, value=0).on_conflict_ignore().execute()
        Counter.update(value=Counter.value + 1).where((Counter.tenant == tenant_id) & (Counter.name == name)).execute()
        return Counter.select(Counter.value).where((Counter.tenant == tenant_id) & (Counter.name == name)).scalar()

