"""Tenant-scoped record helpers every family uses: fetch-or-404, unique source_id creates, partial
updates, filters, sequences."""

from __future__ import annotations

import peewee as pw

from app.data.db import TimestampedModel, database, new_uuid, parse_uuid
from app.data.prepared import Slots
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
        """owned_by for a list of whole records, the table's columns selected as `*` (peewee maps
        each column to its field by name): compiling a select list that names every column costs
        more CPU than reading a page of them."""
        return cls.select(pw.SQL("*")).where(cls.tenant == tenant_id)


class RecruiterColumns(pw.Model):
    """The recruiter an ATS names on a job or a candidate (recruiter_name, recruiter_email,
    recruiter_work_phone_no)."""

    recruiter_name = pw.CharField(max_length=255, null=True)
    recruiter_email = pw.CharField(max_length=320, null=True)
    recruiter_work_phone_no = pw.CharField(max_length=64, null=True)


def tenant_indexes(*, unique: tuple[str, ...] = (), lookups: tuple[str, ...] = ()) -> tuple:
    """Meta.indexes of a tenant's table: (tenant, created_at), which every list pages by
    (app.http.listing), then a unique (tenant, column) index for each of `unique` and a plain one
    for each of `lookups`."""
    return (
        (("tenant", "created_at"), False),
        *((("tenant", column), True) for column in unique),
        *((("tenant", column), False) for column in lookups),
    )


def select_rows(
    model, equal: dict, columns: tuple = (), *, limit: int | None = None, lock: str = ""
):
    """The rows of `model` whose fields equal the values of `equal` ({field: value}), with
    `columns` (every column when none) as model instances: `Model.raw` SQL written from the
    model's own table and column names.

    For the statements every write or read runs: building a SELECT with peewee's query builder
    costs more than running it (a 30-column read by id, a fifth of a GET by id's time in-process on
    SQLite; the look-ups of an application create, a sixth of its time). `lock` is a row lock
    clause (" FOR SHARE") for databases that have them."""
    mark = database.obj.param
    selected = ", ".join(quoted(field.column_name) for field in columns) or "*"
    where = " AND ".join(f"{quoted(field.column_name)} = {mark}" for field in equal)
    sql = f"SELECT {selected} FROM {quoted(model._meta.table_name)} WHERE {where}"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return model.raw(sql + lock, *(field.db_value(value) for field, value in equal.items()))


def first_row(model, equal: dict, columns: tuple = (), *, lock: str = ""):
    """select_rows' first row, or None."""
    return next(iter(select_rows(model, equal, columns, limit=1, lock=lock)), None)


def row_by_id(model, key):
    """The `model` row whose primary key is `key`, or None: what `model.get_or_none(model.id ==
    key)` gives, read through first_row (the call relay and the worker read a call's rows this way
    for every turn and completion)."""
    return first_row(model, {model._meta.primary_key: key})


def inserted(model, **values):
    """`model.create(**values)`: the record with its defaults, written by an INSERT of its columns
    as SQL text from the model's own names. A key the database assigns (an auto-increment) is left
    to it and not read back: the record answered has none.

    For the rows every application create writes (the application, its event, its call plan):
    peewee's query builder took longer to build such an INSERT than the database to run it."""
    record = model(**values)
    fields = [
        field for field in model._meta.sorted_fields if not getattr(field, "auto_increment", False)
    ]
    mark = database.obj.param
    columns = ", ".join(quoted(field.column_name) for field in fields)
    sql = (
        f"INSERT INTO {quoted(model._meta.table_name)} ({columns}) "
        f"VALUES ({', '.join([mark] * len(fields))})"
    )
    database.execute_sql(
        sql,
        [
            field.db_value(
                getattr(
                    record,
                    field.object_id_name if isinstance(field, pw.ForeignKeyField) else field.name,
                )
            )
            for field in fields
        ],
    )
    return record


def owned_row(model: type[TenantRecord], tenant_id: str, field: pw.Field, value):
    """The tenant's record whose unique `field` is `value`, or None (every GET by id and update
    by id, and every application write and upsert by source_id, reads its records here)."""
    return first_row(model, {model.tenant: tenant_id, field: value})


def get_owned(model: type[TenantRecord], tenant_id: str, record_id) -> TenantRecord:
    """The tenant's record with that id; another tenant's record, or a malformed id, is a 404."""
    ident = parse_uuid(record_id)
    record = owned_row(model, tenant_id, model.id, ident) if ident is not None else None
    if record is None:
        raise NotFound(model.label, record_id)
    return record


def get_or_404(model, record_id, *conditions, label: str | None = None):
    """The record with that id (a UUID string or value) meeting `conditions`; a malformed or unknown
    id is a 404 naming `label` (the model's own label by default). For lookups get_owned does not
    cover: no tenant, other models."""
    ident = parse_uuid(record_id)
    record = model.get_or_none(model.id == ident, *conditions) if ident is not None else None
    if record is None:
        raise NotFound(label or model.label, record_id)
    return record


def find_by_source_id(model, tenant_id: str, source_id: str):
    """The tenant's record with this source_id, or None."""
    return owned_row(model, tenant_id, model.source_id, source_id)


def create_record(model: type[TenantRecord], **values) -> TenantRecord:
    """`model.create(**values)`: the record with its defaults (id, timestamps), saved."""
    return model.create(**values)


def quoted(name: str) -> str:
    """An identifier as both PostgreSQL and SQLite read it."""
    return '"' + name.replace('"', '""') + '"'


def source_id_taken(model, source_id: str, existing_id) -> Conflict:
    """The 409 for a source_id already in use, naming the record that has it."""
    return Conflict(
        f"{model.label} with source_id {source_id!r} already exists", existing_id=existing_id
    )


def create_with_source_id(model, tenant_id: str, values: dict, **extra) -> TenantRecord:
    """Insert a record whose source_id is unique per tenant; a duplicate is 409 naming the existing
    id."""
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
    """AND of equality filters for the non-empty values; names in case_insensitive compare
    lower-cased."""
    sent = sent_filters(filters)
    return where_equal(query, model, Slots.inline(sent), sent, case_insensitive=case_insensitive)


def sent_filters(filters: dict) -> dict:
    """The filters given a value: one left empty filters nothing."""
    return {name: value for name, value in filters.items() if value is not None}


def where_equal(query, model, slots: Slots, names, *, case_insensitive=()):
    """AND of `model.<name> = value` for each of `names` present in `slots` (app.data.prepared);
    names in case_insensitive compare lower-cased."""
    for name in names:
        if name not in slots:
            continue
        column = getattr(model, name)
        if name in case_insensitive:
            query = query.where(pw.fn.LOWER(column) == slots.lowered(name))
        else:
            query = query.where(column == slots.value(name, column))
    return query


def row_for_update(model, key_field, key, **defaults):
    """Inside a transaction: the row whose `key_field` (unique) is `key`, inserted with `defaults`
    when missing, and locked until the transaction ends, so that concurrent
    get-or-create-then-change writers make one row and lose no change. SQLite's transactions already
    hold the database's write lock; PostgreSQL locks the row."""
    model.insert({key_field: key, **defaults}).on_conflict_ignore().execute()
    query = model.select().where(key_field == key)
    return (query.for_update() if database.for_update else query).get()


def next_in_sequence(tenant_id: str, name: str) -> int:
    """The tenant's next number in sequence `name` (1, 2, ...), safe under concurrent writers."""
    return reserve_in_sequence(tenant_id, name, 1)[0]


def reserve_in_sequence(tenant_id: str, name: str, count: int) -> range:
    """The tenant's next `count` numbers in sequence `name`, taken at once (a batch of new records),
    safe under concurrent writers: one statement creates or advances the counter row, which stays
    locked until the caller's transaction ends."""
    table, mark = quoted(Counter._meta.table_name), database.obj.param
    sql = (
        f'INSERT INTO {table} ("tenant_id", "name", "value") VALUES ({mark}, {mark}, {mark}) '
        f'ON CONFLICT ("tenant_id", "name") DO UPDATE SET "value" = {table}."value" + '
        'excluded."value" '
        'RETURNING "value"'
    )
    # all: SQLite ends the statement
    ((last,),) = database.execute_sql(sql, (tenant_id, name, count)).fetchall()
    return range(last - count + 1, last + 1)
