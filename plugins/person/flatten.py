"""A record's leaf values per schema path, typed and validated in one pass by walkers compiled from
the schema (the loader's hot path).

`flatten(record)` -> {path: value} for single-valued top-level fields and {path: [values]} for list
fields and every path inside an object array (Elasticsearch flattens non-nested objects the same
way). Keywords and booleans become strings, integers ints, floats floats, dates day ordinals
(profile_fields.date_ordinal). Null and unknown keys are skipped; a value that does not fit its
kind, or a list where the schema wants one value, raises ValueError naming the path.
"""

from __future__ import annotations

from typing import Callable

from plugins.person import profile_fields
from plugins.person.profile_fields import BOOLEAN, DATE, FLOAT, INTEGER, KEYWORD, TEXT

_DATE_CACHE: dict = {}
_DATE_CACHE_LIMIT = 100_000


def _bad(path: str, kind: str, value) -> ValueError:
    return ValueError(f"{path}: {value!r} is not a valid {kind}")


def _converter(path: str, kind: str) -> Callable:
    """value -> typed value for one path (ValueError names the path)."""
    if kind in (KEYWORD, TEXT):

        def convert(value):
            if type(value) is str:
                return value
            if isinstance(value, bool):
                return "true" if value else "false"
            if isinstance(value, (int, float)):
                return str(value)
            raise _bad(path, kind, value)
    elif kind == BOOLEAN:

        def convert(value):
            if isinstance(value, bool):
                return "true" if value else "false"
            if isinstance(value, (str, int, float)):
                return str(value)
            raise _bad(path, kind, value)
    elif kind == INTEGER:

        def convert(value):
            if type(value) is int:
                return value
            try:
                if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                    raise ValueError
                return int(value)
            except (ValueError, OverflowError):
                raise _bad(path, kind, value) from None
    elif kind == FLOAT:

        def convert(value):
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise _bad(path, kind, value)
            try:
                return float(value)
            except ValueError:
                raise _bad(path, kind, value) from None
    elif kind == DATE:

        def convert(value):
            try:
                return _DATE_CACHE[value]
            except (KeyError, TypeError):
                pass
            try:
                ordinal = profile_fields.date_ordinal(value)
            except (ValueError, TypeError, OverflowError):
                raise _bad(path, kind, value) from None
            if isinstance(value, str) and len(_DATE_CACHE) < _DATE_CACHE_LIMIT:
                _DATE_CACHE[value] = ordinal
            return ordinal
    else:  # pragma: no cover - profile_fields.KINDS is closed
        raise AssertionError(kind)
    return convert


def _top_level_walker(f: profile_fields.Field) -> Callable:
    convert = _converter(f.path, f.kind)
    path = f.path
    if f.multi:

        def walk(out: dict, value) -> None:
            items = value if type(value) is list else [value]
            typed = [convert(v) for v in items if v is not None]
            if typed:
                out[path] = typed
    else:

        def walk(out: dict, value) -> None:
            if type(value) is list:
                raise ValueError(f"{path}: expected one value, not a list")
            out[path] = convert(value)

    return walk


def _object_walker(prefix: str, children: dict) -> Callable:
    """Walks one object (an item of an object array or a sub-object), appending typed leaves to
    their paths."""
    steps: dict[str, Callable] = {}
    nested: dict[str, dict] = {}
    for sub in children:
        head, _, rest = sub.partition(".")
        if rest:
            nested.setdefault(head, {})[rest] = children[sub]
        else:
            steps[head] = _leaf_appender(f"{prefix}{head}", children[sub])
    for head, grandchildren in nested.items():
        steps[head] = _object_walker(f"{prefix}{head}.", grandchildren)
    label = prefix.rstrip(".")
    # the common leaves, appended without a call: keyword and text strings as they are, dates
    # already in _DATE_CACHE
    strings = {
        head: f"{prefix}{head}"
        for head, kind in children.items()
        if "." not in head and kind in (KEYWORD, TEXT)
    }
    dates = {
        head: f"{prefix}{head}"
        for head, kind in children.items()
        if "." not in head and kind == DATE
    }

    def walk(out: dict, value) -> None:
        if type(value) is list:
            for item in value:
                if item is not None:
                    walk(out, item)
            return
        if type(value) is not dict:
            raise ValueError(f"{label}: expected an object, got {value!r}")
        for key, item in value.items():
            if item is None or item == []:
                continue
            if type(item) is str:
                path, typed = strings.get(key), item
                if path is None:
                    path = dates.get(key)
                    typed = _DATE_CACHE.get(item) if path is not None else None
                if typed is not None:
                    bucket = out.get(path)
                    if bucket is None:
                        out[path] = [typed]
                    else:
                        bucket.append(typed)
                    continue
            step = steps.get(key)
            if step is not None:
                step(out, item)

    return walk


def _leaf_appender(path: str, kind: str) -> Callable:
    convert = _converter(path, kind)

    def append(out: dict, value) -> None:
        items = value if type(value) is list else (value,)
        for item in items:
            if item is None:
                continue
            typed = convert(item)
            bucket = out.get(path)
            if bucket is None:
                out[path] = [typed]
            else:
                bucket.append(typed)

    return append


def _compile() -> dict[str, Callable]:
    walkers: dict[str, Callable] = {}
    for f in profile_fields.FIELDS.values():
        if not f.in_object_array:
            walkers[f.path] = _top_level_walker(f)
    for parent, children in profile_fields.OBJECT_ARRAYS.items():
        kinds = {sub: profile_fields.FIELDS[f"{parent}.{sub}"].kind for sub in children}
        walkers[parent] = _object_walker(f"{parent}.", kinds)
    return walkers


_WALKERS = _compile()
_SINGLE_STRINGS = frozenset(
    f.path
    for f in profile_fields.FIELDS.values()
    if f.kind in (KEYWORD, TEXT) and not f.multi and not f.in_object_array
)


def flatten(record: dict) -> dict:
    """{path: typed value or [typed values]} for every non-null known leaf of `record`; ValueError
    names a bad path."""
    out: dict = {}
    for key, item in record.items():
        if item is None:
            continue
        # the common top-level value, stored without a call
        if type(item) is str and key in _SINGLE_STRINGS:
            out[key] = item
            continue
        step = _WALKERS.get(key)
        if step is not None:
            step(out, item)
    return out


def _ancestors() -> dict[str, tuple[str, ...]]:
    """path -> the path and every object path above it: what `exists` answers true for when the path
    has a value."""
    found = {}
    for path in profile_fields.FIELDS:
        parts = path.split(".")
        found[path] = tuple(".".join(parts[:depth]) for depth in range(1, len(parts) + 1))
    return found


ANCESTORS = _ancestors()


_NAMES_CACHE: dict[tuple, list[str]] = {}
_NAMES_CACHE_LIMIT = 10_000


def present_names(flat: dict) -> list[str]:
    """Every path with a value plus its parent objects, once each (records of a dataset share a few
    shapes, so the answer is kept per shape)."""
    shape = tuple(flat)
    names = _NAMES_CACHE.get(shape)
    if names is None:
        found: set[str] = set()
        for path in shape:
            found.update(ANCESTORS[path])
        names = list(found)
        # start over: the shapes seen lately are the likeliest next
        if len(_NAMES_CACHE) >= _NAMES_CACHE_LIMIT:
            _NAMES_CACHE.clear()
        _NAMES_CACHE[shape] = names
    return names
