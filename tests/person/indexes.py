"""Embedded indexes the person tests build in several loads, so that they hold several segments."""

from __future__ import annotations

from pathlib import Path

import orjson

from plugins.person.backends.embedded import EmbeddedBackend
from plugins.person.loader import load_file


def load_in_appends(root: Path, batches: list[list[dict]]) -> EmbeddedBackend:
    """The index at root/index, loaded from `batches` in turn (the first replacing, each from
    root/load-<n>.jsonl)."""
    backend = EmbeddedBackend(str(root / "index"))
    for number, records in enumerate(batches):
        path = root / f"load-{number}.jsonl"
        path.write_bytes(b"".join(orjson.dumps(record) + b"\n" for record in records))
        load_file(backend, str(path), replace=number == 0, processes=1, writer_threads=1)
    return backend
