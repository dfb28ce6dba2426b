"""Lexical ranges on keyword fields as regular expressions: the engine has no string range query,
and enumerating the terms in range from Python costs a list of every term (a range over a million
ids: a million tuples, seconds of CPU). An automaton lets the engine walk its own term dictionary
instead. Terms order by code point, as Python strings do."""

from __future__ import annotations

MAX_CODE_POINT = 0x10FFFF
ANY = "(?s:.)"


def lexical_range(
    lower: str | None, upper: str | None, *, include_lower: bool, include_upper: bool
) -> str | None:
    """A regex matching exactly the strings within the bounds (None: no bound on that side); None
    when no string is. Both bounds make one automaton, so on a list field one value must fit both,
    as in Elasticsearch."""
    if lower is None and upper is None:
        return f"{ANY}*"
    if upper is None:
        return _at_least(lower, include_lower)
    if lower is None:
        return _at_most(upper, include_upper, allow_empty=True)
    if lower > upper or (lower == upper and not (include_lower and include_upper)):
        return None
    shared = 0
    while shared < min(len(lower), len(upper)) and lower[shared] == upper[shared]:
        shared += 1
    prefix = "".join(_literal(c) for c in lower[:shared])
    rest_lower, rest_upper = lower[shared:], upper[shared:]
    # lower is upper, or a prefix of it: what follows the prefix is at most the rest of upper
    if not rest_lower:
        if not rest_upper:
            return prefix
        tail = _at_most(rest_upper, include_upper, allow_empty=include_lower)
        return None if tail is None else prefix + tail
    first_lower, first_upper = ord(rest_lower[0]), ord(rest_upper[0])  # first_lower < first_upper
    branches = [_literal(rest_lower[0]) + _at_least(rest_lower[1:], include_lower)]
    upper_tail = _at_most(rest_upper[1:], include_upper, allow_empty=True)
    if upper_tail is not None:
        branches.append(_literal(rest_upper[0]) + upper_tail)
    if first_upper - first_lower > 1:
        branches.append(_class(first_lower + 1, first_upper - 1) + f"{ANY}*")
    return prefix + "(?:" + "|".join(branches) + ")"


def _at_least(bound: str, inclusive: bool) -> str:
    """Strings >= bound (> when not inclusive): bound's first i characters then a greater character
    and anything, or bound itself followed by anything (by at least one character when
    exclusive)."""
    tail = f"{ANY}*" if inclusive else f"{ANY}+"
    for char in reversed(bound):
        branches = [_literal(char) + tail]
        if ord(char) < MAX_CODE_POINT:
            branches.append(_class(ord(char) + 1, MAX_CODE_POINT) + f"{ANY}*")
        tail = "(?:" + "|".join(branches) + ")"
    return tail


def _at_most(bound: str, inclusive: bool, *, allow_empty: bool) -> str | None:
    """Strings <= bound (< when not inclusive): a proper prefix of bound, or bound's first i
    characters then a smaller character and anything, or (inclusive) bound itself. Without
    allow_empty the empty string is left out. None when no string is."""
    tail = "" if inclusive else None  # None: nothing matches past the whole bound
    for position in range(len(bound) - 1, -1, -1):
        char = bound[position]
        # stopping here: a proper prefix, which sorts first
        branches = [""] if position > 0 or allow_empty else []
        if tail is not None:
            branches.append(_literal(char) + tail)
        if ord(char) > 0:
            branches.append(_class(0, ord(char) - 1) + f"{ANY}*")
        tail = "(?:" + "|".join(branches) + ")" if branches else None
    if tail == "" and not allow_empty:
        return None
    return tail


def _literal(char: str) -> str:
    return f"\\x{{{ord(char):X}}}"


def _class(low: int, high: int) -> str:
    return f"[\\x{{{low:X}}}-\\x{{{high:X}}}]"
