"""PDL's `required` enrich parameter: a boolean expression over record fields (`emails AND (profiles
OR phone_numbers)`, `profiles.network:linkedin`) that a match must satisfy, else the enrichment
answers 404.

Grammar (words case-insensitive): expr = term {OR term}; term = factor {AND factor}; factor = NOT
factor | ( expr ) | field[:value]. A field is present when some value at its dotted path (through
object arrays) is not null, "" or []; `field:value` holds when one such value equals the value
(case-insensitive). Fields are the person schema's (GET /v2/person/schema).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable

from app.errors import ApiError
from plugins.person import profile_fields

MAX_LENGTH = 1000
MAX_NESTING = 50  # parentheses and NOTs, well inside Python's recursion limit
_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")
_FIELD = re.compile(r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$")
Requirement = Callable[[dict], bool]


class RequiredError(ApiError):
    def __init__(self, message: str):
        super().__init__(400, f"required: {message}", fields={"required": [message]})


def compile_required(text: str | None) -> Requirement | None:
    """The expression as a predicate over a record, or None when there is none; RequiredError (400)
    when malformed."""
    if text is None or not text.strip():
        return None
    if len(text) > MAX_LENGTH:
        raise RequiredError(f"at most {MAX_LENGTH} characters")
    return _compile(text.strip())


@lru_cache(maxsize=256)
def _compile(text: str) -> Requirement:
    tokens = _tokens(text)
    if sum(token == "(" or token.upper() == "NOT" for token in tokens) > MAX_NESTING:
        raise RequiredError(f"at most {MAX_NESTING} parentheses and NOTs")
    predicate, position = _or(tokens, 0)
    if position != len(tokens):
        raise RequiredError(f"unexpected {tokens[position]!r} after a complete expression")
    return predicate


def _tokens(text: str) -> list[str]:
    tokens, position = [], 0
    while position < len(text):
        found = _TOKEN.match(text, position)
        if not found or not found.group(1):
            break
        tokens.append(found.group(1))
        position = found.end()
    return tokens


def _or(tokens: list[str], position: int):
    return _joined(tokens, position, "OR", _and, any)


def _and(tokens: list[str], position: int):
    return _joined(tokens, position, "AND", _factor, all)


def _joined(tokens: list[str], position: int, word: str, operand, combine):
    """operand {word operand}: one predicate holding when `combine` (any, all) of the operands'
    hold."""
    first, position = operand(tokens, position)
    parts = [first]
    while position < len(tokens) and tokens[position].upper() == word:
        part, position = operand(tokens, position + 1)
        parts.append(part)
    return (
        parts[0] if len(parts) == 1 else (lambda record: combine(p(record) for p in parts))
    ), position


def _factor(tokens: list[str], position: int):
    if position >= len(tokens):
        raise RequiredError("the expression ends where a field was expected")
    token = tokens[position]
    if token.upper() == "NOT":
        inner, position = _factor(tokens, position + 1)
        return (lambda record: not inner(record)), position
    if token == "(":
        inner, position = _or(tokens, position + 1)
        if position >= len(tokens) or tokens[position] != ")":
            raise RequiredError("a parenthesis is not closed")
        return inner, position + 1
    if token == ")" or token.upper() in ("AND", "OR"):
        raise RequiredError(f"expected a field name, got {token!r}")
    return _field_test(token), position + 1


def _field_test(token: str) -> Requirement:
    path, _, wanted = token.partition(":")
    if not _FIELD.match(path) or (
        profile_fields.field(path) is None and path not in profile_fields.OBJECT_PATHS
    ):
        raise RequiredError(f"unknown field {path!r} (GET /v2/person/schema lists the fields)")
    keys = path.split(".")
    if not wanted:
        return lambda record: any(_filled(value) for value in _values(record, keys))
    wanted = wanted.lower()
    return lambda record: any(
        isinstance(value, (str, int, float)) and str(value).lower() == wanted
        for value in _leaves(_values(record, keys))
    )


def _values(node, keys: list[str]):
    """Every value at the path, descending through lists of objects."""
    if not keys:
        yield node
        return
    if isinstance(node, list):
        for item in node:
            yield from _values(item, keys)
    elif isinstance(node, dict) and keys[0] in node:
        yield from _values(node[keys[0]], keys[1:])


def _leaves(values):
    for value in values:
        if isinstance(value, list):
            yield from value
        else:
            yield value


def _filled(value) -> bool:
    if isinstance(value, list):
        return any(_filled(item) for item in value)
    if isinstance(value, dict):
        return any(_filled(item) for item in value.values())
    return value is not None and value != ""
