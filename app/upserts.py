"""Upsert by source id: `PUT /v1/<family>/by-source-id/{source_id}` creates (201) or replaces (200) the tenant's record with that source_id, one record however many clients push it at once.
The source id is the rest of the path, `/` included (`by-source-id/gh/jobs/42` or `by-source-id/gh%2Fjobs%2F42`).

Concurrent upserts of one new source id are serialized before the look-up: SQLite's transactions already begin
IMMEDIATE (one writer at a time); PostgreSQL takes a transaction-scoped advisory lock on (table, tenant, source_id), so
only upserts of the same record wait for each other. The second one then finds the first one's record and replaces it.
The plain create (POST) keeps answering 409 for a source_id already used.
"""

from __future__ import annotations

from typing import Callable

import marshmallow as ma

from app.auth import current_tenant_id
from app.db import database, is_postgres
from app.errors import ValidationFailed
from app.records import TenantRecord, find_by_source_id

PATH = "/by-source-id/<path:source_id>"  # a source id may hold `/` (sent as is or as %2F)
MAX_SOURCE_ID_LENGTH = 255


def upsert_schema(create_schema: type[ma.Schema], name: str) -> type[ma.Schema]:
    """The create body without source_id (the path names it), same rules otherwise."""
    meta = type("Meta", (getattr(create_schema, "Meta", object),), {"exclude": ("source_id",)})
    return type(name, (create_schema,), {"Meta": meta, "__doc__": f"{create_schema.__doc__ or ''} (source_id is the path's)"})


def lock_source_id(model: type[TenantRecord], tenant_id: str, source_id: str) -> None:
    """Inside a transaction: wait for any other upsert of this record (PostgreSQL; SQLite writers are serialized)."""
    if is_postgres():
        database.execute_sql("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                             (f"upsert:{model._meta.table_name}:{tenant_id}:{source_id}",))


def upsert_by_source_id(model: type[TenantRecord], tenant_id: str, source_id: str, *,
                        create: Callable[[], TenantRecord],
                        replace: Callable[[TenantRecord], TenantRecord]) -> tuple[TenantRecord, bool]:
    """(record, created): `create()` when the tenant has no `model` with this source_id, else `replace(existing)`."""
    if not source_id or len(source_id) > MAX_SOURCE_ID_LENGTH or source_id != source_id.strip():
        raise ValidationFailed({"source_id": [f"Must be 1-{MAX_SOURCE_ID_LENGTH} characters without blank ends."]})
    with database.atomic():
        lock_source_id(model, tenant_id, source_id)
        existing = find_by_source_id(model, tenant_id, source_id)
        if existing is None:
            return create(), True
        return replace(existing), False


def register_upsert_route(blp, *, model: type[TenantRecord], record_schema: type[ma.Schema], body,
                          create: Callable[[str, dict], TenantRecord],
                          replace: Callable[[str, TenantRecord, dict], TenantRecord]) -> None:
    """Add `PUT <prefix>/by-source-id/{source_id}` to a family's blueprint. `body` loads the request (blp.arguments or
    app.resumes.json_or_multipart with the upsert schema); `create(tenant_id, values_with_source_id)` and
    `replace(tenant_id, record, values)` are the family's own writes."""
    label = model.label

    def put(self, values, source_id):
        tenant_id = current_tenant_id()
        record, created = upsert_by_source_id(
            model, tenant_id, source_id,
            create=lambda: create(tenant_id, {**values, "source_id": source_id}),
            replace=lambda existing: replace(tenant_id, existing, values))
        return record, 201 if created else 200

    put.__doc__ = (f"Create or replace the {label} with this source_id: the create body without source_id; "
                   f"201 when it was created, 200 when it replaced the stored one\n\nThe source_id is the rest of the path and "
                   f"may hold `/`, sent as is or percent-encoded (%2F); 1-{MAX_SOURCE_ID_LENGTH} characters.")
    put = body(put)
    put = blp.errors(409)(put)
    put = blp.alt_response(201, schema=record_schema, description=f"The {label} was created")(put)
    put = blp.response(200, record_schema, description=f"The {label} was replaced")(put)
    put = blp.doc(operationId=f"upsert_{label}_by_source_id")(put)
    blp.add_view(PATH, f"{label.title().replace(' ', '')}BySourceId", creates_missing=True, put=put)
