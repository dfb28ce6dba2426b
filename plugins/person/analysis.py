"""The standard analyzer (as tantivy's `default` tokenizer applies it), engine-free: the embedded
index and the query budget count the same tokens."""

from __future__ import annotations

import re

TOKEN_PATTERN = re.compile(r"[^\W_]+")
MAX_TOKEN_BYTES = 40


def analyze(text: str) -> list[str]:
    """Split on non-alphanumerics, lowercase, drop tokens of 40 bytes or more (the engine does not
    index them)."""
    return [t for t in TOKEN_PATTERN.findall(text.lower()) if len(t.encode()) < MAX_TOKEN_BYTES]
