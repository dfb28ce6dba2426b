"""Sorting by several keys, which the engine cannot do alone: it orders by one fast field, so Python
finishes the order."""

from __future__ import annotations

import tantivy
from tantivy import FieldType, Query

from plugins.person import profile_fields
from plugins.person.backends import SearchResult
from plugins.person.backends.embedded.layout import SCHEMA, sort_field, source
from plugins.person.backends.embedded.query import narrowed, sort_parts
from plugins.person.backends.embedded.ranking import by_key, top_by_score_with_edge_ties
from plugins.person.dsl import SCORE
from plugins.person.profile_fields import DATE, INTEGER

Key = tuple[str, str]


def by_keys(
    searcher: tantivy.Searcher, query: Query, keys: list[Key], size: int, offset: int, cursor
) -> SearchResult:
    """A page sorted by several keys (MultiKeySorter); continues by offset like the keyword sort."""
    if cursor:
        _, offset = cursor
    rows, total = MultiKeySorter(searcher, query).first(query, keys, offset + size)
    page = rows[offset : offset + size]
    more = offset + len(page) < total
    return SearchResult(
        total=total,
        hits=[row.record for row in page],
        cursor=["offset", offset + len(page)] if more and page else None,
    )


def sort_value(record: dict, path: str, order: str):
    """The value a record sorts by on `path`: None when missing; a list sorts by its min (asc) or
    max (desc)."""
    value = record.get(path)
    if isinstance(value, list):
        values = [v for v in value if v is not None]
        if not values:
            return None
        value = min(values) if order == "asc" else max(values)
    if value is None:
        return None
    kind = profile_fields.FIELDS[path].kind
    try:
        if kind == DATE:
            return profile_fields.date_ordinal(value)
        if kind == INTEGER:
            return int(value)
    except (TypeError, ValueError):
        return None
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


class Row:
    """One hit while sorting: its address, index position, score and record."""

    __slots__ = ("address", "seq", "score", "record")

    def __init__(self, address, seq: int, score: float, record: dict):
        self.address, self.seq, self.score, self.record = address, seq, score, record


def python_sort(rows: list[Row], keys: list[Key]) -> list[Row]:
    """Stable passes from the last key to the first, after index order: the full Elasticsearch order
    of these rows."""
    rows = sorted(rows, key=lambda row: row.seq)
    for path, order in reversed(keys):
        if path == SCORE:
            rows.sort(key=lambda row: -row.score)
            continue
        valued = [(sort_value(row.record, path, order), row) for row in rows]
        present = [pair for pair in valued if pair[0] is not None]
        present.sort(key=lambda pair: pair[0], reverse=order == "desc")
        rows = [row for _, row in present] + [row for value, row in valued if value is None]
    return rows


class MultiKeySorter:
    """Ranks an engine query by several keys: the engine ranks by the first key (ranking.py), Python
    re-sorts the window by every key (Elasticsearch rules: arrays by min asc / max desc, missing
    values last, ties by index order), and the tie group cut by the window's edge is completed by
    ranking that group alone by the remaining keys."""

    def __init__(self, searcher: tantivy.Searcher, scored_query: Query):
        self.searcher = searcher
        self.scored_query = scored_query

    def first(self, query, keys: list[Key], need: int) -> tuple[list[Row], int]:
        """The first `need` hits of `query` in `keys` order, and the total."""
        path, order = keys[0]
        if path == SCORE:
            hits, total = top_by_score_with_edge_ties(self.searcher, query, need)
            scores = [score for score, _ in hits]
            addresses = [address for _, address in hits]
        else:
            addresses, total, _ = by_key(
                self.searcher, sort_parts(query, path, False), path, order, need, 0, None
            )
            scores = (
                self._scores(addresses)
                if any(key == SCORE for key, _ in keys)
                else [0.0] * len(addresses)
            )
        if not addresses:
            return [], total
        seqs = self.searcher.fast_field_values("_seq", addresses)
        rows = python_sort(
            [
                Row(a, s, sc, self._source(step, a))
                for step, (a, s, sc) in enumerate(zip(addresses, seqs, scores))
            ],
            keys,
        )
        if path == SCORE or len(keys) == 1 or total <= need:
            return rows[:need], total
        edge = sort_value(rows[-1].record, path, order)
        cut = [row for row in rows if sort_value(row.record, path, order) == edge]
        group, _ = self.first(self._restrict(query, path, order, edge), keys[1:], len(cut))
        return rows[: len(rows) - len(cut)] + group, total

    def _source(self, step: int, address) -> dict:
        self.searcher.check(step)
        return source(self.searcher, address)

    def _scores(self, addresses) -> list[float]:
        """Each hit's relevance score (a later sort key is _score)."""
        scores = []
        for step, address in enumerate(addresses):
            self.searcher.check(step)
            scores.append(self.searcher.score(self.scored_query, address))
        return scores

    def _restrict(self, query, path: str, order: str, value):
        """`query` limited to the hits whose sort value on `path` is `value` (None: the hits without
        one)."""
        has_value = Query.term_query(SCHEMA, "_field_names", path)
        if value is None:
            return narrowed(query, excluded=has_value)
        f = profile_fields.FIELDS[path]
        if f.kind in (INTEGER, DATE):
            return narrowed(
                query, Query.range_query(SCHEMA, path, FieldType.Integer, value, value, True, True)
            )
        return narrowed(query, Query.term_query(SCHEMA, sort_field(path, order), value))
