"""The embedded search backend: a tantivy index on local disk reproducing Elasticsearch's query, scoring and sort semantics.

Layout (one tantivy field per Elasticsearch path, see reference/embedded-search.md):
  <path>            keyword: raw tokens; text: the standard-analyzer tokens with positions; integer/date: i64; float: f64
  <path> (fast)     single-valued keywords are their own sort key
  <path>__min/__max list keywords' sort keys (the smallest and largest value: Elasticsearch sorts arrays by min asc, max desc)
  <path>__asc/__desc integer/date sort keys that fold the ingest sequence in, so ties break by index order and a
                    scroll continues with one range query
  _field_names      one raw term per non-empty path and its parent objects: `exists`
  _seq              ingest order, the tiebreaker and the cheap continuation key
  _source           the original JSON line, returned as is
"""

from __future__ import annotations

import base64
import datetime as dt
import math
import re
import threading
from pathlib import Path
from typing import Iterable

import orjson
import tantivy
from tantivy import FieldType, Occur, Order, Query

from plugins.person import profile_fields as schema
from plugins.person.backends import DatasetUnavailable, DatasetWriter, SearchBackend, SearchResult
from plugins.person.backends.embedded.sort import MultiKeySorter, top_by_score
from plugins.person.dsl import SCORE, resolve_minimum_should_match
from plugins.person.flatten import flatten, present_names
from plugins.person.profile_fields import BOOLEAN, DATE, FLOAT, INTEGER, KEYWORD, TEXT

SCHEMA_VERSION = 2
ENGINE_DIR = "engine"
META_FILE = "dataset.json"
# tantivy keeps Lucene's older (k1 + 1) BM25 factor: its scores are 2.2 times Elasticsearch's.
BM25_SCALE = 1 / 2.2
K1 = 1.2
SEQ_BITS = 31
SEQ_MAX = (1 << SEQ_BITS) - 1
VALUE_OFFSET = 1 << 31
TOKEN_PATTERN = re.compile(r"[^\W_]+")
MAX_TOKEN_BYTES = 40


def analyze(text: str) -> list[str]:
    """The standard analyzer as tantivy's `default` tokenizer applies it: split on non-alphanumerics, lowercase, drop long tokens."""
    return [t for t in TOKEN_PATTERN.findall(text.lower()) if len(t.encode()) < MAX_TOKEN_BYTES]


def sort_field(path: str, order: str) -> str:
    """The fast field a sort on `path` reads: single-valued keywords sort on themselves, lists on their min (asc) or max
    (desc) twin, numbers and dates on a key that folds the ingest sequence in (ties by index order)."""
    f = schema.FIELDS[path]
    if f.kind in (INTEGER, DATE):
        return f"{path}__asc" if order == "asc" else f"{path}__desc"
    if f.multi:
        return f"{path}__min" if order == "asc" else f"{path}__max"
    return path


def _build_schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("_field_names", tokenizer_name="raw", index_option="basic")
    builder.add_integer_field("_seq", indexed=True, fast=True)
    builder.add_bytes_field("_source", stored=True)
    for f in schema.FIELDS.values():
        if f.kind in (KEYWORD, BOOLEAN):
            builder.add_text_field(f.path, tokenizer_name="raw", index_option="basic", fast=f.sortable and not f.multi)
            if f.sortable and f.multi:
                builder.add_text_field(f"{f.path}__min", tokenizer_name="raw", fast=True, index_option="basic")
                builder.add_text_field(f"{f.path}__max", tokenizer_name="raw", fast=True, index_option="basic")
        elif f.kind == TEXT:
            builder.add_text_field(f.path, tokenizer_name="default", index_option="position")
        elif f.kind in (INTEGER, DATE):
            builder.add_integer_field(f.path, indexed=True, fast=not f.in_object_array)
            if f.sortable:
                builder.add_integer_field(f"{f.path}__asc", indexed=True, fast=True)
                builder.add_integer_field(f"{f.path}__desc", indexed=True, fast=True)
        elif f.kind == FLOAT:
            builder.add_float_field(f.path, indexed=True, fast=False)
    return builder.build()


SCHEMA = _build_schema()
_MIN_MAX_KEYS = tuple((f.path, f"{f.path}__min", f"{f.path}__max") for f in schema.FIELDS.values()
                      if f.sortable and f.multi and f.kind in (KEYWORD, BOOLEAN))
_FOLDED_KEYS = tuple((f.path, f"{f.path}__asc", f"{f.path}__desc") for f in schema.FIELDS.values()
                     if f.sortable and f.kind in (INTEGER, DATE))


# ---- documents -------------------------------------------------------------

def _keyword(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def prepare_document(record: dict, raw: bytes, seq: int) -> tuple[str, int, bytes]:
    """One record -> (id, seq, the JSON document tantivy indexes); ValueError names the bad field. Runs in loader processes."""
    record_id = schema.require_id(record)
    if seq > SEQ_MAX:
        raise ValueError("the index is full (sequence exhausted); reload with --replace")
    document = flatten(record)
    names = present_names(document)
    for path, low, high in _MIN_MAX_KEYS:
        bucket = document.get(path)
        if bucket:
            document[low] = min(bucket)
            document[high] = max(bucket)
    for path, ascending, descending in _FOLDED_KEYS:
        value = document.get(path)
        if value is not None:
            document[ascending] = _fold(value, seq)
            document[descending] = _fold(value, SEQ_MAX - seq)
    document["_field_names"] = names
    document["_seq"] = seq
    document["_source"] = base64.b64encode(raw).decode("ascii")
    return record_id, seq, orjson.dumps(document)


def _fold(value: int, seq: int) -> int:
    """value and sequence in one i64, ordered by value then sequence."""
    if not -VALUE_OFFSET <= value < VALUE_OFFSET:
        raise ValueError(f"{value} is out of range")
    return ((value + VALUE_OFFSET) << SEQ_BITS) | seq


# ---- queries ---------------------------------------------------------------

class QueryBuilder:
    """Canonical DSL (plugins/person/dsl.py) -> a tantivy Query with Elasticsearch's scores."""

    def __init__(self, searcher: tantivy.Searcher):
        self.searcher = searcher

    def build(self, node: dict, scoring: bool = True) -> Query:
        (kind, body), = node.items()
        return getattr(self, f"_{kind}")(body, scoring)

    # leaves
    def _term(self, body, scoring):
        (path, value), = body.items()
        return self._exact(schema.FIELDS[path], value, scoring)

    def _exact(self, f: schema.Field, value, scoring: bool) -> Query:
        if f.kind in (INTEGER, DATE, FLOAT):
            number = self._number(f, value)
            return _constant(self._range_query(f, number, number, True, True), 1.0)
        text = _keyword(value)
        query = Query.term_query(SCHEMA, f.path, text)
        if not scoring:
            return query
        if f.kind == TEXT:
            return Query.boost_query(query, BM25_SCALE)
        # keyword: no norms in Elasticsearch, so a matching term scores idf * tf/(tf + k1) with tf = 1
        return _constant(query, self._idf(f.path, text) / (1 + K1))

    def _idf(self, path: str, term: str) -> float:
        with_field = self.searcher.doc_freq("_field_names", path) or self.searcher.num_docs
        df = self.searcher.doc_freq(path, term)
        return math.log(1 + (with_field - df + 0.5) / (df + 0.5))

    def _terms(self, body, scoring):
        (path, values), = body.items()
        f = schema.FIELDS[path]
        if f.kind in (INTEGER, DATE, FLOAT):
            subs = [(Occur.Should, self._exact(f, v, False)) for v in values]
            return _constant(Query.boolean_query(subs), 1.0)
        return _constant(Query.term_set_query(SCHEMA, path, [_keyword(v) for v in values]), 1.0)

    def _match(self, body, scoring):
        (path, options), = body.items()
        f = schema.FIELDS[path]
        if f.kind != TEXT:
            return self._exact(f, options["query"], scoring)
        tokens = analyze(options["query"])
        if not tokens:
            return Query.empty_query()
        leaves = [self._exact(f, token, scoring) for token in tokens]
        if options.get("operator") == "and":
            return Query.boolean_query([(Occur.Must, q) for q in leaves])
        wanted = resolve_minimum_should_match(options.get("minimum_should_match", 1), len(leaves))
        return Query.boolean_query([(Occur.Should, q) for q in leaves], max(1, wanted))

    def _match_phrase(self, body, scoring):
        (path, options), = body.items()
        f = schema.FIELDS[path]
        if f.kind != TEXT:
            return self._exact(f, options["query"], scoring)
        tokens = analyze(options["query"])
        if not tokens:
            return Query.empty_query()
        if len(tokens) == 1:
            return self._exact(f, tokens[0], scoring)
        query = Query.phrase_query(SCHEMA, path, tokens, options.get("slop", 0))
        return Query.boost_query(query, BM25_SCALE) if scoring else query

    def _exists(self, body, scoring):
        return _constant(Query.term_query(SCHEMA, "_field_names", body["field"]), 1.0)

    def _range(self, body, scoring):
        (path, bounds), = body.items()
        f = schema.FIELDS[path]
        lower = bounds.get("gte", bounds.get("gt"))
        upper = bounds.get("lte", bounds.get("lt"))
        if f.kind == KEYWORD:
            return _constant(self._keyword_range(path, bounds), 1.0)
        query = self._range_query(f, None if lower is None else self._number(f, lower),
                                  None if upper is None else self._number(f, upper), "gt" not in bounds, "lt" not in bounds)
        return _constant(query, 1.0)

    def _range_query(self, f, lower, upper, include_lower, include_upper) -> Query:
        field_type = FieldType.Float if f.kind == FLOAT else FieldType.Integer
        return Query.range_query(SCHEMA, f.path, field_type, lower, upper, include_lower, include_upper)

    def _keyword_range(self, path: str, bounds: dict) -> Query:
        """Lexical range on a keyword: the engine has no string ranges, so enumerate the terms in range."""
        lower = bounds.get("gte", bounds.get("gt"))
        upper = bounds.get("lte", bounds.get("lt"))
        prefix = _common_prefix(lower, upper) if lower is not None and upper is not None else ""
        matching = []
        for term, _ in self.searcher.terms_with_prefix(path, prefix):
            if lower is not None and (term < lower or ("gt" in bounds and term == lower)):
                continue
            if upper is not None and (term > upper or ("lt" in bounds and term == upper)):
                continue
            matching.append(term)
        return Query.term_set_query(SCHEMA, path, matching) if matching else Query.empty_query()

    def _number(self, f: schema.Field, value):
        if f.kind == DATE:
            return schema.date_ordinal(value)
        return float(value) if f.kind == FLOAT else int(value)

    def _prefix(self, body, scoring):
        (path, options), = body.items()
        return _constant(Query.regex_query(SCHEMA, path, _escape(options["value"]) + ".*"), 1.0)

    def _wildcard(self, body, scoring):
        (path, options), = body.items()
        pattern = "".join(".*" if c == "*" else "." if c == "?" else _escape(c) for c in options["value"])
        return _constant(Query.regex_query(SCHEMA, path, pattern), 1.0)

    def _match_all(self, body, scoring):
        return Query.all_query()

    def _bool(self, body, scoring):
        must = [self.build(c, scoring) for c in body.get("must", [])]
        filters = [_constant(self.build(c, False), 0.0) for c in body.get("filter", [])]
        must_not = [self.build(c, False) for c in body.get("must_not", [])]
        should = [self.build(c, scoring) for c in body.get("should", [])]
        if not (must or filters or must_not or should):
            return Query.all_query()
        required = must + filters
        default = 1 if should and not required else 0
        wanted = resolve_minimum_should_match(body.get("minimum_should_match", default), len(should))
        subs = [(Occur.Must, q) for q in required] + [(Occur.Should, q) for q in should] + [(Occur.MustNot, q) for q in must_not]
        if not required and wanted == 0:
            subs.append((Occur.Must, _constant(Query.all_query(), 0.0)))  # Lucene matches nothing for a purely negative bool
        return Query.boolean_query(subs, wanted) if wanted else Query.boolean_query(subs)


def is_constant_score(node: dict, scoring: bool = True) -> bool:
    """True when every matching document gets the same score, so relevance order is index order (cheap to page)."""
    if not scoring:
        return True
    (kind, body), = node.items()
    if kind == "bool":
        should = body.get("should", [])
        if should:
            required = bool(body.get("must") or body.get("filter"))
            wanted = resolve_minimum_should_match(body.get("minimum_should_match", 0 if required else 1), len(should))
            if wanted < len(should):
                return False
        return all(is_constant_score(c) for c in body.get("must", []) + should)
    if kind in ("term", "match", "match_phrase"):
        (path, _), = body.items()
        return schema.FIELDS[path].kind != TEXT
    return True


def _constant(query: Query, score: float) -> Query:
    return Query.const_score_query(query, score)


def _escape(text: str) -> str:
    return "".join("\\" + c if not c.isalnum() and ord(c) < 128 else c for c in text)


def _common_prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def requires_value(node: dict, path: str) -> bool:
    """True when every document the canonical query matches has a value at `path` (a required clause on it), so a
    sort on `path` has no documents without a value to count or append."""
    (kind, body), = node.items()
    if kind == "bool":
        return any(requires_value(child, path) for child in body.get("must", []) + body.get("filter", []))
    if kind == "exists":
        return body["field"] == path
    if kind in ("term", "terms", "range", "prefix", "wildcard", "match", "match_phrase"):
        return path in body
    return False


def _sort_parts(query: Query, path: str, implied: bool) -> tuple[Query, Query | None]:
    """(the documents with a value at `path`, the ones without or None when the query leaves none)."""
    if implied:
        return query, None
    has_value = Query.term_query(SCHEMA, "_field_names", path)
    return _with(query, has_value), _with(query, excluded=has_value)


NUMBER_WINDOWS = (0, 1, 4, 16, 64)  # values on either side of the last one a sort continuation looks within, in turn


def _past_key(key: str, last: int, order: str) -> Query:
    """Folded sort keys after `last` in the sort's direction."""
    if order == "asc":
        return Query.range_query(SCHEMA, key, FieldType.Integer, last, None, False, True)
    return Query.range_query(SCHEMA, key, FieldType.Integer, None, last, True, False)


def _number_window(key: str, last: int, value: int, width: int, order: str) -> Query:
    """Folded keys after `last` whose value is at most `width` past the last value."""
    if order == "asc":
        high = min(value + width, VALUE_OFFSET - 1)
        return Query.range_query(SCHEMA, key, FieldType.Integer, last, ((high + VALUE_OFFSET) << SEQ_BITS) | SEQ_MAX,
                                 False, True)
    low = max(value - width, -VALUE_OFFSET)
    return Query.range_query(SCHEMA, key, FieldType.Integer, (low + VALUE_OFFSET) << SEQ_BITS, last, True, False)


SEQ_WINDOWS = (4, 32, 256, 2048)  # sequences past the last hit an index-order continuation looks within, per hit wanted


def _after_seq_window(searcher, query: Query, last_seq: int, size: int) -> list:
    """The next `size` hits after sequence `last_seq` in index order: within a widening window of sequences first."""
    windows = (Query.range_query(SCHEMA, "_seq", FieldType.Integer, last_seq, last_seq + factor * size, False, True)
               for factor in SEQ_WINDOWS)
    return _next_page(searcher, query, windows, _after_seq(last_seq), size, "_seq", Order.Asc)


def _next_page(searcher, query: Query, windows: Iterable[Query], past: Query, size: int, key: str, order: Order) -> list:
    """The next `size` hits of `query` in `key` order: from the first window (nearest first) that holds a full page,
    else from everything past the last hit. A full window holds the next hits, as every key outside it comes later."""
    for window in windows:
        hits = searcher.search(_with(query, window), size, count=False, order_by_field=key, order=order).hits
        if len(hits) == size:
            return hits
    return searcher.search(_with(query, past), size, count=False, order_by_field=key, order=order).hits


def _after_seq(seq: int) -> Query:
    return Query.range_query(SCHEMA, "_seq", FieldType.Integer, seq, None, False, True)


def _with(query: Query, *required: Query, excluded: Query | None = None) -> Query:
    subs = [(Occur.Must, query)] + [(Occur.Must, _constant(q, 0.0)) for q in required]
    if excluded is not None:
        subs.append((Occur.MustNot, excluded))
    return Query.boolean_query(subs)


# ---- the backend -----------------------------------------------------------

class EmbeddedBackend(SearchBackend):
    """A tantivy index directory; opened lazily so a dataset loaded after start-up is picked up without a restart."""

    name = "embedded"
    preparer = staticmethod(prepare_document)

    def __init__(self, directory: str):
        self.directory = Path(directory)
        self.engine_dir = self.directory / ENGINE_DIR
        self._index: tantivy.Index | None = None
        self._lock = threading.Lock()
        self._meta_cache: tuple[float, dict] | None = None
        self._commit_stamp: int | None = None

    # lifecycle
    def _open(self) -> tantivy.Index:
        if self._index is None:
            with self._lock:
                if self._index is None:
                    if not self.engine_dir.is_dir() or not tantivy.Index.exists(str(self.engine_dir)):
                        raise DatasetUnavailable(f"no embedded index at {self.directory}.")
                    self._index = tantivy.Index.open(str(self.engine_dir))
        return self._index

    def _searcher(self) -> tantivy.Searcher:
        """A snapshot of the last commit: a writer's commit (another process) is picked up on the next request."""
        index = self._open()
        try:
            stamp = (self.engine_dir / "meta.json").stat().st_mtime_ns
        except FileNotFoundError:
            raise DatasetUnavailable(f"the embedded index at {self.directory} is being replaced.") from None
        if stamp != self._commit_stamp:
            index.reload()
            self._commit_stamp = stamp
        return index.searcher()

    def check(self) -> None:
        self._searcher()
        self.dataset_info()

    def dataset_info(self) -> dict:
        path = self.directory / META_FILE
        try:
            mtime = path.stat().st_mtime
        except FileNotFoundError:
            raise DatasetUnavailable(f"no dataset has been loaded into {self.directory}.") from None
        if self._meta_cache is None or self._meta_cache[0] != mtime:
            self._meta_cache = (mtime, orjson.loads(path.read_bytes()))
        meta = self._meta_cache[1]
        return {"dataset_version": meta.get("dataset_version"), "count": meta.get("count", 0)}

    def mapping(self) -> dict:
        return {"mappings": schema.elasticsearch_mapping()}

    # reading
    def count(self, query: dict) -> int:
        searcher = self._searcher()
        return _count(searcher, QueryBuilder(searcher).build(query, scoring=False))

    def get_by_ids(self, ids: Iterable[str]) -> dict[str, dict]:
        ids = [i for i in dict.fromkeys(ids) if isinstance(i, str) and i]
        if not ids:
            return {}
        searcher = self._searcher()
        result = searcher.search(Query.term_set_query(SCHEMA, "id", ids), len(ids) * 2, count=False,
                                 order_by_field="_seq", order=Order.Asc)
        found = {}
        for _, address in result.hits:
            record = _source(searcher, address)
            found[record["id"]] = record
        return found

    def search(self, query: dict, *, size: int, offset: int = 0, sort=(), cursor: list | None = None) -> SearchResult:
        searcher = self._searcher()
        builder = QueryBuilder(searcher)
        if len(sort) > 1:
            return self._by_keys(searcher, builder.build(query, scoring=any(p == SCORE for p, _ in sort)), list(sort),
                                 size, offset, cursor)
        if sort:
            path, order = sort[0]
            f = schema.FIELDS[path]
            engine_query = builder.build(query, scoring=False)
            parts = _sort_parts(engine_query, path, requires_value(query, path))
            if f.kind in (INTEGER, DATE):
                ranked = self._by_number(searcher, parts, path, order, size, offset, cursor)
            else:
                ranked = self._by_keyword(searcher, parts, path, order, size, offset, cursor)
        elif is_constant_score(query):
            ranked = self._by_index_order(searcher, builder.build(query, scoring=False), size, offset, cursor)
        else:
            ranked = self._by_score(searcher, builder.build(query), size, offset, cursor)
        addresses, total, next_cursor = ranked
        return SearchResult(total=total, raw=[searcher.doc(a)["_source"][0] for a in addresses], cursor=next_cursor)

    # ranking strategies: each returns (addresses, total, cursor)
    def _by_index_order(self, searcher, query, size, offset, cursor):
        """Hits in ingest order; a continuation looks within SEQ_WINDOWS of the last sequence and reuses the first
        page's total, instead of ranking and counting every hit left."""
        seen, counted = 0, None
        if cursor:
            _, seen, last_seq, *counted = cursor
        if counted:
            hits, total = _after_seq_window(searcher, query, last_seq, size), counted[0]
        else:
            ranked = _with(query, _after_seq(last_seq)) if cursor else query
            result = searcher.search(ranked, size, count=True, order_by_field="_seq", offset=offset, order=Order.Asc)
            hits, total = result.hits, seen + result.count
        addresses = [a for _, a in hits]
        consumed = seen + offset + len(addresses)
        more = consumed < total
        return addresses, total, (["seq", consumed, hits[-1][0], total] if more and addresses else None)

    def _by_score(self, searcher, query, size, offset, cursor):
        if cursor:
            _, offset = cursor
        hits, total = top_by_score(searcher, query, offset + size)
        addresses = [address for _, address in hits[offset:]]
        more = offset + len(addresses) < total
        return addresses, total, (["offset", offset + len(addresses)] if more and addresses else None)

    def _by_keys(self, searcher, query, keys, size, offset, cursor) -> SearchResult:
        """Several sort keys (sort.py); continues by offset like the keyword sort."""
        if cursor:
            _, offset = cursor
        rows, total = MultiKeySorter(self, searcher, query).first(query, keys, offset + size)
        page = rows[offset:offset + size]
        more = offset + len(page) < total
        return SearchResult(total=total, hits=[row.record for row in page],
                            cursor=["offset", offset + len(page)] if more and page else None)

    def _by_number(self, searcher, parts, path, order, size, offset, cursor):
        """Valued documents by the folded (value, sequence) key, then documents without a value in index order.

        The first page counts both parts and its cursor carries the counts; a continuation searches only the keys just
        past the last one (NUMBER_WINDOWS), so a page deep in a million-document walk reads a few values' documents
        instead of re-ranking and re-counting every document left."""
        key = sort_field(path, order)
        valued, missing = parts
        phase, seen, last = cursor[:3] if cursor else ("value", 0, None)
        counts = cursor[3:5] if cursor and len(cursor) == 5 else None  # tokens from before the counts rode along: recount
        if phase == "missing":
            result = searcher.search(_with(missing, _after_seq(last)), size, count=counts is None, order_by_field="_seq",
                                     order=Order.Asc)
            total = sum(counts) if counts else seen + result.count
            consumed = seen + len(result.hits)
            more = consumed < total and result.hits
            return [a for _, a in result.hits], total, (["missing", consumed, result.hits[-1][0], *(counts or [])]
                                                        if more else None)
        if last is not None and counts is not None:
            hits = self._after_key(searcher, valued, key, last, order, size)
            n_valued, n_missing = counts
        else:
            if last is not None:
                valued = _with(valued, _past_key(key, last, order))
            result = searcher.search(valued, size, count=True, order_by_field=key, offset=offset,
                                     order=Order.Asc if order == "asc" else Order.Desc)
            hits = result.hits
            n_valued, n_missing = seen + result.count, _count(searcher, missing) if missing else 0
        addresses = [a for _, a in hits]
        next_key = ["value", hits[-1][0]] if hits else None
        total = n_valued + n_missing
        if len(addresses) < size and n_missing:
            skip = max(0, offset - n_valued) if last is None else 0
            fill = searcher.search(missing, size - len(addresses), count=False, order_by_field="_seq", offset=skip, order=Order.Asc)
            addresses += [a for _, a in fill.hits]
            if fill.hits:
                next_key = ["missing", fill.hits[-1][0]]
        consumed = seen + offset + len(addresses)
        if consumed >= total or next_key is None:
            return addresses, total, None
        return addresses, total, [next_key[0], consumed, next_key[1], n_valued, n_missing]

    @staticmethod
    def _after_key(searcher, valued, key: str, last: int, order: str, size: int) -> list:
        """The next `size` valued hits past the folded key `last`: first among documents of the same value, then
        within NUMBER_WINDOWS values of it, then anywhere past it."""
        value = (last >> SEQ_BITS) - VALUE_OFFSET
        windows = (_number_window(key, last, value, width, order) for width in NUMBER_WINDOWS)
        return _next_page(searcher, valued, windows, _past_key(key, last, order), size, key,
                          Order.Asc if order == "asc" else Order.Desc)

    def _by_keyword(self, searcher, parts, path, order, size, offset, cursor):
        if cursor:
            _, offset = cursor
        key = sort_field(path, order)
        valued, missing = parts
        window = offset + size
        result = searcher.search(valued, window, count=True, order_by_field=key,
                                 order=Order.Asc if order == "asc" else Order.Desc)
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
                ties = searcher.search(_with(valued, Query.term_query(SCHEMA, key, boundary)), window - len(ordered),
                                       count=False, order_by_field="_seq", order=Order.Asc)
                ordered += [a for _, a in ties.hits]
        else:
            ordered = []
        addresses = ordered[offset:window]
        missing_count = _count(searcher, missing) if missing else 0
        total = n_valued + missing_count
        if len(addresses) < size and missing_count:
            skip = max(0, offset - n_valued)
            fill = searcher.search(missing, size - len(addresses), count=False, order_by_field="_seq", offset=skip, order=Order.Asc)
            addresses += [a for _, a in fill.hits]
        consumed = offset + len(addresses)
        return addresses, total, (["offset", consumed] if consumed < total and addresses else None)

    # writing
    def create_index(self, *, replace: bool = False) -> None:
        self.engine_dir.mkdir(parents=True, exist_ok=True)
        tantivy.Index(SCHEMA, path=str(self.engine_dir), reuse=not replace)

    def writer(self, *, replace: bool = False, threads: int = 0) -> "EmbeddedWriter":
        return EmbeddedWriter(self, replace=replace, threads=threads)

    def parallel_load(self, path: str, *, replace: bool, processes: int, dataset_version: str | None, progress=None):
        """Load a large file with `processes` slice workers (plugins/person/backends/embedded/build.py)."""
        from plugins.person.backends.embedded.build import parallel_load

        return parallel_load(self, path, replace=replace, processes=processes, dataset_version=dataset_version, progress=progress)

    def check_layout(self, replace: bool) -> None:
        meta = self.read_meta()
        if meta and meta.get("schema_version") != SCHEMA_VERSION and not replace:
            raise RuntimeError("the index was built with another layout; load with --replace")

    def write_meta(self, *, replace: bool, dataset_version: str | None, count: int, next_seq: int) -> None:
        """Record what was loaded (dataset.json beside the engine directory), atomically."""
        meta = self.read_meta() if not replace else {}
        meta.update({
            "schema_version": SCHEMA_VERSION,
            "dataset_version": dataset_version or meta.get("dataset_version") or dt.date.today().isoformat(),
            "count": count,
            "next_seq": next_seq,
            "loaded_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        })
        target = self.directory / META_FILE
        temporary = target.with_suffix(".tmp")
        temporary.write_bytes(orjson.dumps(meta))
        temporary.replace(target)

    def read_meta(self) -> dict:
        path = self.directory / META_FILE
        return orjson.loads(path.read_bytes()) if path.exists() else {}

    def next_seq(self, replace: bool) -> int:
        return 0 if replace else int(self.read_meta().get("next_seq", 0))


class EmbeddedWriter(DatasetWriter):
    """The one writer of an index directory (tantivy locks it); readers keep answering from the last commit."""

    def __init__(self, backend: EmbeddedBackend, *, replace: bool, threads: int):
        self.backend = backend
        backend.directory.mkdir(parents=True, exist_ok=True)
        backend.check_layout(replace)
        backend.create_index(replace=False)
        self.index = tantivy.Index.open(str(backend.engine_dir))
        self._writer = self.index.writer(heap_size=512_000_000 if threads != 1 else 256_000_000, num_threads=threads)
        self.replace = replace
        self._loaded: set[str] = set()
        if replace:
            self._writer.delete_all_documents()
        self.max_seq = backend.next_seq(replace) - 1

    def add(self, documents: list) -> None:
        """documents: (id, seq, engine JSON) from prepare_document; a later document with the same id replaces the earlier."""
        writer, loaded, replace = self._writer, self._loaded, self.replace
        for record_id, seq, document in documents:
            if not replace or record_id in loaded:  # after --replace only this load's own repeats need deleting
                writer.delete_documents_by_term("id", record_id)
            loaded.add(record_id)
            writer.add_json(document.decode())
            if seq > self.max_seq:
                self.max_seq = seq

    def close(self, dataset_version: str | None) -> int:
        self._writer.commit()
        self._writer.wait_merging_threads()
        self.index.reload()
        count = self.index.searcher().num_docs
        self.backend.write_meta(replace=self.replace, dataset_version=dataset_version, count=count, next_seq=self.max_seq + 1)
        return count


def _count(searcher: tantivy.Searcher, query: Query) -> int:
    return searcher.search(query, 1, count=True).count  # tantivy refuses a limit of 0


def _source(searcher: tantivy.Searcher, address) -> dict:
    return orjson.loads(searcher.doc(address)["_source"][0])
