"""Lucene's sloppy phrase match, checked on a record's values where tantivy's own answer differs."""

from __future__ import annotations

from plugins.person.analysis import analyze

# Elasticsearch's position_increment_gap for text fields: a list's next value starts this many
# positions further on
POSITION_GAP = 100


def needs_check(tokens: list[str], slop: int, multi: bool) -> bool:
    """True when tantivy's sloppy phrase may answer otherwise than Lucene's: it lets a repeated
    token match one position twice, puts a list's values one position apart, and misses some
    reorderings of three or more tokens."""
    if slop == 0:
        return False
    return multi or len(set(tokens)) < len(tokens) or may_reorder(tokens, slop)


def may_reorder(tokens: list[str], slop: int) -> bool:
    """True when the slop lets three or more tokens match out of order (moving a token past another
    costs 2)."""
    return len(tokens) >= 3 and slop >= 2


def positions(values: list[str]) -> dict[str, list[int]]:
    """Each token's positions in a field's values, as Lucene indexes them (POSITION_GAP between
    values)."""
    found: dict[str, list[int]] = {}
    start = 0
    for value in values:
        tokens = analyze(value)
        for offset, token in enumerate(tokens):
            found.setdefault(token, []).append(start + offset)
        start += len(tokens) + POSITION_GAP
    return found


def sloppy_match(values: list[str], tokens: list[str], slop: int) -> bool:
    """True when the phrase `tokens` matches within `slop` as Lucene's SloppyPhraseMatcher counts
    it: each token at a position of its own, their positions less their places in the phrase spread
    over at most `slop`."""
    found = positions(values)
    if any(token not in found for token in tokens):
        return False
    starts = sorted(
        {position - place for place, token in enumerate(tokens) for position in found[token]}
    )
    return any(_fits(found, tokens, start, slop) for start in starts)


def _fits(found: dict[str, list[int]], tokens: list[str], start: int, slop: int) -> bool:
    """True when every token has a position of its own in [start + place, start + place + slop]:
    repeated tokens take the first free one in phrase order, which finds an assignment whenever one
    exists (the windows are of one size)."""
    taken: set[int] = set()
    for place, token in enumerate(tokens):
        low, high = start + place, start + place + slop
        free = next((p for p in found[token] if low <= p <= high and p not in taken), None)
        if free is None:
            return False
        taken.add(free)
    return True
