"""Sorting by several keys on the embedded engine, which orders by one fast field: the engine ranks by the first key, Python
re-sorts the window by every key (Elasticsearch rules: arrays by min asc / max desc, missing values last, ties by index
order), and the tie group cut by the window's edge is completed by ranking that group alone by the remaining keys.

Also `top_by_score`: the best hits by relevance, equal scores in the engine's document order.
"""

from __future__ import annotations

import orjson

from plugins.person import profile_fields as schema
from plugins.person.dsl import SCORE
from plugins.person.profile_fields import DATE, INTEGER

Key = tuple[str, str]


def top_by_score(searcher, query, need: int) -> tuple[list[tuple[float, object]], int]:
    """[(score, address)] of the first `need` hits by score, equal scores in the engine's document order, and the total.

    That is the order the engine itself fills a window by, so each longer window extends the shorter one and pages cut
    from them never repeat or skip a hit. Equal scores come in index order on an index loaded in one go; after appends
    they follow the engine's segment order (Elasticsearch, too, breaks relevance ties by its internal document order)."""
    result = searcher.search(query, need, count=True)
    ranked = sorted(result.hits, key=lambda hit: (-hit[0], hit[1].segment_ord, hit[1].doc))
    return ranked, result.count


EDGE_TIES_EXTRA = 1000  # hits read past a window (or the window again, if larger) to finish a score tie cut by its edge


def top_by_score_with_edge_ties(searcher, query, need: int) -> tuple[list[tuple[float, object]], int]:
    """top_by_score, plus every further hit scoring the same as the `need`th: the engine fills a window's last places
    from a tie in its own document order, so a later sort key (or index order) can rank the whole tie only when all of
    it is at hand. Reads at most max(2 x need, need + EDGE_TIES_EXTRA) hits; a larger tie is cut in engine order."""
    limit = max(2 * need, need + EDGE_TIES_EXTRA)
    window = need + 1
    while True:
        hits, total = top_by_score(searcher, query, window)
        if len(hits) <= need or len(hits) >= total or hits[-1][0] != hits[need - 1][0] or window >= limit:
            return hits, total
        window = min(limit, window * 2)


def sort_value(record: dict, path: str, order: str):
    """The value a record sorts by on `path`: None when missing; a list sorts by its min (asc) or max (desc)."""
    value = record.get(path)
    if isinstance(value, list):
        values = [v for v in value if v is not None]
        if not values:
            return None
        value = min(values) if order == "asc" else max(values)
    if value is None:
        return None
    kind = schema.FIELDS[path].kind
    try:
        if kind == DATE:
            return schema.date_ordinal(value)
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
    """Stable passes from the last key to the first, after index order: the full Elasticsearch order of these rows."""
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
    """Ranks an engine query by several keys; `backend` supplies the single-key strategies and the record reader."""

    def __init__(self, backend, searcher, scored_query):
        self.backend = backend
        self.searcher = searcher
        self.scored_query = scored_query

    def first(self, query, keys: list[Key], need: int) -> tuple[list[Row], int]:
        """The first `need` hits of `query` in `keys` order, and the total."""
        from plugins.person.backends.embedded.backend import _sort_parts, _source

        path, order = keys[0]
        if path == SCORE:
            hits, total = top_by_score_with_edge_ties(self.searcher, query, need)
            scores = [score for score, _ in hits]
            addresses = [address for _, address in hits]
        else:
            strategy = self.backend._by_number if schema.FIELDS[path].kind in (INTEGER, DATE) else self.backend._by_keyword
            addresses, total, _ = strategy(self.searcher, _sort_parts(query, path, False), path, order, need, 0, None)
            scores = self._scores(addresses) if any(key == SCORE for key, _ in keys) else [0.0] * len(addresses)
        if not addresses:
            return [], total
        seqs = self.searcher.fast_field_values("_seq", addresses)
        rows = python_sort([Row(a, s, sc, _source(self.searcher, a)) for a, s, sc in zip(addresses, seqs, scores)], keys)
        if path == SCORE or len(keys) == 1 or total <= need:
            return rows[:need], total
        edge = sort_value(rows[-1].record, path, order)
        cut = [row for row in rows if sort_value(row.record, path, order) == edge]
        group, _ = self.first(self._restrict(query, path, order, edge), keys[1:], len(cut))
        return rows[:len(rows) - len(cut)] + group, total

    def _scores(self, addresses) -> list[float]:
        """Each hit's relevance score (a later sort key is _score)."""
        return [float(orjson.loads(self.scored_query.explain(self.searcher, a).to_json())["value"]) for a in addresses]

    def _restrict(self, query, path: str, order: str, value):
        """`query` limited to the hits whose sort value on `path` is `value` (None: the hits without one)."""
        from tantivy import FieldType, Query

        from plugins.person.backends.embedded.backend import SCHEMA, _with, sort_field

        has_value = Query.term_query(SCHEMA, "_field_names", path)
        if value is None:
            return _with(query, excluded=has_value)
        f = schema.FIELDS[path]
        if f.kind in (INTEGER, DATE):
            return _with(query, Query.range_query(SCHEMA, path, FieldType.Integer, value, value, True, True))
        return _with(query, Query.term_query(SCHEMA, sort_field(path, order), value))
