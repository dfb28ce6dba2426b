"""Tenant-scoped record helpers every family uses: fetch-or-404, unique source_id creates, partial updates, filters, sequences."""

from __future__ import annotations

import peewee as pw

from app.data.db import TimestampedModel, database, is_postgres, new_uuid, parse_uuid
from app.errors import Conflict, NotFound
from app.data.tenancy import Counter, Tenant


class TenantRecord(TimestampedModel):
    """A /v1 record: UUID id, owned by one tenant, timestamps."""

    id = pw.UUIDField(primary_key=True, default=new_uuid)
    tenant = pw.ForeignKeyField(Tenant, on_delete="CASCADE", column_name="tenant_id", index=True)

    # Human name used in messages ("job 123 not found")
    label = "record"

    @classmethod
    def owned_by(cls, tenant_id: str):
        return cls.select().where(cls.tenant == tenant_id)

    @classmethod
    def owned_rows(cls, tenant_id: str):
        """owned_by for a list of whole records, the table's columns selected as `*` (peewee maps each column to its
        field by name): compiling a select list that names every column costs more CPU than reading a page of them."""
        return cls.select(pw.SQL("*")).where(cls.tenant == tenant_id)


class RecruiterColumns(pw.Model):
    """The recruiter an ATS names on a job (SPEC 2.1) or a candidate (2.4's update sample)."""

    recruiter_name = pw.CharField(max_length=255, null=True)
    recruiter_email = pw.CharField(max_length=320, null=True)
    recruiter_work_phone_no = pw.CharField(max_length=64, null=True)


def tenant_indexes(*, unique: tuple[str, ...] = (), lookups: tuple[str, ...] = ()) -> tuple:
    """Meta.indexes of a tenant's table: (tenant, created_at), which every list pages by (app.http.listing), then a unique
    (tenant, column) index for each of `unique` and a plain one for each of `lookups`."""
    return ((("tenant", "created_at"), False),
            *((("tenant", column), True) for column in unique),
            *((("tenant", column), False) for column in lookups))


def get_owned(model: type[TenantRecord], tenant_id: str, record_id) -> TenantRecord:
    """The tenant's record with that id; another tenant's record, or a malformed id, is a 404."""
    return instance_from_row(model, get_owned_row(model, tenant_id, record_id))


def get_or_404(model, record_id, *conditions, label: str | None = None):
    """The record with that id (a UUID string or value) meeting `conditions`; a malformed or unknown id is a 404 naming
    `label` (the model's own label by default). For lookups get_owned does not cover: no tenant, other models."""
    ident = parse_uuid(record_id)
    record = model.get_or_none(model.id == ident, *conditions) if ident is not None else None
    if record is None:
        raise NotFound(label or model.label, record_id)
    return record


def get_owned_row(model: type[TenantRecord], tenant_id: str, record_id) -> tuple:
    """The raw row (the columns of `model._meta.sorted_fields`, as the driver returns them) behind `get_owned`."""
    return _fetch_owned(model, tenant_id, record_id, ROW)


def get_owned_version(model: type[TenantRecord], tenant_id: str, record_id) -> tuple[object, tuple | None]:
    """(version, row): a hashable value equal for two reads exactly when the stored row is equal, and the row when
    reading the version gave it. On PostgreSQL the version is the row's text form, one column whose client-side cost
    is a third of the typed columns', and the row is None (`get_owned_versioned_row` reads both); elsewhere the
    version is the row itself."""
    if not _reads_row_text():
        row = get_owned_row(model, tenant_id, record_id)
        return row, row
    return _fetch_owned(model, tenant_id, record_id, VERSION)[0], None


def get_owned_versioned_row(model: type[TenantRecord], tenant_id: str, record_id) -> tuple[object, tuple]:
    """The version (as `get_owned_version` answers it) and the row, read together in one statement."""
    if not _reads_row_text():  # the version is the row: one read gives both
        return get_owned_version(model, tenant_id, record_id)
    both = _fetch_owned(model, tenant_id, record_id, VERSIONED_ROW)
    return both[0], both[1:]


def instance_from_row(model, row, fields=None):
    """Build the model instance as peewee would for `select()` (same column order), without re-resolving columns.
    `fields` gives each column's field when the row has another order (None for a column the model does not declare)."""
    instance = model(__no_default__=1)
    instance.__data__ = {field.name: field.python_value(value)
                         for field, value in zip(fields or model._meta.sorted_fields, row) if field is not None}
    return instance


ROW, VERSION, VERSIONED_ROW = "row", "version", "versioned_row"


def _reads_row_text() -> bool:
    return is_postgres()


def _fetch_owned(model, tenant_id: str, record_id, kind: str) -> tuple:
    ident = parse_uuid(record_id)
    if ident is None:
        raise NotFound(model.label, record_id)
    params = (model.tenant.db_value(tenant_id), model.id.db_value(ident))
    sql = _owned_record_sql(model, kind)
    if hasattr(database.obj, "execute_prepared"):
        cursor = database.obj.execute_prepared(f"hk_owned_{kind}_{model._meta.table_name}", sql, params)
    else:
        cursor = database.execute_sql(sql, params)
    row = cursor.fetchone()
    if row is None:
        raise NotFound(model.label, record_id)
    return row


_compiled_sql: dict[tuple, str] = {}


def _owned_record_sql(model, kind: str) -> str:
    """The by-id SELECT compiled once per model, database and kind: peewee's query building costs more than the query.
    The version is PostgreSQL's text form of the whole row (`"t1"::text`, t1 being peewee's alias of the table)."""
    key = (model, id(database.obj), kind)
    sql = _compiled_sql.get(key)
    if sql is None:
        columns = {ROW: [], VERSION: [pw.SQL('"t1"::text')], VERSIONED_ROW: [pw.SQL('"t1"::text')]}[kind]
        if kind != VERSION:
            columns += model._meta.sorted_fields
        sql, _ = model.select(*columns).where((model.tenant == "x") & (model.id == new_uuid())).limit(1).sql()
        _compiled_sql[key] = sql = sql.rsplit(" LIMIT ", 1)[0] + " LIMIT 1"
    return sql


def find_by_source_id(model, tenant_id: str, source_id: str):
    """The tenant's record with this source_id, or None (its SELECT compiled once per model and database)."""
    key = (model, id(database.obj), "by_source_id")
    sql = _compiled_sql.get(key)
    if sql is None:
        query = model.select().where((model.tenant == "x") & (model.source_id == "y")).limit(1)
        _compiled_sql[key] = sql = query.sql()[0].rsplit(" LIMIT ", 1)[0] + " LIMIT 1"
    row = database.execute_sql(sql, (model.tenant.db_value(tenant_id), source_id)).fetchone()
    return None if row is None else instance_from_row(model, row)


def create_record(model: type[TenantRecord], **values) -> TenantRecord:
    """`model.create(**values)` with its INSERT compiled once per model, column set and database instead of built by
    peewee on every call (about half a create's CPU): the record gets its defaults (id, timestamps) as peewee gives
    them, and is returned saved."""
    record = model(**values)
    data = record.__data__
    names = tuple(data)
    key = (model, id(database.obj), "insert", names)
    sql = _compiled_sql.get(key)
    if sql is None:
        fields = model._meta.fields
        marks = ", ".join([database.obj.param] * len(names))
        _compiled_sql[key] = sql = (f"INSERT INTO {quoted(model._meta.table_name)} "
                                    f"({', '.join(quoted(fields[name].column_name) for name in names)}) VALUES ({marks})")
    fields = model._meta.fields
    database.execute_sql(sql, tuple(fields[name].db_value(data[name]) for name in names))
    record._dirty.clear()
    return record


def quoted(name: str) -> str:
    """An identifier as both PostgreSQL and SQLite read it."""
    return '"' + name.replace('"', '""') + '"'


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
            return create_record(model, tenant=tenant_id, **values, **extra)
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


def row_for_update(model, key_field, key, **defaults):
    """Inside a transaction: the row whose `key_field` (unique) is `key`, inserted with `defaults` when missing, and
    locked until the transaction ends, so that concurrent get-or-create-then-change writers make one row and lose no
    change. SQLite's transactions already hold the database's write lock; PostgreSQL locks the row."""
    model.insert({key_field: key, **defaults}).on_conflict_ignore().execute()
    query = model.select().where(key_field == key)
    return (query.for_update() if database.for_update else query).get()


def next_in_sequence(tenant_id: str, name: str) -> int:
    """The tenant's next number in sequence `name` (1, 2, ...), safe under concurrent writers."""
    return reserve_in_sequence(tenant_id, name, 1)[0]


def reserve_in_sequence(tenant_id: str, name: str, count: int) -> range:
    """The tenant's next `count` numbers in sequence `name`, taken at once (a batch of new records), safe under
    concurrent writers: one statement creates or advances the counter row, which stays locked until the caller's
    transaction ends."""
    key = (Counter, id(database.obj), "advance")
    sql = _compiled_sql.get(key)
    if sql is None:
        table, mark = quoted(Counter._meta.table_name), database.obj.param
        _compiled_sql[key] = sql = (f'INSERT INTO {table} ("tenant_id", "name", "value") VALUES ({mark}, {mark}, {mark}) '
                                    f'ON CONFLICT ("tenant_id", "name") DO UPDATE SET "value" = {table}."value" + '
                                    'excluded."value" RETURNING "value"')
    ((last,),) = database.execute_sql(sql, (tenant_id, name, count)).fetchall()  # all: SQLite ends the statement
    return range(last - count + 1, last + 1)
