"""The person search DSL validator: pure, engine-free; turns a client's Elasticsearch-style query
into one canonical form or a 400 naming the clause and field."""

from __future__ import annotations

from app.errors import ApiError
from plugins.person import profile_fields
from plugins.person.analysis import analyze
from plugins.person.profile_fields import BOOLEAN, DATE, FLOAT, INTEGER, KEYWORD, TEXT
from plugins.person.query_budget import (
    MAX_CLAUSES,
    MAX_DEPTH,
    MAX_PATTERN_LENGTH,
    MAX_PATTERN_WILDCARDS,
    MAX_PATTERNS,
    MAX_TERMS,
    MAX_TEXT_LENGTH,
    MAX_TOKENS,
    MAX_VALUES,
    MAX_WILDCARD_TAIL,
)

BOOL_OCCURS = ("must", "filter", "should", "must_not")
RANGE_BOUNDS = ("gt", "gte", "lt", "lte")
CLAUSES = (
    "bool",
    "term",
    "terms",
    "match",
    "match_phrase",
    "exists",
    "range",
    "prefix",
    "wildcard",
    "match_all",
)
SCORE = "_score"


class DslError(ApiError):
    """A malformed query: 400 with a message that says where (e.g. query.bool.must[0].term) and
    what."""

    def __init__(self, where: str, message: str):
        super().__init__(400, f"{where}: {message}")
        self.where, self.detail = where, message


def validate_query(query) -> dict:
    """The canonical form of a query (lists everywhere bool allows one, full option objects) or
    DslError; a query over the query budget (plugins/person/query_budget.py) is refused as soon as
    the walk meets the bound it passes."""
    if isinstance(query, dict) and set(query) == {"query"} and isinstance(query["query"], dict):
        query = query["query"]  # PDL's examples nest it: {"query": {"query": {...}}}
    return _clause(query, "query", 0, Spend())


class Spend:
    """What a query has asked for so far while it is validated: clauses, terms and patterns, against
    MAX_CLAUSES, MAX_TERMS and MAX_PATTERNS."""

    __slots__ = ("clauses", "terms", "patterns")

    def __init__(self):
        self.clauses = self.terms = self.patterns = 0

    def clause(self, where: str) -> None:
        self.clauses += 1
        if self.clauses > MAX_CLAUSES:
            raise DslError(
                where,
                "a "
                f"query holds at most {MAX_CLAUSES} clauses, bool clauses included (query budget)",
            )

    def add_terms(self, count: int, where: str) -> None:
        self.terms += count
        if self.terms > MAX_TERMS:
            raise DslError(
                where,
                f"a query holds at most {MAX_TERMS:,} terms in all (each term or terms value, "
                "match "
                "token, pattern, range and exists counts one; query budget)",
            )

    def add_pattern(self, where: str) -> None:
        self.patterns += 1
        if self.patterns > MAX_PATTERNS:
            raise DslError(
                where,
                f"a query holds at most {MAX_PATTERNS} prefix and wildcard patterns and ranges on "
                "keyword fields (query budget)",
            )
        self.add_terms(1, where)


def _clause(node, where: str, depth: int, spend: Spend) -> dict:
    if depth > MAX_DEPTH:
        raise DslError(where, f"queries nest at most {MAX_DEPTH} levels deep")
    if not isinstance(node, dict) or len(node) != 1:
        raise DslError(
            where,
            "expected an object with exactly one clause, e.g. {\"term\": {\"job_company_name\": "
            "\"acme\"}}",
        )
    ((kind, body),) = node.items()
    if kind not in CLAUSES:
        raise DslError(where, f"unsupported clause {kind!r}; allowed: {', '.join(CLAUSES)}")
    spend.clause(where)
    return {kind: _VALIDATORS[kind](body, f"{where}.{kind}", depth, spend)}


def _bool(body, where: str, depth: int, spend: Spend) -> dict:
    if not isinstance(body, dict):
        raise DslError(
            where, "expected an object with must, filter, should, must_not, minimum_should_match"
        )
    unknown = set(body) - set(BOOL_OCCURS) - {"minimum_should_match"}
    if unknown:
        raise DslError(where, f"unsupported option {sorted(unknown)[0]!r}")
    result: dict = {}
    for occur in BOOL_OCCURS:
        if occur not in body:
            continue
        clauses = body[occur]
        if isinstance(clauses, dict):
            clauses = [clauses]
        if not isinstance(clauses, list):
            raise DslError(f"{where}.{occur}", "expected a clause or a list of clauses")
        _check_cap(clauses, f"{where}.{occur}")
        result[occur] = [
            _clause(c, f"{where}.{occur}[{i}]", depth + 1, spend) for i, c in enumerate(clauses)
        ]
    if "minimum_should_match" in body:
        result["minimum_should_match"] = _minimum_should_match(
            body["minimum_should_match"], f"{where}.minimum_should_match"
        )
    return result


def _single_field(body, where: str, *, allow_object_value: bool = True):
    if not isinstance(body, dict) or len(body) != 1:
        raise DslError(where, "expected an object with exactly one field name")
    ((path, value),) = body.items()
    return _known_field(path, where), value


def _known_field(path, where: str) -> profile_fields.Field:
    found = profile_fields.field(path) if isinstance(path, str) else None
    if found is None:
        if isinstance(path, str) and path in profile_fields.OBJECT_PATHS:
            raise DslError(
                where,
                f"{path!r} is an object; name one of its fields (e.g. {_example_child(path)!r})",
            )
        raise DslError(where, f"unknown field {path!r} (GET /v2/person/schema lists the fields)")
    return found


def _example_child(path: str) -> str:
    return next(p for p in profile_fields.FIELDS if p.startswith(path + "."))


def _term(body, where: str, depth: int, spend: Spend) -> dict:
    f, value = _single_field(body, where)
    if isinstance(value, dict):
        _only_options(value, {"value"}, f"{where}.{f.path}")
        if "value" not in value:
            raise DslError(f"{where}.{f.path}", "missing value")
        value = value["value"]
    spend.add_terms(1, f"{where}.{f.path}")
    return {f.path: _scalar(f, value, f"{where}.{f.path}")}


def _terms(body, where: str, depth: int, spend: Spend) -> dict:
    f, values = _single_field(body, where)
    if not isinstance(values, list) or not values:
        raise DslError(f"{where}.{f.path}", "expected a non-empty list of values")
    _check_cap(values, f"{where}.{f.path}")
    spend.add_terms(len(values), f"{where}.{f.path}")
    return {f.path: [_scalar(f, v, f"{where}.{f.path}") for v in values]}


def _match(body, where: str, depth: int, spend: Spend) -> dict:
    f, value = _single_field(body, where)
    options = value if isinstance(value, dict) else {"query": value}
    _only_options(options, {"query", "operator", "minimum_should_match"}, f"{where}.{f.path}")
    if "query" not in options:
        raise DslError(f"{where}.{f.path}", "missing query")
    result = {"query": _match_text(f, options["query"], f"{where}.{f.path}", spend)}
    operator = options.get("operator", "or")
    if not isinstance(operator, str) or operator.lower() not in ("or", "and"):
        raise DslError(f"{where}.{f.path}.operator", "must be \"or\" or \"and\"")
    result["operator"] = operator.lower()
    if "minimum_should_match" in options:
        result["minimum_should_match"] = _minimum_should_match(
            options["minimum_should_match"], f"{where}.{f.path}.minimum_should_match"
        )
    return {f.path: result}


def _match_phrase(body, where: str, depth: int, spend: Spend) -> dict:
    f, value = _single_field(body, where)
    options = value if isinstance(value, dict) else {"query": value}
    _only_options(options, {"query", "slop"}, f"{where}.{f.path}")
    if "query" not in options:
        raise DslError(f"{where}.{f.path}", "missing query")
    result = {"query": _match_text(f, options["query"], f"{where}.{f.path}", spend)}
    if "slop" in options:
        slop = options["slop"]
        if not _is_int(slop) or not 0 <= slop <= 100:
            raise DslError(f"{where}.{f.path}.slop", "must be an integer 0-100")
        result["slop"] = slop
    return {f.path: result}


def _match_text(f: profile_fields.Field, value, where: str, spend: Spend):
    """The text to match: on a text field its analyzed tokens count against MAX_TOKENS and the
    query's terms, on any other field it is one exact value."""
    if f.kind != TEXT:
        spend.add_terms(1, where)
        return _scalar(f, value, where)
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise DslError(where, "expected text")
    text = _bounded_text(str(value), where)
    tokens = len(analyze(text))
    if tokens > MAX_TOKENS:
        raise DslError(
            where,
            f"the text has {tokens} tokens; the query budget allows at most {MAX_TOKENS} tokens "
            "per match "
            "or match_phrase",
        )
    spend.add_terms(tokens, where)
    return text


def _bounded_text(text: str, where: str) -> str:
    if len(text) > MAX_TEXT_LENGTH:
        raise DslError(
            where,
            f"the text has {len(text):,} characters; the query budget allows at most "
            f"{MAX_TEXT_LENGTH:,} characters per value",
        )
    return text


def _exists(body, where: str, depth: int, spend: Spend) -> dict:
    if not isinstance(body, dict) or set(body) != {"field"}:
        raise DslError(where, "expected {\"field\": <name>}")
    path = body["field"]
    if not (isinstance(path, str) and path in profile_fields.OBJECT_PATHS):
        _known_field(path, where)
    spend.add_terms(1, where)
    return {"field": path}


def _range(body, where: str, depth: int, spend: Spend) -> dict:
    f, bounds = _single_field(body, where)
    here = f"{where}.{f.path}"
    if f.kind not in (INTEGER, FLOAT, DATE, KEYWORD):
        raise DslError(here, f"range works on numbers, dates and keywords, not on {f.kind} fields")
    if not isinstance(bounds, dict) or not bounds:
        raise DslError(here, "expected at least one of gt, gte, lt, lte")
    _only_options(bounds, set(RANGE_BOUNDS), here)
    if "gt" in bounds and "gte" in bounds or "lt" in bounds and "lte" in bounds:
        raise DslError(
            here, "give at most one lower bound (gt or gte) and one upper bound (lt or lte)"
        )
    # the embedded engine compiles a keyword's range into an automaton, like a pattern
    if f.kind == KEYWORD:
        spend.add_pattern(here)
    else:
        spend.add_terms(1, here)
    return {f.path: {name: _scalar(f, value, f"{here}.{name}") for name, value in bounds.items()}}


def _prefix(body, where: str, depth: int, spend: Spend) -> dict:
    return _pattern(body, where, spend, wildcard=False)


def _wildcard(body, where: str, depth: int, spend: Spend) -> dict:
    return _pattern(body, where, spend, wildcard=True)


def _pattern(body, where: str, spend: Spend, *, wildcard: bool) -> dict:
    f, value = _single_field(body, where)
    here = f"{where}.{f.path}"
    if f.kind not in (KEYWORD, TEXT):
        raise DslError(here, f"works on keyword and text fields, not on {f.kind} fields")
    if isinstance(value, dict):
        _only_options(value, {"value"}, here)
        value = value.get("value")
    if not isinstance(value, str) or not value:
        raise DslError(here, "expected a non-empty string")
    if len(value) > MAX_PATTERN_LENGTH:
        raise DslError(
            here,
            f"the pattern has {len(value):,} characters; the query budget allows at most "
            f"{MAX_PATTERN_LENGTH} characters per prefix or wildcard pattern",
        )
    wildcards = value.count("*") + value.count("?") if wildcard else 0
    if wildcards > MAX_PATTERN_WILDCARDS:
        raise DslError(
            here,
            f"the pattern has {wildcards} wildcards; the query budget allows at most "
            f"{MAX_PATTERN_WILDCARDS} * or ? per pattern",
        )
    tail = (
        len(value) - next((i for i, c in enumerate(value) if c in "*?"), len(value))
        if wildcard
        else 0
    )
    if tail > MAX_WILDCARD_TAIL:
        raise DslError(
            here,
            f"the pattern has {tail} characters from its first wildcard to its end; the query "
            "budget "
            f"allows at most {MAX_WILDCARD_TAIL} (text before the first * or ? is not limited by "
            "this)",
        )
    spend.add_pattern(here)
    return {f.path: {"value": value}}


def _match_all(body, where: str, depth: int, spend: Spend) -> dict:
    if body not in ({}, None):
        raise DslError(where, "takes no options")
    return {}


_VALIDATORS = {
    "bool": _bool,
    "term": _term,
    "terms": _terms,
    "match": _match,
    "match_phrase": _match_phrase,
    "exists": _exists,
    "range": _range,
    "prefix": _prefix,
    "wildcard": _wildcard,
    "match_all": _match_all,
}


def _scalar(f: profile_fields.Field, value, where: str):
    """A value checked and typed for the field's kind."""
    if f.kind in (KEYWORD, TEXT):
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise DslError(where, f"expected a string for {f.kind} field {f.path!r}")
        return _bounded_text(str(value), where)
    if isinstance(value, str):
        # numbers and dates given as text: bounded before they are parsed
        _bounded_text(value, where)
    if f.kind == INTEGER:
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value)
        if not _is_int(value):
            raise DslError(where, f"expected an integer for {f.path!r}")
        return value
    if f.kind == FLOAT:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise DslError(where, f"expected a number for {f.path!r}")
        return value
    if f.kind == BOOLEAN:
        if isinstance(value, str) and value in ("true", "false"):
            value = value == "true"
        if not isinstance(value, bool):
            raise DslError(where, f"expected true or false for {f.path!r}")
        return value
    if f.kind == DATE:
        try:
            profile_fields.parse_date(value)
        except ValueError:
            raise DslError(
                where, f"expected a date (yyyy-MM-dd, yyyy-MM or yyyy) for {f.path!r}"
            ) from None
        return value
    raise DslError(where, f"unsupported kind {f.kind}")


def _minimum_should_match(value, where: str):
    if _is_int(value):
        return value
    if isinstance(value, str):
        text = value.strip()
        number = text[:-1] if text.endswith("%") else text
        if number.lstrip("-").isdigit():
            return text
    raise DslError(where, "expected an integer or a percentage such as \"75%\"")


def resolve_minimum_should_match(spec, optional_count: int) -> int:
    """Elasticsearch's reading of minimum_should_match (2, -1, "75%", "-25%") against the number of
    optional clauses. Never below 0, and never cut to the number of optional clauses: asking for
    more than there are matches nothing, as on Elasticsearch and OpenSearch."""
    if isinstance(spec, str):
        text = spec.strip()
        if text.endswith("%"):
            percent = int(text[:-1])
            wanted = int(optional_count * abs(percent) / 100)
            wanted = wanted if percent >= 0 else optional_count - wanted
        else:
            wanted = int(text)
    else:
        wanted = spec
    if wanted < 0:
        wanted = optional_count + wanted
    return max(0, wanted)


def _only_options(options: dict, allowed: set, where: str) -> None:
    unknown = set(options) - allowed
    if unknown:
        raise DslError(
            where,
            f"unsupported option {sorted(unknown)[0]!r}; allowed: {', '.join(sorted(allowed))}",
        )


def _check_cap(values: list, where: str) -> None:
    if len(values) > MAX_VALUES:
        raise DslError(where, f"at most {MAX_VALUES} values are allowed, got {len(values)}")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


MAX_SORT_KEYS = 10


def validate_sort(sort) -> list[tuple[str, str]]:
    """[(field or "_score", "asc"|"desc")] in priority order; empty means relevance (score
    descending). Ties after the last key keep index order. A lone [_score] is the default, so it
    becomes []; a repeated key adds nothing and is dropped."""
    if sort is None or sort == []:
        return []
    if isinstance(sort, (dict, str)):
        sort = [sort]
    if not isinstance(sort, list):
        raise DslError("sort", f"expected a list of sort items, each one of {SORT_ITEM_SHAPES}")
    if len(sort) > MAX_SORT_KEYS:
        raise DslError("sort", f"at most {MAX_SORT_KEYS} sort keys are allowed, got {len(sort)}")
    keys: list[tuple[str, str]] = []
    for i, item in enumerate(sort):
        key = _sort_key(item, f"sort[{i}]")
        if key[0] not in (path for path, _ in keys):
            keys.append(key)
    if keys and keys[-1][0] == SCORE and len(keys) == 1:
        return []
    return keys


SORT_ITEM_SHAPES = (
    '{"field": "x", "order": "asc"|"desc"}, {"x": "asc"|"desc"}, {"x": {"order": "asc"|"desc"}} '
    'or "x"'
)


def _sort_key(item, where: str) -> tuple[str, str]:
    """One sort item in any accepted shape: the {"field", "order"} object or Elasticsearch's three
    forms."""
    if isinstance(item, str):
        path, order = item, None
    # the field-and-order object (no dataset field is named "field")
    elif isinstance(item, dict) and "field" in item:
        _only_options(item, {"field", "order"}, where)
        path, order = item["field"], item.get("order")
    elif isinstance(item, dict) and len(item) == 1:
        ((path, order),) = item.items()
        if isinstance(order, dict):
            _only_options(order, {"order"}, f"{where}.{path}")
            order = order.get("order")
    else:
        raise DslError(where, f"expected one of {SORT_ITEM_SHAPES}")
    if not isinstance(path, str):
        raise DslError(
            where, f"the field to sort on must be a string; expected one of {SORT_ITEM_SHAPES}"
        )
    if path == SCORE:
        if order not in (None, "desc"):
            raise DslError(where, "_score sorts descending only")
        return SCORE, "desc"
    f = _known_field(path, where)
    if f.kind == TEXT:
        raise DslError(where, f"{path!r} is a text field and cannot be sorted on")
    if not f.sortable:
        raise DslError(where, f"{path!r} is inside an object array and cannot be sorted on")
    order = "asc" if order is None else order
    if order not in ("asc", "desc"):
        raise DslError(where, "order must be \"asc\" or \"desc\"")
    return path, order
