"""PDL's SQL search (`SELECT * FROM person WHERE ...`) translated into the person DSL, so every
backend serves it unchanged.

Parsed with sqlglot (a maintained parser and transpiler; its AST gives operator precedence, quoting
and dotted names for free). The translation, clause by clause:

  field = 'v'       term (on a text field: match_phrase, the words in order)
  field != 'v'      bool.must_not [the `=` clause]   (also <>)
  < <= > >=         range lt, lte, gt, gte
  LIKE 'ab%'        prefix when the only % is at the end, else wildcard (% -> *);
                    only % is a wildcard
  IN ('a', 'b')     terms (on a text field: a should of match_phrase); NOT IN wraps it in must_not
  IS NULL           bool.must_not [exists];  IS NOT NULL: exists
  a AND b           bool.must [a, b]  (nested ANDs flatten into one list)
  a OR b            bool.should [a, b] (minimum_should_match 1, as a should-only bool has)
  NOT a             bool.must_not [a]
  no WHERE          match_all

Anything else (other columns than *, another table, LIMIT, ORDER BY, GROUP BY, joins, functions,
comparing two fields, several statements) is a 400 naming it; unknown fields are refused by the DSL
validator the result goes through.
"""

from __future__ import annotations

import re
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from app.errors import ApiError
from plugins.person import profile_fields
from plugins.person.profile_fields import TEXT
from plugins.person.query_budget import MAX_SQL_LENGTH

TABLE = "person"
COMPARISONS = {exp.GT: "gt", exp.GTE: "gte", exp.LT: "lt", exp.LTE: "lte"}
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Select arguments a query may carry: everything else (limit, order, group, having, joins, with,
# distinct...) is refused
ALLOWED_SELECT_PARTS = {"expressions", "from", "from_", "where"}
REFUSED_PARTS = {
    "limit": "LIMIT is not supported; use size (and scroll_token or from to go further)",
    "offset": "OFFSET is not supported; use from or scroll_token",
    "order": "ORDER BY is not supported; use sort",
    "group": "GROUP BY is not supported: searches answer profiles, not aggregates",
    "having": "HAVING is not supported: searches answer profiles, not aggregates",
    "joins": "joins are not supported: query the person table alone",
    "distinct": "DISTINCT is not supported",
    "with": "WITH (common table expressions) is not supported",
    "with_": "WITH (common table expressions) is not supported",
}


class SqlError(ApiError):
    """A SQL search the translator refuses: 400 whose message starts with `sql:` and names the
    problem."""

    def __init__(self, message: str):
        super().__init__(400, f"sql: {message}", fields={"sql": [message]})


def to_query(sql) -> dict:
    """The DSL query a SQL search means (not yet validated against the fields: dsl.validate_query
    does that)."""
    if not isinstance(sql, str) or not sql.strip():
        raise SqlError(
            "expected a SELECT statement as a string, e.g. SELECT * FROM person WHERE "
            "job_company_name = 'acme'"
        )
    if len(sql) > MAX_SQL_LENGTH:
        raise SqlError(
            f"the statement has {len(sql):,} characters; the query budget allows at most "
            f"{MAX_SQL_LENGTH:,}"
        )
    try:
        return _translate(sql.strip())
    except RecursionError:
        raise SqlError("the conditions nest too deeply") from None


@lru_cache(maxsize=512)
def _translate(sql: str) -> dict:
    """Cached by statement text: a scroll resends the same SQL for every batch. Callers must not
    mutate the answer (dsl.validate_query builds a new structure)."""
    statement = _parse(sql)
    _check_shape(statement)
    where = statement.args.get("where")
    return {"match_all": {}} if where is None else _condition(where.this)


def _parse(sql: str) -> exp.Select:
    try:
        statements = [s for s in sqlglot.parse(sql) if s is not None]
    except (ParseError, TokenError) as error:
        raise SqlError(f"cannot parse the statement: {_parse_problem(error)}") from None
    # sqlglot's own slips on odd input are still the input's fault
    except (ValueError, TypeError, AttributeError, IndexError):
        raise SqlError("cannot parse the statement") from None
    if len(statements) != 1:
        raise SqlError("send exactly one SELECT statement")
    statement = statements[0]
    if not isinstance(statement, exp.Select):
        raise SqlError(f"only SELECT is supported, got {statement.key.upper()}")
    return statement


def _parse_problem(error: Exception) -> str:
    details = getattr(error, "errors", None)
    if details:
        first = details[0]
        description = str(first.get("description") or "invalid syntax")
        if description.startswith("Required keyword"):
            description = "the statement is incomplete"
        return f"{description} (line {first.get('line')}, column {first.get('col')})"
    return _ANSI.sub("", str(error)).splitlines()[0]


def _check_shape(statement: exp.Select) -> None:
    for part, message in REFUSED_PARTS.items():
        if statement.args.get(part):
            raise SqlError(message)
    unknown = [
        part for part, value in statement.args.items() if value and part not in ALLOWED_SELECT_PARTS
    ]
    if unknown:
        raise SqlError(
            f"unsupported clause {unknown[0].upper()}: only SELECT * FROM person WHERE ... is "
            "supported"
        )
    columns = statement.expressions
    if len(columns) != 1 or not isinstance(columns[0], exp.Star):
        raise SqlError(
            f"only SELECT * is supported (got SELECT {', '.join(c.sql() for c in columns)}): "
            "searches answer whole profiles; trim them with data_include"
        )
    source = statement.args.get("from") or statement.args.get("from_")
    table = source.this if source else None
    if (
        not isinstance(table, exp.Table)
        or table.name.lower() != TABLE
        or table.args.get("db")
        or table.args.get("catalog")
    ):
        raise SqlError(f"query FROM {TABLE} (got {source.this.sql() if source else 'no FROM'})")
    if table.args.get("alias"):
        raise SqlError(
            "table aliases are not supported: name fields by their path, e.g. experience.title.name"
        )


def _condition(node: exp.Expression) -> dict:
    if isinstance(node, exp.Paren):
        return _condition(node.this)
    if isinstance(node, exp.And):
        return {"bool": {"must": _flatten(node, exp.And)}}
    if isinstance(node, exp.Or):
        return {"bool": {"should": _flatten(node, exp.Or)}}
    if isinstance(node, exp.Not):
        return _negate(node.this)
    if isinstance(node, exp.EQ):
        path, value = _field_and_value(node)
        return _equals(path, value)
    if isinstance(node, exp.NEQ):
        path, value = _field_and_value(node)
        return {"bool": {"must_not": [_equals(path, value)]}}
    if type(node) in COMPARISONS:
        path, value = _field_and_value(node, flip=True)
        bound = COMPARISONS[type(node)] if path[1] else _FLIPPED[COMPARISONS[type(node)]]
        return {"range": {path[0]: {bound: value}}}
    if isinstance(node, exp.Like):
        return _like(node)
    if isinstance(node, exp.In):
        return _in(node)
    if isinstance(node, exp.Is):
        return _is_null(node)
    raise SqlError(
        f"unsupported condition {_snippet(node)}: use =, !=, <, <=, >, >=, LIKE, IN, IS [NOT] "
        "NULL, AND, OR, NOT"
    )


_FLIPPED = {"gt": "lt", "gte": "lte", "lt": "gt", "lte": "gte"}


def _flatten(node: exp.Expression, kind: type) -> list[dict]:
    """a AND b AND c as one list (sqlglot nests binary operators left-deep)."""
    parts: list[dict] = []
    stack = [node]
    while stack:
        current = stack.pop()
        inner = (
            current.this
            if isinstance(current, exp.Paren) and isinstance(current.this, kind)
            else current
        )
        if isinstance(inner, kind):
            stack.extend((inner.expression, inner.this))
        else:
            parts.append(_condition(inner))
    return parts


def _negate(node: exp.Expression) -> dict:
    inner = node.this if isinstance(node, exp.Paren) else node
    if isinstance(inner, exp.Is) and isinstance(inner.expression, exp.Null):
        return {"exists": {"field": _field(inner.this)}}  # IS NOT NULL
    return {"bool": {"must_not": [_condition(node)]}}


def _equals(path: str, value) -> dict:
    if _is_text(path):
        return {"match_phrase": {path: _text(path, value)}}
    return {"term": {path: value}}


def _like(node: exp.Like) -> dict:
    path = _field(node.this)
    pattern = _value(node.expression, path)
    if not isinstance(pattern, str):
        raise SqlError(f"LIKE on {path} needs a single-quoted pattern such as 'eng%'")
    if "*" in pattern or "?" in pattern:
        raise SqlError(
            f"LIKE pattern {pattern!r} on {path}: only % is a wildcard; * and ? cannot be matched "
            "literally"
        )
    if not pattern.strip("%"):
        return {"exists": {"field": path}}
    if pattern.endswith("%") and "%" not in pattern[:-1]:
        return {"prefix": {path: pattern[:-1]}}
    return {"wildcard": {path: pattern.replace("%", "*")}}


def _in(node: exp.In) -> dict:
    path = _field(node.this)
    if node.args.get("query") or node.args.get("unnest") or node.args.get("field"):
        raise SqlError(f"IN on {path} takes a list of values, not a subquery")
    values = [_value(item, path) for item in node.expressions]
    if not values:
        raise SqlError(f"IN on {path} needs at least one value")
    if _is_text(path):
        return {"bool": {"should": [{"match_phrase": {path: _text(path, v)}} for v in values]}}
    return {"terms": {path: values}}


def _is_null(node: exp.Is) -> dict:
    path = _field(node.this)
    if not isinstance(node.expression, exp.Null):
        raise SqlError(f"IS on {path} supports only IS NULL and IS NOT NULL")
    return {"bool": {"must_not": [{"exists": {"field": path}}]}}


def _field_and_value(node: exp.Binary, flip: bool = False):
    """(path, value) of `field op value`; with flip, also `value op field`, answered as ((path,
    field_first), value)."""
    left, right = node.this, node.expression
    if _is_column(left) and not _is_column(right):
        path = _field(left)
        value = _value(right, path)
        return ((path, True), value) if flip else (path, value)
    if flip and _is_column(right) and not _is_column(left):
        path = _field(right)
        return (path, False), _value(left, path)
    if _is_column(left) and _is_column(right):
        raise SqlError(
            f"{_snippet(node)} compares two fields; compare a field with a value "
            "(strings in single quotes: double quotes name fields)"
        )
    raise SqlError(f"{_snippet(node)} needs a field on one side and a value on the other")


def _is_column(node) -> bool:
    return isinstance(node, (exp.Column, exp.Dot))


def _field(node) -> str:
    """The dotted path a column names (experience.title.name), as the DSL takes it."""
    if not _is_column(node):
        raise SqlError(f"expected a field name, got {_snippet(node)}")
    parts = (
        [part.name for part in node.parts]
        if isinstance(node, exp.Column)
        else node.sql().replace("`", "").replace('"', "").split(".")
    )
    if not all(parts):
        raise SqlError(f"cannot read the field name {_snippet(node)}")
    return ".".join(parts)


def _value(node, path: str):
    """A literal: a single-quoted string, a number, true or false; NULL is refused with a pointer to
    IS NULL."""
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        number = _value(node.this, path)
        return -number
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        text = node.this
        try:
            return int(text)
        except ValueError:
            try:
                return float(text)
            except ValueError:
                raise SqlError(f"cannot read the number {text!r} compared with {path}") from None
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Null):
        raise SqlError(f"compare {path} with NULL using IS NULL or IS NOT NULL")
    if _is_column(node):
        raise SqlError(
            f"{_snippet(node)} compared with {path} reads as a field name: quote strings with "
            "single quotes"
        )
    raise SqlError(
        f"expected a value for {path} (a single-quoted string, a number, true or false), got "
        f"{_snippet(node)}"
    )


def _is_text(path: str) -> bool:
    found = profile_fields.field(path)
    return found is not None and found.kind == TEXT


def _text(path: str, value) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise SqlError(f"{path} is a text field: compare it with a string")
    return str(value)


def _snippet(node) -> str:
    text = node.sql() if isinstance(node, exp.Expression) else str(node)
    return text if len(text) <= 80 else text[:77] + "..."
