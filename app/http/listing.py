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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import marshmallow as ma
import peewee as pw

from app.data import prepared, row_counts, tombstones
from app.data.prepared import Slots
from app.data.records import sent_filters
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


def window_values(window: ListWindow) -> dict:
    """The values of the window's updated_at span, as `windowed` compares them."""
    values = {}
    if window.updated_after is not None:
        values["updated_from"] = to_shown_precision(window.updated_after) + SHOWN_PRECISION
    if window.updated_before is not None:
        values["updated_before"] = to_shown_precision(window.updated_before)
    return values


def windowed(query, model, slots: Slots):
    """The query narrowed to the updated_at span in `slots`, compared at the milliseconds answers
    show: a record is after `updated_after` when its shown updated_at is (so the largest updated_at
    seen excludes every record seen), and before `updated_before` when its shown updated_at is.
    Written as ranges on the stored value (index-friendly)."""
    if "updated_from" in slots:
        query = query.where(model.updated_at >= slots.value("updated_from", model.updated_at))
    if "updated_before" in slots:
        query = query.where(model.updated_at < slots.value("updated_before", model.updated_at))
    return query


def within_window(query, model, window: ListWindow):
    """The query narrowed to the window's updated_at span (windowed)."""
    return windowed(query, model, Slots.inline(window_values(window)))


@dataclass(frozen=True)
class Selection:
    """The rows a list selects before its window: `build(slots)` is their query, reading the
    request's `values` (the tenant, the filters sent) through its slots (app.data.prepared). With a
    `key`, each shape's statement is compiled once and kept; without, the query is built and
    compiled on every request. `counted(slots)`, when given, is the cheaper query of the same rows
    that page mode's total counts (without joins that only add columns)."""

    model: type
    build: Callable[[Slots], object]
    values: Mapping = field(default_factory=dict)
    key: str | None = None
    counted: Callable[[Slots], object] | None = None

    @classmethod
    def of_query(cls, query, counted=None) -> Selection:
        """A selection of a query already built with its values (not kept)."""
        return cls(
            query.model,
            lambda slots: query,
            counted=None if counted is None else (lambda slots: counted),
        )

    @classmethod
    def of_tenant(
        cls, model: type, build: Callable, tenant_id: str, filters: dict, *, key: str, counted=None
    ) -> Selection:
        """A kept selection of the tenant's rows matching the filters sent: `build` reads the
        tenant's id as the slot `tenant`, and each filter given a value as a slot of its name."""
        values = {"tenant": tenant_id, **sent_filters(filters)}
        return cls(model, build, values, key=key, counted=counted)

    def rows(self, part, extend: Callable, values: Mapping, read: Callable) -> list:
        """`read` of the rows of the selection's query extended by `extend(query, slots)` (the
        window, order and page that `part` names in the statement's key), run with the selection's
        values and `values`."""
        values = {**self.values, **values}

        def build(slots: Slots):
            return extend(self.build(slots), slots)

        if self.key is None:
            return read(build(Slots.inline(values)))
        return read(prepared.statement((self.key, part), build, values).run(values))

    def count(self, values: Mapping) -> int:
        """How many rows match, in the window of `values`."""
        slots = Slots.inline({**self.values, **values})
        query = (self.counted or self.build)(slots)
        return windowed(query, self.model, slots).count()


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


def cursor_values(window: ListWindow, scope: str) -> dict:
    """The values of a cursor page: its size and, past the first page, the cursor's position."""
    values = {"limit": window.size + 1, **window_values(window)}
    if window.cursor:
        values["after_updated_at"], values["after_id"] = read_cursor(window.cursor, scope)
    return values


def keyset_query(query, model, slots: Slots):
    """A cursor page's query: after the cursor's position in (updated_at, id) order, one row more
    than size (to know whether another page follows). The bound is written `updated_at >= u AND
    (updated_at > u OR id > i)` so an index on (tenant, updated_at, id) serves it as a range on both
    databases."""
    query = (
        windowed(query, model, slots)
        .order_by(model.updated_at, model.id)
        .limit(slots.value("limit"))
    )
    if "after_id" in slots:
        last_updated_at = slots.value("after_updated_at", model.updated_at)
        query = query.where(
            (model.updated_at >= last_updated_at)
            & (
                (model.updated_at > last_updated_at)
                | (model.id > slots.value("after_id", model.id))
            )
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
    source,
    window: ListWindow,
    *,
    tenant_id: str,
    list_name: str,
    filters: dict,
    order_by=None,
    counted=None,
    read=list,
) -> dict:
    """The list body for either mode, from a Selection or a query of model instances (page mode in
    `order_by`, by default (created_at, id); cursor mode always by (updated_at, id)). `counted`,
    when given with a query, is the cheaper query with the same rows that page mode's total counts
    (e.g. without joins that only add columns); lists whose totals the database keeps
    (app.data.row_counts) read them instead of counting. `read` turns the page's query, or the
    cursor of its kept statement, into its rows (app.data.list_rows reads them as dicts without
    converting what needs no conversion)."""
    selection = source if isinstance(source, Selection) else Selection.of_query(source, counted)
    if not window.by_cursor:
        return paginate(
            selection,
            page=window.page,
            size=window.size,
            order_by=order_by,
            total=known_total(
                selection.model,
                window,
                tenant_id=tenant_id,
                list_name=list_name,
                filters=filters,
            ),
            read=read,
            values=window_values(window),
        )
    scope = cursor_scope(tenant_id, list_name, window, filters)
    model = selection.model
    rows = selection.rows(
        "cursor",
        lambda query, slots: keyset_query(query, model, slots),
        cursor_values(window, scope),
        read,
    )
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
    source,
    *,
    page: int,
    size: int,
    order_by=None,
    total: int | None = None,
    read=list,
    values: Mapping | None = None,
) -> dict:
    """A page of a Selection or a query in stable order (created_at, then id unless given), with its
    totals: `total` when known, else counted; `values` adds the window's to the selection's, and
    `read` turns the page's query (or its statement's cursor) into its rows."""
    selection = source if isinstance(source, Selection) else Selection.of_query(source)
    values = {**(values or {}), "limit": size, "offset": (page - 1) * size}
    if total is None:
        total = selection.count(values)
    model = selection.model
    order = order_by or (model.created_at, model.id)
    items = selection.rows(
        ("page", *map(order_name, order)),
        lambda query, slots: page_query(windowed(query, model, slots), slots, order),
        values,
        read,
    )
    return page_body(items, page=page, size=size, total=total)


def order_name(term) -> str:
    """A page order's term as a kept statement's key names it: a column by its table and name."""
    if isinstance(term, pw.Field):
        return f"{term.model._meta.table_name}.{term.column_name}"
    return repr(term)


def page_query(query, slots: Slots, order_by):
    """The query of one page: `order_by`, then the page's limit and offset from `slots`."""
    return query.order_by(*order_by).limit(slots.value("limit")).offset(slots.value("offset"))


def page_body(items: list, *, page: int, size: int, total: int) -> dict:
    return {
        "data": items,
        "page": page,
        "size": size,
        "total": total,
        "total_pages": math.ceil(total / size) if size else 0,
    }
