"""Paging strategies: the order hits come in (index order, score, one sort key) and how each page
continues from its cursor."""

from __future__ import annotations

from typing import Iterable

import tantivy
from tantivy import FieldType, Order, Query

from plugins.person import profile_fields
from plugins.person.backends.embedded.layout import (
    SCHEMA,
    SEQ_BITS,
    SEQ_MAX,
    VALUE_OFFSET,
    sort_field,
)
from plugins.person.backends.embedded.query import count_hits, narrowed
from plugins.person.profile_fields import DATE, INTEGER

# Each strategy returns (addresses, total, cursor): the page's hits in rank order, the total, and
# the cursor that continues after them (None on the last page).


# fewer hits are ranked faster in one search than found by windows of sequences
WINDOWED_FIRST_PAGE_HITS = 100_000


def by_index_order(
    searcher: tantivy.Searcher,
    query: Query,
    size: int,
    offset: int,
    cursor,
    total: int | None = None,
):
    """Hits in ingest order; a continuation looks within SEQ_WINDOWS of the last sequence and reuses
    the first page's total, instead of ranking and counting every hit left. A first page of a query
    with many hits whose `total` is known (from the index statistics: query.known_total) is found
    the same way, from the first sequence."""
    seen, counted = 0, None
    if cursor:
        _, seen, last_seq, *counted = cursor
    if counted:
        hits, total = _after_seq_window(searcher, query, last_seq, size), counted[0]
    elif total is not None and total >= WINDOWED_FIRST_PAGE_HITS and not cursor:
        hits = _after_seq_window(searcher, query, -1, offset + size)[offset:]
    else:
        ranked = narrowed(query, _after_seq(last_seq)) if cursor else query
        result = searcher.search(
            ranked, size, count=True, order_by_field="_seq", offset=offset, order=Order.Asc
        )
        hits, total = result.hits, seen + result.count
    addresses = [a for _, a in hits]
    consumed = seen + offset + len(addresses)
    more = consumed < total
    return addresses, total, (["seq", consumed, hits[-1][0], total] if more and addresses else None)


def by_score(searcher: tantivy.Searcher, query: Query, size: int, offset: int, cursor):
    """Hits by relevance (top_by_score); continues by offset."""
    if cursor:
        _, offset = cursor
    hits, total = top_by_score(searcher, query, offset + size)
    addresses = [address for _, address in hits[offset:]]
    more = offset + len(addresses) < total
    return addresses, total, (["offset", offset + len(addresses)] if more and addresses else None)


def by_key(
    searcher: tantivy.Searcher,
    parts,
    path: str,
    order: str,
    size: int,
    offset: int,
    cursor,
    total: int | None = None,
):
    """Hits sorted by the one field `path` (by_number or by_keyword, by its kind); `parts` from
    query.sort_parts, and `total` the query's hits when known without a search (query.known_total),
    which spares counting those without a value."""
    strategy = by_number if profile_fields.FIELDS[path].kind in (INTEGER, DATE) else by_keyword
    return strategy(searcher, parts, path, order, size, offset, cursor, total)


def by_number(
    searcher: tantivy.Searcher,
    parts,
    path: str,
    order: str,
    size: int,
    offset: int,
    cursor,
    total: int | None = None,
):
    """Valued documents by the folded (value, sequence) key, then documents without a value in index
    order.

    The first page counts both parts and its cursor carries the counts; a continuation searches only
    the keys just past the last one (NUMBER_WINDOWS), so a page deep in a million-document walk
    reads a few values' documents instead of re-ranking and re-counting every document left."""
    key = sort_field(path, order)
    valued, missing = parts
    phase, seen, last = cursor[:3] if cursor else ("value", 0, None)
    # tokens from before the counts rode along: recount
    counts = cursor[3:5] if cursor and len(cursor) == 5 else None
    if phase == "missing":
        result = searcher.search(
            narrowed(missing, _after_seq(last)),
            size,
            count=counts is None,
            order_by_field="_seq",
            order=Order.Asc,
        )
        total = sum(counts) if counts else seen + result.count
        consumed = seen + len(result.hits)
        more = consumed < total and result.hits
        return (
            [a for _, a in result.hits],
            total,
            (["missing", consumed, result.hits[-1][0], *(counts or [])] if more else None),
        )
    if last is not None and counts is not None:
        hits = _after_key(searcher, valued, key, last, order, size)
        n_valued, n_missing = counts
    else:
        if last is not None:
            valued = narrowed(valued, _past_key(key, last, order))
        result = searcher.search(
            valued,
            size,
            count=True,
            order_by_field=key,
            offset=offset,
            order=Order.Asc if order == "asc" else Order.Desc,
        )
        hits = result.hits
        n_valued = seen + result.count
        n_missing = (
            (total - n_valued if total is not None else count_hits(searcher, missing))
            if missing
            else 0
        )
    addresses = [a for _, a in hits]
    next_key = ["value", hits[-1][0]] if hits else None
    total = n_valued + n_missing
    if len(addresses) < size and n_missing:
        skip = max(0, offset - n_valued) if last is None else 0
        fill = searcher.search(
            missing,
            size - len(addresses),
            count=False,
            order_by_field="_seq",
            offset=skip,
            order=Order.Asc,
        )
        addresses += [a for _, a in fill.hits]
        if fill.hits:
            next_key = ["missing", fill.hits[-1][0]]
    consumed = seen + offset + len(addresses)
    if consumed >= total or next_key is None:
        return addresses, total, None
    return addresses, total, [next_key[0], consumed, next_key[1], n_valued, n_missing]


def by_keyword(
    searcher: tantivy.Searcher,
    parts,
    path: str,
    order: str,
    size: int,
    offset: int,
    cursor,
    total: int | None = None,
):
    """Valued documents by the keyword (ties in index order), then documents without a value;
    continues by offset."""
    if cursor:
        _, offset = cursor
    key = sort_field(path, order)
    valued, missing = parts
    window = offset + size
    result = searcher.search(
        valued,
        window,
        count=True,
        order_by_field=key,
        order=Order.Asc if order == "asc" else Order.Desc,
    )
    n_valued = result.count
    hits = result.hits
    if hits:
        boundary = hits[-1][0]
        before = [(k, a) for k, a in hits if k != boundary] if len(hits) == window else hits
        seqs = searcher.fast_field_values("_seq", [a for _, a in before])
        reverse_key = order == "desc"
        ranked = sorted(zip(before, seqs), key=lambda pair: pair[1])
        ranked.sort(key=lambda pair: pair[0][0], reverse=reverse_key)
        ordered = [a for (_, a), _ in ranked]
        if len(hits) == window:
            ties = searcher.search(
                narrowed(valued, Query.term_query(SCHEMA, key, boundary)),
                window - len(ordered),
                count=False,
                order_by_field="_seq",
                order=Order.Asc,
            )
            ordered += [a for _, a in ties.hits]
    else:
        ordered = []
    addresses = ordered[offset:window]
    missing_count = (
        (total - n_valued if total is not None else count_hits(searcher, missing)) if missing else 0
    )
    total = n_valued + missing_count
    if len(addresses) < size and missing_count:
        skip = max(0, offset - n_valued)
        fill = searcher.search(
            missing,
            size - len(addresses),
            count=False,
            order_by_field="_seq",
            offset=skip,
            order=Order.Asc,
        )
        addresses += [a for _, a in fill.hits]
    consumed = offset + len(addresses)
    return addresses, total, (["offset", consumed] if consumed < total and addresses else None)


def top_by_score(
    searcher: tantivy.Searcher, query: Query, need: int
) -> tuple[list[tuple[float, object]], int]:
    """[(score, address)] of the first `need` hits by score, equal scores in the engine's document
    order, and the total.

    That is the order the engine itself fills a window by, so each longer window extends the shorter
    one and pages cut from them never repeat or skip a hit. Equal scores come in index order on an
    index loaded in one go; after appends they follow the engine's segment order (Elasticsearch,
    too, breaks relevance ties by its internal document order)."""
    result = searcher.search(query, need, count=True)
    ranked = sorted(result.hits, key=lambda hit: (-hit[0], hit[1].segment_ord, hit[1].doc))
    return ranked, result.count


# hits read past a window (or the window again, if larger) to finish a score tie cut by its edge
EDGE_TIES_EXTRA = 1000


def top_by_score_with_edge_ties(
    searcher: tantivy.Searcher, query: Query, need: int
) -> tuple[list[tuple[float, object]], int]:
    """top_by_score, plus every further hit scoring the same as the `need`th: the engine fills a
    window's last places from a tie in its own document order, so a later sort key (or index order)
    can rank the whole tie only when all of it is at hand. Reads at most max(2 x need, need +
    EDGE_TIES_EXTRA) hits; a larger tie is cut in engine order."""
    limit = max(2 * need, need + EDGE_TIES_EXTRA)
    window = need + 1
    while True:
        hits, total = top_by_score(searcher, query, window)
        if (
            len(hits) <= need
            or len(hits) >= total
            or hits[-1][0] != hits[need - 1][0]
            or window >= limit
        ):
            return hits, total
        window = min(limit, window * 2)


# values on either side of the last one a sort continuation looks within, in turn
NUMBER_WINDOWS = (0, 1, 4, 16, 64)


def _after_key(searcher, valued, key: str, last: int, order: str, size: int) -> list:
    """The next `size` valued hits past the folded key `last`: first among documents of the same
    value, then within NUMBER_WINDOWS values of it, then anywhere past it."""
    value = (last >> SEQ_BITS) - VALUE_OFFSET
    windows = (_number_window(key, last, value, width, order) for width in NUMBER_WINDOWS)
    return _next_page(
        searcher,
        valued,
        windows,
        _past_key(key, last, order),
        size,
        key,
        Order.Asc if order == "asc" else Order.Desc,
    )


def _past_key(key: str, last: int, order: str) -> Query:
    """Folded sort keys after `last` in the sort's direction."""
    if order == "asc":
        return Query.range_query(SCHEMA, key, FieldType.Integer, last, None, False, True)
    return Query.range_query(SCHEMA, key, FieldType.Integer, None, last, True, False)


def _number_window(key: str, last: int, value: int, width: int, order: str) -> Query:
    """Folded keys after `last` whose value is at most `width` past the last value."""
    if order == "asc":
        high = min(value + width, VALUE_OFFSET - 1)
        return Query.range_query(
            SCHEMA,
            key,
            FieldType.Integer,
            last,
            ((high + VALUE_OFFSET) << SEQ_BITS) | SEQ_MAX,
            False,
            True,
        )
    low = max(value - width, -VALUE_OFFSET)
    return Query.range_query(
        SCHEMA, key, FieldType.Integer, (low + VALUE_OFFSET) << SEQ_BITS, last, True, False
    )


# sequences past the last hit an index-order continuation looks within, per hit wanted
SEQ_WINDOWS = (4, 32, 256, 2048)


# a window of at most this many sequences is looked up term by term, not by scanning the column
SEQ_TERMS_MAX = 4096


def _after_seq_window(searcher, query: Query, last_seq: int, size: int) -> list:
    """The next `size` hits after sequence `last_seq` in index order: within a widening window of
    sequences first."""
    windows = (_seq_between(last_seq, last_seq + factor * size) for factor in SEQ_WINDOWS)
    return _next_page(searcher, query, windows, _after_seq(last_seq), size, "_seq", Order.Asc)


def _next_page(
    searcher, query: Query, windows: Iterable[Query], past: Query, size: int, key: str, order: Order
) -> list:
    """The next `size` hits of `query` in `key` order: from the first window (nearest first) that
    holds a full page, else from everything past the last hit. A full window holds the next hits, as
    every key outside it comes later."""
    for window in windows:
        hits = searcher.search(
            narrowed(query, window), size, count=False, order_by_field=key, order=order
        ).hits
        if len(hits) == size:
            return hits
    return searcher.search(
        narrowed(query, past), size, count=False, order_by_field=key, order=order
    ).hits


def _seq_between(low: int, high: int) -> Query:
    """Sequences in (low, high]: a narrow window as its terms (a few postings read), a wide one as a
    range (which reads the sequence of every document)."""
    if high - low <= SEQ_TERMS_MAX:
        return Query.term_set_query(SCHEMA, "_seq", list(range(low + 1, high + 1)))
    return Query.range_query(SCHEMA, "_seq", FieldType.Integer, low, high, False, True)


def _after_seq(seq: int) -> Query:
    return Query.range_query(SCHEMA, "_seq", FieldType.Integer, seq, None, False, True)
