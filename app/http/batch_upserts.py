"""Batch upserts for initial syncs: `PUT /v1/<family>/by-source-id` with up to MAX_BATCH_ITEMS
create bodies, each created or replaced as app.http.upserts' single upsert does, in one transaction
per request.

- Every item is validated alone by the family's create schema (source_id included); an invalid item
  is answered in its place (status 422 and the one error body's `error`) and does not stop the
  others. A source_id sent twice in one batch is refused on its later items: which of the two bodies
  should win is the client's call.
- `"atomic": true`: any refused item (invalid, or refused when written, e.g. an application naming
  an unknown candidate) fails the whole request with one 422 naming the items
  (`items.<index>.<field>`), and nothing is written.
- Valid items are written in one transaction: item by item in a savepoint each, through the family's
  own create and replace (events and webhooks per item, after the commit, as for single writes); or,
  for a family whose write is its row alone (jobs), with app.data.row_upserts' multi-row statements.
- Cost: the body limit (MAX_CONTENT_LENGTH) and MAX_BATCH_ITEMS bound a request; it counts against
  the rate limit as its items sent one by one would (app.security.limits.count_items_beyond_first),
  refused whole (429) past it.
- The answer (200) lists every item's outcome in request order: `status` (201 created, 200 replaced,
  or the error's status), `source_id`, `id` of the record written, or `error`; and how many were
  created, replaced and failed. It holds no records: an item's outcome is under ITEM_ANSWER_BYTES,
  and the whole answer is kept for an Idempotency-Key's replay up to MAX_BATCH_ITEMS of them (past
  the cap other answers meet), so a retried batch always gets every item's outcome back.
- The family's routes module declares the route: a MethodView on PATH whose `put` takes
  batch_body_schema's body and answers answer_batch, documented by batch_doc.
"""

from __future__ import annotations

from dataclasses import dataclass

import marshmallow as ma
import peewee as pw
from flask import jsonify

from app.http import idempotency
from app.security import limits
from app.http.api import ErrorDetailSchema, Schema
from app.security.auth import current_tenant_id
from app.data.db import database
from app.errors import ApiError, ExistingRecordConflict, ValidationFailed, error_detail
from app.http.fields import StrictBoolean, StrictSchema
from app.data.row_upserts import upsert_rows
from app.http.upserts import SourceIdUpsert

MAX_BATCH_ITEMS = 500
# The most one item's outcome takes in the answer: status, a source_id of up to 255 characters (6
# bytes each when JSON escapes them), an id, or an error naming the item's fields.
ITEM_ANSWER_BYTES = 2 * 1024
PATH = "/by-source-id"
ANSWER_DESCRIPTION = "Each item's outcome, in request order"  # the 200 answer of every batch route


@dataclass(frozen=True)
class ItemOutcome:
    """What happened to one item: written (status 201 or 200, the record's id) or refused (the
    error)."""

    status: int
    source_id: str | None
    id: str | None = None
    error: ApiError | None = None

    def answer(self) -> dict:
        if self.error is None:
            return {"status": self.status, "source_id": self.source_id, "id": self.id}
        error = self.error
        return {
            "status": self.status,
            "source_id": self.source_id,
            "error": error_detail(
                error.status, error.message, type=error.type, fields=error.fields, extra=error.extra
            ),
        }


def refused(error: ApiError, source_id) -> ItemOutcome:
    return ItemOutcome(error.status, source_id if isinstance(source_id, str) else None, error=error)


def upsert_batch(upsert: SourceIdUpsert, tenant_id: str, items: list, *, atomic: bool) -> dict:
    """Create or replace the tenant's record of each item; the answer listing each item's outcome in
    order. Atomic: ApiError 422 naming every refused item, and nothing written."""
    outcomes: list[ItemOutcome | None] = [None] * len(items)
    valid = validate_items(upsert.create_schema(), items, outcomes)
    if atomic and len(valid) < len(items):
        raise atomic_refusal(outcomes, len(items))
    with database.atomic():
        write_items(upsert, tenant_id, valid, outcomes)
        if atomic and any(outcome.error for outcome in outcomes):
            raise atomic_refusal(outcomes, len(items))  # leaving the block rolls every item back
    return batch_answer(outcomes)


def validate_items(schema: ma.Schema, items: list, outcomes: list) -> list[tuple[int, dict]]:
    """(index, loaded body) of each valid item; each refused one gets its outcome in `outcomes`."""
    valid, first_at = [], {}
    for index, item in enumerate(items):
        source_id = item.get("source_id") if isinstance(item, dict) else None
        if not isinstance(item, dict):
            outcomes[index] = refused(
                ValidationFailed({"_schema": ["An item must be a JSON object."]}), None
            )
            continue
        try:
            values = schema.load(item)
        except ma.ValidationError as error:
            outcomes[index] = refused(ValidationFailed.of(error), source_id)
            continue
        source_id = values["source_id"]
        if source_id in first_at:
            outcomes[index] = refused(
                ValidationFailed(
                    {
                        "source_id": [
                            f"Also sent by item {first_at[source_id]} of this batch: send each "
                            "source_id once per batch."
                        ]
                    }
                ),
                source_id,
            )
            continue
        first_at[source_id] = index
        valid.append((index, values))
    return valid


def write_items(
    upsert: SourceIdUpsert, tenant_id: str, valid: list[tuple[int, dict]], outcomes: list
) -> None:
    """Inside the batch's transaction: write the valid items, each outcome in its place."""
    if not valid:
        return
    if upsert.rows is not None:
        written = upsert_rows(upsert.rows, tenant_id, [values for _, values in valid])
        for (index, values), (record_id, created) in zip(valid, written):
            outcomes[index] = ItemOutcome(201 if created else 200, values["source_id"], record_id)
        return
    for index, values in valid:
        body = dict(values)
        source_id = body.pop("source_id")
        try:
            # its own savepoint: a refusal undoes only it
            record, created = upsert.upsert(tenant_id, source_id, body)
        except ApiError as error:
            outcomes[index] = refused(error, source_id)
        except ma.ValidationError as error:
            outcomes[index] = refused(ValidationFailed.of(error), source_id)
        except pw.IntegrityError:
            outcomes[index] = refused(ExistingRecordConflict(), source_id)
        else:
            outcomes[index] = ItemOutcome(201 if created else 200, source_id, str(record.id))


def atomic_refusal(outcomes: list, total: int) -> ValidationFailed:
    """The one 422 of an atomic batch: every refused item's messages under items.<index>."""
    failed = {
        index: outcome
        for index, outcome in enumerate(outcomes)
        if outcome is not None and outcome.error
    }
    fields = {
        "items": {
            index: outcome.error.fields or {"_schema": [outcome.error.message]}
            for index, outcome in failed.items()
        }
    }
    listed = ", ".join(str(index) for index in list(failed)[:20]) + (
        " ..." if len(failed) > 20 else ""
    )
    return ValidationFailed(
        fields,
        f"{len(failed)} of {total} items were refused (items {listed}); the batch is atomic, "
        "so nothing was written.",
    )


def batch_answer(outcomes: list[ItemOutcome]) -> dict:
    created = sum(1 for outcome in outcomes if outcome.status == 201)
    replaced = sum(1 for outcome in outcomes if outcome.status == 200)
    return {
        "items": [outcome.answer() for outcome in outcomes],
        "created": created,
        "replaced": replaced,
        "failed": len(outcomes) - created - replaced,
    }


# ---- the request body, the answer and the route's words ------------------------------------------


class BatchItems(ma.fields.List):
    """The items as sent (each one validated on its own later), 1 to MAX_BATCH_ITEMS JSON objects;
    documented as a list of the family's create bodies."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, list):
            raise self.make_error("invalid")
        if not 1 <= len(value) <= MAX_BATCH_ITEMS:
            raise ma.ValidationError(
                f"Send 1 to {MAX_BATCH_ITEMS} items per batch (got {len(value)})."
            )
        return value


ATOMIC_DESCRIPTION = (
    "false (default): each item is written or refused on its own. true: any refused item fails the "
    "whole request (422 naming the items as items.<index>.<field>) and nothing is written."
)


def batch_body_schema(create_schema: type[ma.Schema], name: str) -> type[ma.Schema]:
    """The batch body of a family: its create bodies as items, and atomic."""
    items = BatchItems(
        ma.fields.Nested(create_schema),
        required=True,
        validate=ma.validate.Length(1, MAX_BATCH_ITEMS),
        metadata={
            "description": f"1 to {MAX_BATCH_ITEMS} create bodies, source_id included; each is "
            "created or replaced as PUT .../by-source-id/{source_id} would"
        },
    )
    atomic = StrictBoolean(load_default=False, metadata={"description": ATOMIC_DESCRIPTION})
    return type(
        name,
        (StrictSchema,),
        {"items": items, "atomic": atomic, "__doc__": "A batch of upserts by source_id"},
    )


class BatchItemSchema(Schema):
    """One item's outcome, in the place of the item in the request."""

    status = ma.fields.Integer(
        required=True,
        metadata={
            "description": "201 created, 200 replaced, else the error's "
            "status (422 invalid, 409 conflict, ...)"
        },
    )
    source_id = ma.fields.String(allow_none=True, required=True)
    id = ma.fields.String(metadata={"description": "The record's id (written items)"})
    error = ma.fields.Nested(
        ErrorDetailSchema,
        metadata={"description": "Why the item was refused (as the one error body's error)"},
    )


class BatchAnswerSchema(Schema):
    """A batch's outcome: each item's in request order, and the counts."""

    items = ma.fields.List(ma.fields.Nested(BatchItemSchema), required=True)
    created = ma.fields.Integer(required=True)
    replaced = ma.fields.Integer(required=True)
    failed = ma.fields.Integer(required=True)


def charge_items(count: int) -> None:
    """A batch costs its items' requests against the rate limit: 429 for the whole batch past it."""
    hit = limits.count_items_beyond_first(count)
    if hit is not None and not hit.allowed:
        raise ApiError(
            429,
            f"Rate limit exceeded ({hit.limit}): this batch counts as its {count} items. Higher "
            "limits "
            "are available on request.",
            headers={"Retry-After": str(hit.retry_after)},
        )


def run_batch(upsert: SourceIdUpsert, tenant_id: str, body: dict) -> dict:
    """A loaded batch body (REST or an MCP tool's arguments) charged against the rate limit, then
    written."""
    charge_items(len(body["items"]))
    return upsert_batch(upsert, tenant_id, body["items"], atomic=body["atomic"])


def answer_batch(upsert: SourceIdUpsert, body: dict):
    """What the batch route answers for its loaded body: the outcomes, kept for an Idempotency-Key's
    replay whatever their size (up to MAX_BATCH_ITEMS items)."""
    # answered as built: batch_answer makes BatchAnswerSchema's shape, and dumping 500 items
    # through it again would cost about a tenth of the batch
    idempotency.store_answers_up_to(MAX_BATCH_ITEMS * ITEM_ANSWER_BYTES)
    return jsonify(run_batch(upsert, current_tenant_id(), body))


def batch_doc(plural: str) -> dict:
    """The summary and description of a family's `PUT <prefix>/by-source-id` (`plural`: jobs),
    for its `blp.doc`: the same words for every family."""
    return {
        "summary": f"Create or replace up to {MAX_BATCH_ITEMS} {plural} by source_id (a batch, for "
        "initial syncs)",
        "description": (
            "Each item is a create body with its source_id, created (201) or replaced (200) as "
            "PUT /by-source-id/{source_id} would, all in one transaction; the answer lists each "
            "item's status, source_id and id, or its error (the one error body's `error`), in "
            "request order. A refused item does not stop the others unless `atomic` is true: then "
            "any refused item fails the whole request (422 naming `items.<index>.<field>`) and "
            "nothing is written. A source_id sent twice in one batch is refused on its later item. "
            f"1 to {MAX_BATCH_ITEMS} items (422 otherwise), JSON only, within the body limit "
            "(413); the batch counts against the rate limit as its items would (429 for the whole "
            "batch past it, nothing written). An Idempotency-Key applies to the whole batch."
        ),
    }
