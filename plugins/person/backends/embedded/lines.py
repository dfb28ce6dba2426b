"""One JSON line to its engine document: by the C fast path (_fastdoc) where it is built and the
line has the usual shape, else by parsing it and prepare_document. Both give the same document; only
the Python path names what is wrong."""

from __future__ import annotations

import orjson

from plugins.person import profile_fields
from plugins.person.backends.embedded import layout
from plugins.person.flatten import ANCESTORS

try:
    import plugins.person.backends.embedded._fastdoc as _fastdoc
except ImportError:  # built by `pip install -e .` where a C compiler is found
    _fastdoc = None

# in the order of _fastdoc.c's kind enum (KEYWORD, TEXT, INTEGER, FLOAT, DATE, BOOLEAN)
_KIND_CODES = {
    kind: code
    for code, kind in enumerate(
        (
            profile_fields.KEYWORD,
            profile_fields.TEXT,
            profile_fields.INTEGER,
            profile_fields.FLOAT,
            profile_fields.DATE,
            profile_fields.BOOLEAN,
        )
    )
}


def fast_path_schema() -> tuple[list, list, list]:
    """(leaves, nodes, names) as _fastdoc.configure takes them, from profile_fields and the layout's
    sort keys."""
    names = sorted({name for path in profile_fields.FIELDS for name in ANCESTORS[path]})
    name_index = {name: k for k, name in enumerate(names)}
    minmax = {path for path, _, _ in layout._MIN_MAX_KEYS}
    folded = {path for path, _, _ in layout._FOLDED_KEYS}
    slots = {path: k for k, path in enumerate(profile_fields.FIELDS)}
    leaves = [
        (
            f.path,
            _KIND_CODES[f.kind],
            not f.multi,
            f.path in minmax,
            f.path in folded,
            [name_index[n] for n in ANCESTORS[f.path]],
        )
        for f in profile_fields.FIELDS.values()
    ]
    nodes: list[list] = [[]]

    def add_object(prefix: str, subpaths: list[str]) -> int:
        index = len(nodes)
        nodes.append([])
        heads: dict[str, list[str]] = {}
        for sub in subpaths:
            head, _, rest = sub.partition(".")
            if rest:
                heads.setdefault(head, []).append(rest)
            else:
                nodes[index].append((head, False, slots[f"{prefix}{head}"]))
        for head, rests in heads.items():
            nodes[index].append((head, True, add_object(f"{prefix}{head}.", rests)))
        return index

    for f in profile_fields.FIELDS.values():
        if not f.in_object_array:
            nodes[0].append((f.path, False, slots[f.path]))
    for parent, children in profile_fields.OBJECT_ARRAYS.items():
        nodes[0].append((parent, True, add_object(f"{parent}.", list(children))))
    return leaves, nodes, names


def _no_fast_path(raw: bytes, seq: int) -> None:
    return None


if _fastdoc is not None:
    _fastdoc.configure(*fast_path_schema())
    _prepare_fast = _fastdoc.prepare
else:
    _prepare_fast = _no_fast_path


def fast_path_built() -> bool:
    return _fastdoc is not None and _prepare_fast is _fastdoc.prepare


def use_python_path() -> None:
    """Build every document on the Python path from now on in this process and the loaders it forks
    (a benchmark's comparison: what a package installed without a C compiler does)."""
    global _prepare_fast
    _prepare_fast = _no_fast_path


def prepare_line(raw: bytes, seq: int) -> tuple[str, int, str, str | None]:
    """(id, seq, engine document, the record's dataset_version if a string) for one stripped JSON
    line.

    Raises orjson.JSONDecodeError for a line that is not JSON, TypeError for JSON that is not an
    object, and ValueError naming the bad field."""
    fast = _prepare_fast(raw, seq)
    if fast is not None:
        return fast
    record = orjson.loads(raw)
    if not isinstance(record, dict):
        raise TypeError("not a JSON object")
    record_id, seq, document = layout.prepare_document(record, raw, seq)
    version = record.get("dataset_version")
    return record_id, seq, document.decode(), version if isinstance(version, str) else None
