"""Every /v1 list's two modes: pages (page + size, with totals) and sync cursors (signed
(updated_at, id) keysets).

docs/integrating.md describes both to clients (sections Jobs, and Event feed and incremental sync).
A cursor is opaque and signed with the server secret (app.security.tokens, kind "list-cursor"); it
carries the last row's (updated_at, id) and a digest of the tenant, the list and its filters, so a
cursor of another tenant or list is 400. It never expires (a sync paused for any time resumes where
it stopped) and stops verifying once the key that signed it leaves HIREKIT_SECRET_KEY's list.
Times are shown and compared at the same precision, the millisecond (shown_instant, within_window).
The next page is `(updated_at, id) > (last)` in that order, never an OFFSET: a row changed during a
walk gets a later updated_at, so it moves past the walker's position and is read again later instead
of being skipped.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass

import marshmallow as ma

from app.data import row_counts, tombstones
from app.security import tokens
from app.errors import ApiError

CURSOR_KIND = "list-cursor"
WINDOW_ARGS = ("page", "size", "cursor", "updated_after", "updated_before")
WHOLE_LIST_CURSOR_SIZE = 100


class InvalidCursor(ApiError):
    def __init__(self):
        super().__init__(
            400,
            "cursor: not a cursor this server issued for this list (tampered, another tenant's, or "
            "of "
            "another list or filters); start again with cursor= (empty)",
            fields={"cursor": ["Not a valid cursor for this list."]},
            type="invalid_cursor",
        )


class ZonedInstant(ma.fields.AwareDateTime):
    """An ISO 8601 instant that must carry its zone (Z or an offset); loaded as naive UTC like every
    stored timestamp."""

    default_error_messages = {
        "invalid_awareness": "Must be an ISO 8601 date-time with a zone (Z or an offset)."
    }

    def _deserialize(self, value, attr, data, **kwargs):
        try:
            return (
                super()
                ._deserialize(value, attr, data, **kwargs)
                .astimezone(dt.timezone.utc)
                .replace(tzinfo=None)
            )
        except OverflowError:  # year 1 east of UTC, year 9999 west of it
            raise self.make_error("invalid", input=value, obj_type=self.OBJ_TYPE) from None


class SyncArgsSchema(ma.Schema):
    """What every /v1 list takes for incremental sync: the updated_at window and the cursor mode."""

    updated_after = ZonedInstant(
        metadata={
            "description": "Only records updated strictly after this instant (ISO 8601 "
            "with a zone), compared at the milliseconds answers show: "
            "the largest updated_at seen excludes every record seen",
            "example": "2026-11-23T08:00:00.000Z",
        }
    )
    updated_before = ZonedInstant(
        metadata={
            "description": "Only records updated strictly before this instant (ISO "
            "8601 with a zone), compared at the milliseconds answers "
            "show",
            "example": "2026-11-23T09:00:00.000Z",
        }
    )
    cursor = ma.fields.String(
        metadata={
            "description": "Cursor mode (instead of page): empty to start, then the previous "
            "answer's next_cursor. Walks "
            "by (updated_at, id), answers next_cursor (absent on the last page) and no totals; a "
            "record "
            "changed during the walk is seen again later, never skipped. A cursor never expires, "
            "is this "
            "tenant's and this list's only, and stops working when the server secret that signed "
            "it is "
            "rotated out. An unfiltered walk of candidates or applications also lists erased "
            "records as "
            "tombstones in the same order: {id, deleted: true, deleted_at, updated_at}."
        }
    )


def cursor_mode_excludes_page(data: dict, original_data) -> None:
    """page and cursor are two modes: sending both is 422; page is required unless cursor is
    sent."""
    # webargs passes a MultiDictProxy
    sent = original_data if isinstance(original_data, Mapping) else {}
    if "cursor" in sent and "page" in sent:
        raise ma.ValidationError(
            {"cursor": ["Send either page (page mode) or cursor (cursor mode), not both."]}
        )
    if "cursor" in data:
        data.pop("page", None)  # a default page (MCP tools) gives way to the cursor sent
    elif data.get("page") is None:
        raise ma.ValidationError({"page": ["Missing data for required field."]})


@dataclass(frozen=True)
class ListWindow:
    """The part of a list request that is not a filter: the mode and its position, and the
    updated_at window."""

    size: int
    page: int | None = None
    cursor: str | None = None
    updated_after: dt.datetime | None = None
    updated_before: dt.datetime | None = None

    @property
    def by_cursor(self) -> bool:
        return self.cursor is not None


def split_window(args: dict) -> tuple[ListWindow, dict]:
    """(window, filters) of a list's loaded arguments."""
    filters = {name: value for name, value in args.items() if name not in WINDOW_ARGS}
    return ListWindow(**{name: args[name] for name in WINDOW_ARGS if name in args}), filters


SHOWN_PRECISION = dt.timedelta(milliseconds=1)


def to_shown_precision(instant: dt.datetime) -> dt.datetime:
    """The instant cut to the milliseconds an answer shows (stored times keep microseconds)."""
    return instant.replace(microsecond=instant.microsecond - instant.microsecond % 1000)


def shown_instant(instant: dt.datetime) -> str:
    """A naive UTC instant as answers show it: ISO 8601 with milliseconds (cut, as
    to_shown_precision) and a Z."""
    if instant.tzinfo is not None:
        instant = instant.replace(tzinfo=None)
    return instant.isoformat(timespec="milliseconds") + "Z"


def within_window(query, model, window: ListWindow):
    """The query narrowed to the window's updated_at span, compared at the milliseconds answers
    show: a record is after `updated_after` when its shown updated_at is (so the largest updated_at
    seen excludes every record seen), and before `updated_before` when its shown updated_at is.
    Written as ranges on the stored value (index-friendly)."""
    if window.updated_after is not None:
        query = query.where(
            model.updated_at >= to_shown_precision(window.updated_after) + SHOWN_PRECISION
        )
    if window.updated_before is not None:
        query = query.where(model.updated_at < to_shown_precision(window.updated_before))
    return query


def scope_digest(tenant_id: str, list_name: str, filters: dict) -> str:
    """What a cursor is bound to: the tenant, the list (with its path ids) and its filters
    (updated_* included)."""
    text = json.dumps(
        [tenant_id, list_name, filters], sort_keys=True, default=str, separators=(",", ":")
    )
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def cursor_scope(tenant_id: str, list_name: str, window: ListWindow, filters: dict) -> str:
    return scope_digest(
        tenant_id,
        list_name,
        {**filters, "updated_after": window.updated_after, "updated_before": window.updated_before},
    )


def keyset_query(query, model, window: ListWindow, scope: str):
    """The next cursor page's query: after the cursor's position in (updated_at, id) order, one row
    more than size (to know whether another page follows). The bound is written `updated_at >= u AND
    (updated_at > u OR id > i)` so an index on (tenant, updated_at, id) serves it as a range on both
    databases."""
    query = (
        within_window(query, model, window)
        .order_by(model.updated_at, model.id)
        .limit(window.size + 1)
    )
    if window.cursor:
        last_updated_at, last_id = read_cursor(window.cursor, scope)
        query = query.where(
            (model.updated_at >= last_updated_at)
            & ((model.updated_at > last_updated_at) | (model.id > last_id))
        )
    return query


def read_cursor(cursor: str, scope: str) -> tuple[dt.datetime, str]:
    try:
        payload = tokens.verify(CURSOR_KIND, cursor, max_age=tokens.NEVER_EXPIRES)
        bound_scope, updated_at, record_id = payload
        if bound_scope != scope:
            raise InvalidCursor()
        return dt.datetime.fromisoformat(updated_at), str(record_id)
    except (tokens.InvalidToken, TypeError, ValueError):
        raise InvalidCursor() from None


def next_cursor(updated_at: dt.datetime, record_id, scope: str) -> str:
    return tokens.sign(CURSOR_KIND, [scope, updated_at.isoformat(), str(record_id)])


def cursor_body(items: list, *, size: int, last_position: tuple | None, scope: str) -> dict:
    """{data, size, next_cursor?}: `items` holds up to size + 1 rows; the extra one only says
    another page follows."""
    body = {"data": items[:size], "size": size}
    if len(items) > size and last_position is not None:
        body["next_cursor"] = next_cursor(*last_position, scope)
    return body


def known_total(
    model, window: ListWindow, *, tenant_id: str, list_name: str, filters: dict
) -> int | None:
    """Page mode's exact total when the database keeps it (app.data.row_counts: a counted list, no
    updated_at window and no filter its counts do not answer), else None: count the matching
    rows."""
    if window.updated_after is not None or window.updated_before is not None:
        return None
    return row_counts.known_total(list_name, model, tenant_id, filters)


def answer(
    query,
    window: ListWindow,
    *,
    tenant_id: str,
    list_name: str,
    filters: dict,
    order_by=None,
    counted=None,
    read=list,
) -> dict:
    """The list body for either mode, from a query of model instances (page mode in `order_by`, by
    default (created_at, id); cursor mode always by (updated_at, id)). `counted`, when given, is the
    cheaper query with the same rows that page mode's total counts (e.g. without joins that only add
    columns); lists whose totals the database keeps (app.data.row_counts) read them instead of
    counting. `read` turns the page's query into its rows (app.data.list_rows reads them as dicts
    without converting what needs no conversion)."""
    model = query.model
    if not window.by_cursor:
        return paginate(
            within_window(query, model, window),
            page=window.page,
            size=window.size,
            order_by=order_by,
            counted=None if counted is None else within_window(counted, model, window),
            total=known_total(
                model, window, tenant_id=tenant_id, list_name=list_name, filters=filters
            ),
            read=read,
        )
    scope = cursor_scope(tenant_id, list_name, window, filters)
    rows = read(keyset_query(query, model, window, scope))
    rows, positions = with_tombstones(
        rows,
        [position(row) for row in rows],
        window,
        scope,
        tenant_id=tenant_id,
        list_name=list_name,
        filters=filters,
    )
    last = positions[window.size - 1] if len(positions) > window.size else None
    return cursor_body(rows, size=window.size, last_position=last, scope=scope)


def position(row) -> tuple:
    """A row's (updated_at, id) in a cursor walk: a record's attributes, or a row read as a dict's
    keys."""
    if type(row) is dict:
        return row["updated_at"], row["id"]
    return row.updated_at, row.id


def with_tombstones(
    entries: list,
    positions: list[tuple],
    window: ListWindow,
    scope: str,
    *,
    tenant_id: str,
    list_name: str,
    filters: dict,
    shown=None,
) -> tuple[list, list]:
    """A cursor page's rows (up to size + 1, with their positions) merged with the list's tombstones
    past the same position (app.data.tombstones), cut to size + 1 again; `shown(tombstones)` gives
    what the tombstones are answered as."""
    if not tombstones.shown_in(list_name, filters):
        return entries, positions
    # the rows alone fill the page: a tombstone after its last row cannot be in it
    full = len(positions) > window.size
    stones = tombstones.after_position(
        tenant_id,
        list_name,
        position=read_cursor(window.cursor, scope) if window.cursor else None,
        updated_after=window.updated_after,
        updated_before=window.updated_before,
        limit=window.size + 1,
        until=positions[window.size][0] if full else None,
    )
    if not stones:
        return entries, positions
    entries, positions = tombstones.merged(
        entries, positions, stones, shown(stones) if shown else None
    )
    return entries[: window.size + 1], positions[: window.size + 1]


class WholeListArgsSchema(SyncArgsSchema):
    """A /v1 list without pages (a job's questions, the tenant's webhooks): the whole list, or
    cursor pages."""

    size = ma.fields.Integer(
        validate=ma.validate.Range(1, 100),
        metadata={
            "description": f"1-100, the page size in cursor mode (default {WHOLE_LIST_CURSOR_SIZE}"
            "); without a cursor the "
            "whole list is answered and size is ignored"
        },
    )


def answer_whole(
    query, args: dict, *, tenant_id: str, list_name: str, filters: dict, order_by
) -> dict:
    """{data} of the whole list in `order_by`, or in cursor mode {data, size, next_cursor?}
    (WholeListArgsSchema)."""
    window = ListWindow(
        size=args.get("size", WHOLE_LIST_CURSOR_SIZE),
        cursor=args.get("cursor"),
        updated_after=args.get("updated_after"),
        updated_before=args.get("updated_before"),
    )
    if window.by_cursor:
        return answer(query, window, tenant_id=tenant_id, list_name=list_name, filters=filters)
    return {"data": list(within_window(query, query.model, window).order_by(*order_by))}


def paginate(
    query,
    *,
    page: int,
    size: int,
    order_by=None,
    counted=None,
    total: int | None = None,
    read=list,
) -> dict:
    """A page of a peewee query in stable order (created_at, then id unless given), with its totals:
    `total` when known, else counted on `counted` when given (the same rows without what only adds
    columns), else on `query`; `read` turns the page's query into its rows."""
    if total is None:
        total = (query if counted is None else counted).count()
    items = read(page_query(query, page=page, size=size, order_by=order_by))
    return page_body(items, page=page, size=size, total=total)


def page_query(query, *, page: int, size: int, order_by=None):
    """The query of one page, in stable order (created_at, then id unless given)."""
    if order_by is None:
        order_by = (query.model.created_at, query.model.id)
    return query.order_by(*order_by).paginate(page, size)


def page_body(items: list, *, page: int, size: int, total: int) -> dict:
    return {
        "data": items,
        "page": page,
        "size": size,
        "total": total,
        "total_pages": math.ceil(total / size) if size else 0,
    }
