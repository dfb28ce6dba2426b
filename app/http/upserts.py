"""Upsert by source id: `PUT /v1/<family>/by-source-id/{source_id}` creates (201) or replaces (200)
the tenant's record with that source_id, one record however many clients push it at once. The source
id is the rest of the path, `/` included (`by-source-id/gh/jobs/42` or
`by-source-id/gh%2Fjobs%2F42`).

Concurrent upserts of one new source id are serialized before the look-up: SQLite's transactions
already begin IMMEDIATE (one writer at a time); PostgreSQL takes a transaction-scoped advisory lock
on (table, tenant, source_id), so only upserts of the same record wait for each other. The second
one then finds the first one's record and replaces it. The plain create (POST) keeps answering 409
for a source_id already used.

A family describes its upsert once (SourceIdUpsert); the same description serves the batch of
app.http.batch_upserts (`PUT /v1/<family>/by-source-id`), whose items take the same locks. The
family's routes module declares the route: a MethodView on PATH whose `put` answers
SourceIdUpsert.answer, documented by upsert_doc.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import marshmallow as ma

from app.data import statements
from app.data.db import database
from app.errors import ValidationFailed
from app.data.records import TenantRecord, find_by_source_id
from app.data.row_upserts import RowUpsert, source_id_lock_key

PATH = "/by-source-id/<path:source_id>"  # a source id may hold `/` (sent as is or as %2F)
MAX_SOURCE_ID_LENGTH = 255


def upsert_schema(create_schema: type[ma.Schema], name: str) -> type[ma.Schema]:
    """The create body without source_id (the path names it), same rules otherwise."""
    meta = type("Meta", (getattr(create_schema, "Meta", object),), {"exclude": ("source_id",)})
    return type(
        name,
        (create_schema,),
        {"Meta": meta, "__doc__": f"{create_schema.__doc__ or ''} (source_id is the path's)"},
    )


def lock_source_id(model: type[TenantRecord], tenant_id: str, source_id: str) -> None:
    """Inside a transaction: wait for any other upsert of this record (PostgreSQL; SQLite writers
    are serialized)."""
    statements.lock_for_transaction(source_id_lock_key(model, tenant_id, source_id))


def upsert_by_source_id(
    model: type[TenantRecord],
    tenant_id: str,
    source_id: str,
    *,
    create: Callable[[], TenantRecord],
    replace: Callable[[TenantRecord], TenantRecord],
) -> tuple[TenantRecord, bool]:
    """(record, created): `create()` when the tenant has no `model` with this source_id, else
    `replace(existing)`."""
    if not source_id or len(source_id) > MAX_SOURCE_ID_LENGTH or source_id != source_id.strip():
        raise ValidationFailed(
            {"source_id": [f"Must be 1-{MAX_SOURCE_ID_LENGTH} characters without blank ends."]}
        )
    with database.atomic():
        lock_source_id(model, tenant_id, source_id)
        existing = find_by_source_id(model, tenant_id, source_id)
        if existing is None:
            return create(), True
        return replace(existing), False


@dataclass(frozen=True)
class SourceIdUpsert:
    """A family's upsert, alone or in a batch (app.http.batch_upserts): its table, its record and
    create schemas, and its own writes: `create(tenant_id, values_with_source_id)` and
    `replace(tenant_id, record, values)`. `rows` is set for a family whose write is its row alone
    (jobs): a batch of it is written with multi-row statements (app.data.row_upserts)."""

    model: type[TenantRecord]
    record_schema: type[ma.Schema]
    create_schema: type[ma.Schema]
    create: Callable[[str, dict], TenantRecord]
    replace: Callable[[str, TenantRecord, dict], TenantRecord]
    rows: RowUpsert | None = None

    def upsert(self, tenant_id: str, source_id: str, values: dict) -> tuple[TenantRecord, bool]:
        """(record, created) for the body `values` (without source_id) of the record with this
        source_id."""
        return upsert_by_source_id(
            self.model,
            tenant_id,
            source_id,
            create=lambda: self.create(tenant_id, {**values, "source_id": source_id}),
            replace=lambda existing: self.replace(tenant_id, existing, values),
        )

    def answer(self, tenant_id: str, source_id: str, values: dict) -> tuple[TenantRecord, int]:
        """What the upsert route answers: the record, 201 when it was created, 200 when replaced."""
        record, created = self.upsert(tenant_id, source_id, values)
        return record, 201 if created else 200


def upsert_doc(label: str) -> dict:
    """The summary and description of a family's `PUT <prefix>/by-source-id/{source_id}`, for its
    `blp.doc`: the same words for every family, with its label."""
    return {
        "summary": f"Create or replace the {label} with this source_id: the create body without "
        "source_id; 201 when it was created, 200 when it replaced the stored one",
        "description": "The source_id is the rest of the path and may hold `/`, sent as is or "
        f"percent-encoded (%2F); 1-{MAX_SOURCE_ID_LENGTH} characters.",
    }
