"""The index layout (which tantivy field holds what) and the engine document a record becomes,
shared by every layer above."""

from __future__ import annotations

import base64

import orjson
import tantivy

from plugins.person import profile_fields
from plugins.person.flatten import flatten, present_names
from plugins.person.profile_fields import BOOLEAN, DATE, FLOAT, INTEGER, KEYWORD, TEXT

# One tantivy field per Elasticsearch path (see reference/embedded-search.md):
#   <path> keyword: raw tokens; text: the standard-analyzer tokens with positions; integer/date:
#   i64; float: f64 <path> (fast) single-valued keywords are their own sort key
#   <path>__min/__max list keywords' sort keys (the smallest and largest value: Elasticsearch sorts
#   arrays by min asc, max desc) <path>__asc/__desc integer/date sort keys that fold the ingest
#   sequence in, so ties break by index order and a
#                      scroll continues with one range query
#   _field_names       one raw term per non-empty path and its parent objects: `exists`
#   _seq               ingest order, the tiebreaker and the cheap continuation key
#   _source            the original JSON line, returned as is

SCHEMA_VERSION = 2
SEQ_BITS = 31
SEQ_MAX = (1 << SEQ_BITS) - 1
VALUE_OFFSET = 1 << 31


def sort_field(path: str, order: str) -> str:
    """The fast field a sort on `path` reads: single-valued keywords sort on themselves, lists on
    their min (asc) or max (desc) twin, numbers and dates on a key that folds the ingest sequence in
    (ties by index order)."""
    f = profile_fields.FIELDS[path]
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
    for f in profile_fields.FIELDS.values():
        if f.kind in (KEYWORD, BOOLEAN):
            builder.add_text_field(
                f.path, tokenizer_name="raw", index_option="basic", fast=f.sortable and not f.multi
            )
            if f.sortable and f.multi:
                builder.add_text_field(
                    f"{f.path}__min", tokenizer_name="raw", fast=True, index_option="basic"
                )
                builder.add_text_field(
                    f"{f.path}__max", tokenizer_name="raw", fast=True, index_option="basic"
                )
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
_MIN_MAX_KEYS = tuple(
    (f.path, f"{f.path}__min", f"{f.path}__max")
    for f in profile_fields.FIELDS.values()
    if f.sortable and f.multi and f.kind in (KEYWORD, BOOLEAN)
)
_FOLDED_KEYS = tuple(
    (f.path, f"{f.path}__asc", f"{f.path}__desc")
    for f in profile_fields.FIELDS.values()
    if f.sortable and f.kind in (INTEGER, DATE)
)


def keyword(value) -> str:
    """A keyword or boolean value as the raw term the index holds."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def prepare_document(record: dict, raw: bytes, seq: int) -> tuple[str, int, bytes]:
    """One record -> (id, seq, the JSON document tantivy indexes); ValueError names the bad field.
    Runs in loader processes."""
    record_id = profile_fields.require_id(record)
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


def source(searcher: tantivy.Searcher, address) -> dict:
    """The record a hit was loaded from (its `_source`), parsed."""
    return orjson.loads(searcher.doc(address)["_source"][0])
