"""Canonical DSL (plugins/person/dsl.py) -> tantivy queries that score like Elasticsearch, and the
query pieces paging combines."""

from __future__ import annotations

import itertools
import math

import tantivy
from tantivy import FieldType, Occur, Query

from app.errors import ApiError
from plugins.person import profile_fields
from plugins.person.analysis import analyze
from plugins.person.backends.embedded.layout import SCHEMA, keyword, source
from plugins.person.backends.embedded.lexical import lexical_range
from plugins.person.backends.embedded.phrase import may_reorder, needs_check, sloppy_match
from plugins.person.dsl import resolve_minimum_should_match
from plugins.person.flatten import flatten
from plugins.person.profile_fields import BOOLEAN, DATE, FLOAT, INTEGER, KEYWORD, TEXT
from plugins.person.query_budget import ENGINE_AUTOMATON_STATES

# BM25 as OpenSearch scores it (Lucene's LegacyBM25Similarity, which keeps the (k1 + 1) factor
# tantivy keeps too)
K1 = 1.2
B = 0.75


class PatternTooComplex(ApiError):
    """400: a prefix or wildcard pattern compiles to an automaton larger than the engine builds."""

    def __init__(self, kind: str, path: str, value: str):
        super().__init__(
            400,
            f"query.{kind}.{path}: the pattern {value!r} compiles to more than "
            f"{ENGINE_AUTOMATON_STATES:,} "
            "automaton states, the embedded engine's limit (query budget); use fewer ? after a * "
            "or a shorter pattern",
        )


class QueryBuilder:
    """Canonical DSL (plugins/person/dsl.py) -> a tantivy Query with Elasticsearch's scores.

    `prepare` compiles the query's patterns first, so a pattern the engine cannot build is refused
    before any other work."""

    def __init__(self, searcher: tantivy.Searcher):
        self.searcher = searcher
        self._patterns: dict[tuple[str, str], Query] = {}

    def prepare(self, node: dict) -> "QueryBuilder":
        """Compile every prefix and wildcard pattern of `node` (PatternTooComplex when the engine
        refuses one)."""
        for kind, body in leaves(node):
            if kind in ("prefix", "wildcard"):
                ((path, options),) = body.items()
                self.searcher.check()
                self._pattern(kind, path, options["value"])
        return self

    def _pattern(self, kind: str, path: str, value: str) -> Query:
        regex = _escape(value) + ".*" if kind == "prefix" else _wildcard_regex(value)
        compiled = self._patterns.get((path, regex))
        if compiled is None:
            try:
                compiled = Query.regex_query(SCHEMA, path, regex)
            except ValueError as error:
                if "size limit" not in str(error):
                    raise
                raise PatternTooComplex(kind, path, value) from None
            self._patterns[(path, regex)] = compiled
        return compiled

    def build(self, node: dict, scoring: bool = True) -> Query:
        ((kind, body),) = node.items()
        return getattr(self, f"_{kind}")(body, scoring)

    # leaves
    def _term(self, body, scoring):
        ((path, value),) = body.items()
        return self._exact(profile_fields.FIELDS[path], value, scoring)

    def _exact(self, f: profile_fields.Field, value, scoring: bool) -> Query:
        if f.kind in (INTEGER, DATE, FLOAT):
            number = self._number(f, value)
            return constant(self._range_query(f, number, number, True, True), 1.0)
        text = keyword(value)
        query = Query.term_query(SCHEMA, f.path, text)
        if not scoring:
            return query
        if f.kind == TEXT:
            return self._text_scored(query, f.path, [text])
        # keyword: no norms, so a matching term scores (k1 + 1) * idf * tf/(tf + k1) with tf = 1,
        # which is idf
        return constant(query, self._idf(f.path, text))

    def _idf(self, path: str, term: str, documents: int = 0) -> float:
        """BM25's idf of `term` over `documents`: by default the documents with a value at `path`,
        as Lucene counts."""
        documents = (
            documents or self.searcher.doc_freq("_field_names", path) or self.searcher.num_docs
        )
        df = self.searcher.doc_freq(path, term)
        return math.log(1 + (documents - df + 0.5) / (df + 0.5))

    def _text_scored(self, query: Query, path: str, terms: list[str]) -> Query:
        """A term or phrase query on a text field, boosted to score as Lucene's BM25 does a document
        of average length.

        tantivy counts every document where Lucene counts those with a value at `path`, both for the
        idf and for the average length (the same tokens over more documents); the boost makes up
        both for a document as long as the average, and the longer or shorter a document is, the
        more its score still differs."""
        documents = self.searcher.doc_freq("_field_names", path)
        everything = self.searcher.num_docs
        if not documents or documents == everything:
            return query
        lucene = sum(self._idf(path, term, documents) for term in terms)
        engine = sum(self._idf(path, term, everything) for term in terms)
        # at the average length Lucene's length factor is 1; tantivy's, over all documents, is 1 - b
        # + b * all/with
        lengths = (1 + K1 * (1 - B + B * everything / documents)) / (1 + K1)
        return Query.boost_query(query, lucene / engine * lengths)

    def _terms(self, body, scoring):
        ((path, values),) = body.items()
        f = profile_fields.FIELDS[path]
        if f.kind in (INTEGER, DATE, FLOAT):
            subs = [(Occur.Should, self._exact(f, v, False)) for v in values]
            return constant(Query.boolean_query(subs), 1.0)
        return constant(Query.term_set_query(SCHEMA, path, [keyword(v) for v in values]), 1.0)

    def _analyzed(self, body, scoring, build) -> Query:
        """match and match_phrase: an exact match on a field that is not text, nothing when the text
        has no token, else `build(path, options, tokens, scoring)`."""
        ((path, options),) = body.items()
        f = profile_fields.FIELDS[path]
        if f.kind != TEXT:
            return self._exact(f, options["query"], scoring)
        tokens = analyze(options["query"])
        if not tokens:
            return Query.empty_query()
        return build(f, options, tokens, scoring)

    def _match(self, body, scoring):
        return self._analyzed(body, scoring, self._match_tokens)

    def _match_tokens(self, f, options, tokens, scoring):
        leaves = [self._exact(f, token, scoring) for token in tokens]
        if options.get("operator") == "and":
            return Query.boolean_query([(Occur.Must, q) for q in leaves])
        # one token is one term query: minimum_should_match has nothing to count
        if len(leaves) == 1:
            return leaves[0]
        wanted = max(
            1, resolve_minimum_should_match(options.get("minimum_should_match", 1), len(leaves))
        )
        if wanted > len(leaves):
            return Query.empty_query()
        if wanted > 1 and cheaper_as_conjunctions(
            [self.searcher.doc_freq(f.path, token) for token in tokens], wanted
        ):
            return at_least(leaves, [self._exact(f, token, False) for token in tokens], wanted)
        return Query.boolean_query([(Occur.Should, q) for q in leaves], wanted)

    def _match_phrase(self, body, scoring):
        return self._analyzed(body, scoring, self._phrase_tokens)

    def _phrase_tokens(self, f, options, tokens, scoring):
        if len(tokens) == 1:
            return self._exact(f, tokens[0], scoring)
        slop = options.get("slop", 0)
        query = Query.phrase_query(SCHEMA, f.path, tokens, slop)
        scored = self._text_scored(query, f.path, tokens) if scoring else query
        if not needs_check(tokens, slop, f.multi):
            return scored
        matched = self._checked_phrase(f.path, tokens, slop, query)
        if not scoring:
            return matched
        return Query.boolean_query([(Occur.Must, constant(matched, 0.0)), (Occur.Should, scored)])

    def _checked_phrase(self, path: str, tokens: list[str], slop: int, sloppy: Query) -> Query:
        """The documents Lucene's sloppy phrase matches (phrase.py): the exact phrase's, and those
        of the other candidates (tantivy's sloppy matches, or every document with each token where
        tokens may swap places) whose values pass sloppy_match."""
        exact = Query.phrase_query(SCHEMA, path, tokens, 0)
        if may_reorder(tokens, slop):
            each = [(Occur.Must, Query.term_query(SCHEMA, path, t)) for t in set(tokens)]
            sloppy = Query.boolean_query(each)
        unsure = narrowed(sloppy, excluded=exact)
        ids = [
            r["id"] for r in self._records(unsure) if sloppy_match(_values(r, path), tokens, slop)
        ]
        if not ids:
            return exact
        checked = Query.term_set_query(SCHEMA, "id", ids)
        return Query.boolean_query([(Occur.Should, exact), (Occur.Should, checked)])

    def _records(self, query: Query):
        """The records `query` matches, read from their `_source`."""
        total = count_hits(self.searcher, query)
        if not total:
            return
        for step, (_, address) in enumerate(self.searcher.search(query, total, count=False).hits):
            self.searcher.check(step)
            yield source(self.searcher, address)

    def _exists(self, body, scoring):
        return constant(Query.term_query(SCHEMA, "_field_names", body["field"]), 1.0)

    def _range(self, body, scoring):
        ((path, bounds),) = body.items()
        f = profile_fields.FIELDS[path]
        lower = bounds.get("gte", bounds.get("gt"))
        upper = bounds.get("lte", bounds.get("lt"))
        if f.kind == KEYWORD:
            return constant(self._keyword_range(path, bounds), 1.0)
        query = self._range_query(
            f,
            None if lower is None else self._number(f, lower),
            None if upper is None else self._number(f, upper),
            "gt" not in bounds,
            "lt" not in bounds,
        )
        return constant(query, 1.0)

    def _range_query(self, f, lower, upper, include_lower, include_upper) -> Query:
        field_type = FieldType.Float if f.kind == FLOAT else FieldType.Integer
        return Query.range_query(
            SCHEMA, f.path, field_type, lower, upper, include_lower, include_upper
        )

    def _keyword_range(self, path: str, bounds: dict) -> Query:
        """Lexical range on a keyword: the engine has no string ranges, so each bound becomes an
        automaton over the term dictionary (lexical.py); a bound too long to compile (past ~25
        characters) enumerates the terms in range."""
        lower = bounds.get("gte", bounds.get("gt"))
        upper = bounds.get("lte", bounds.get("lt"))
        pattern = lexical_range(
            lower, upper, include_lower="gt" not in bounds, include_upper="lt" not in bounds
        )
        if pattern is None:
            return Query.empty_query()
        try:
            return Query.regex_query(SCHEMA, path, pattern)
        except ValueError:  # past the engine's automaton size or nesting limit
            return self._enumerated_range(path, bounds)

    def _enumerated_range(self, path: str, bounds: dict) -> Query:
        """The terms in range, listed from the term dictionary (from the bounds' common prefix)."""
        lower = bounds.get("gte", bounds.get("gt"))
        upper = bounds.get("lte", bounds.get("lt"))
        prefix = _common_prefix(lower, upper) if lower is not None and upper is not None else ""
        matching = []
        for step, (term, _) in enumerate(self.searcher.terms_with_prefix(path, prefix)):
            self.searcher.check(step)
            if lower is not None and (term < lower or ("gt" in bounds and term == lower)):
                continue
            if upper is not None and (term > upper or ("lt" in bounds and term == upper)):
                continue
            matching.append(term)
        return Query.term_set_query(SCHEMA, path, matching) if matching else Query.empty_query()

    def _number(self, f: profile_fields.Field, value):
        if f.kind == DATE:
            return profile_fields.date_ordinal(value)
        return float(value) if f.kind == FLOAT else int(value)

    def _prefix(self, body, scoring):
        ((path, options),) = body.items()
        return constant(self._pattern("prefix", path, options["value"]), 1.0)

    def _wildcard(self, body, scoring):
        ((path, options),) = body.items()
        return constant(self._pattern("wildcard", path, options["value"]), 1.0)

    def _match_all(self, body, scoring):
        return Query.all_query()

    def _bool(self, body, scoring):
        must = [self.build(c, scoring) for c in body.get("must", [])]
        filters = [constant(self.build(c, False), 0.0) for c in body.get("filter", [])]
        must_not = [self.build(c, False) for c in body.get("must_not", [])]
        should = [self.build(c, scoring) for c in body.get("should", [])]
        if not (must or filters or must_not or should):
            return Query.all_query()
        required = must + filters
        default = 1 if should and not required else 0
        wanted = resolve_minimum_should_match(
            body.get("minimum_should_match", default), len(should)
        )
        # only must_not: matched against everything, minimum_should_match unused
        if not (should or required):
            wanted = 0
        if wanted > len(should):  # more should clauses wanted than there are: nothing matches
            return Query.empty_query()
        # Lucene: should clauses with nothing required match at least one, whatever 0 says
        if should and not required:
            wanted = max(1, wanted)
        subs = (
            [(Occur.Must, q) for q in required]
            + [(Occur.Should, q) for q in should]
            + [(Occur.MustNot, q) for q in must_not]
        )
        if not required and wanted == 0:
            # Lucene matches nothing for a purely negative bool
            subs.append((Occur.Must, constant(Query.all_query(), 0.0)))
        return Query.boolean_query(subs, wanted) if wanted else Query.boolean_query(subs)


# minimum_should_match rewritten as conjunctions (at_least) up to this many of them
MAX_COMBINATIONS = 20


def at_least(scored: list[Query], unscored: list[Query], wanted: int) -> Query:
    """Documents matching at least `wanted` of the clauses, scored by the sum of those they match,
    as the union of every `wanted` clauses' conjunction filtering the clauses' plain disjunction
    (see cheaper_as_conjunctions)."""
    return Query.boolean_query(
        [(Occur.Must, constant(combinations_of(unscored, wanted), 0.0))]
        + [(Occur.Should, q) for q in scored]
    )


def cheaper_as_conjunctions(frequencies: list[int], wanted: int) -> bool:
    """True when at least `wanted` of terms with these document frequencies is better searched by
    at_least than by the engine's minimum_should_match, which reads every posting of every term:
    each conjunction skips along its rarest term, so the union reads about the sum of each group's
    smallest frequency."""
    if not 2 <= wanted < len(frequencies) or math.comb(len(frequencies), wanted) > MAX_COMBINATIONS:
        return False
    return sum(min(group) for group in itertools.combinations(frequencies, wanted)) < sum(
        frequencies
    )


def combinations_of(clauses: list[Query], wanted: int) -> Query:
    """Documents matching at least `wanted` of `clauses`: the union of every `wanted` of them
    together."""
    return Query.boolean_query(
        [
            (Occur.Should, Query.boolean_query([(Occur.Must, q) for q in group]))
            for group in itertools.combinations(clauses, wanted)
        ]
    )


# clauses, a match or phrase counting its words, past which one engine call may run long
LONG_SEARCH_WEIGHT = 16


def may_run_long(node: dict) -> bool:
    """Whether one engine call of this query may run long enough to matter to its deadline: it
    compiles an automaton (a prefix, a wildcard, a range on a keyword field) or weighs more than
    LONG_SEARCH_WEIGHT. Other queries' calls are short, and their deadline is checked between
    them."""
    weight = 0
    for kind, body in leaves(node):
        ((path, options),) = (
            body.items() if isinstance(body, dict) and len(body) == 1 else (("", None),)
        )
        field = profile_fields.FIELDS.get(path)
        if kind in ("prefix", "wildcard") or (
            kind == "range" and field is not None and field.kind == KEYWORD
        ):
            return True
        text = (
            options.get("query")
            if kind in ("match", "match_phrase") and isinstance(options, dict)
            else None
        )
        weight += len(str(text).split()) if text is not None else 1
    return weight > LONG_SEARCH_WEIGHT


def leaves(node: dict):
    """(kind, body) of every clause of a canonical query that is not a bool."""
    ((kind, body),) = node.items()
    if kind != "bool":
        yield kind, body
        return
    for occur in ("must", "filter", "should", "must_not"):
        for child in body.get(occur, []):
            yield from leaves(child)


def is_constant_score(node: dict, scoring: bool = True) -> bool:
    """True when every matching document gets the same score, so relevance order is index order
    (cheap to page)."""
    if not scoring:
        return True
    ((kind, body),) = node.items()
    if kind == "bool":
        should = body.get("should", [])
        if should:
            required = bool(body.get("must") or body.get("filter"))
            wanted = resolve_minimum_should_match(
                body.get("minimum_should_match", 0 if required else 1), len(should)
            )
            if wanted < len(should):
                return False
        return all(is_constant_score(c) for c in body.get("must", []) + should)
    if kind in ("term", "match", "match_phrase"):
        ((path, _),) = body.items()
        return profile_fields.FIELDS[path].kind != TEXT
    return True


def requires_value(node: dict, path: str) -> bool:
    """True when every document the canonical query matches has a value at `path` (a required clause
    on it), so a sort on `path` has no documents without a value to count or append."""
    ((kind, body),) = node.items()
    if kind == "bool":
        return any(
            requires_value(child, path) for child in body.get("must", []) + body.get("filter", [])
        )
    if kind == "exists":
        return body["field"] == path
    if kind in ("term", "terms", "range", "prefix", "wildcard", "match", "match_phrase"):
        return path in body
    return False


def constant(query: Query, score: float) -> Query:
    """`query` with every hit scoring `score`."""
    return Query.const_score_query(query, score)


def _values(record: dict, path: str) -> list[str]:
    """A record's text values at `path`, as a list."""
    value = flatten(record).get(path)
    return [] if value is None else value if isinstance(value, list) else [value]


def _wildcard_regex(value: str) -> str:
    """An Elasticsearch wildcard (* any run, ? one character) as the engine's regex."""
    return "".join(".*" if c == "*" else "." if c == "?" else _escape(c) for c in value)


def _escape(text: str) -> str:
    return "".join("\\" + c if not c.isalnum() and ord(c) < 128 else c for c in text)


def _common_prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def narrowed(query: Query, *required: Query, excluded: Query | None = None) -> Query:
    """`query`'s hits (and scores) that every `required` query matches too and `excluded` does
    not."""
    subs = [(Occur.Must, query)] + [(Occur.Must, constant(q, 0.0)) for q in required]
    if excluded is not None:
        subs.append((Occur.MustNot, excluded))
    return Query.boolean_query(subs)


def sort_parts(query: Query, path: str, implied: bool) -> tuple[Query, Query | None]:
    """(the documents with a value at `path`, the ones without or None when the query leaves
    none)."""
    if implied:
        return query, None
    has_value = Query.term_query(SCHEMA, "_field_names", path)
    return narrowed(query, has_value), narrowed(query, excluded=has_value)


def known_total(searcher: tantivy.Searcher, node: dict) -> int | None:
    """How many documents the canonical `node` matches, when the index statistics tell without a
    search (None when they do not): every document for match_all; on an index without deleted
    documents (whose term frequencies still count them), a keyword term's or an exists's document
    frequency, or the documents left by a bool of one such must_not clause alone."""
    ((kind, body),) = node.items()
    if kind == "match_all":
        return searcher.num_docs
    # every document has an id: some are deleted
    if searcher.doc_freq("_field_names", "id") != searcher.num_docs:
        return None
    if kind == "bool":
        if (
            body.get("must")
            or body.get("filter")
            or body.get("should")
            or len(body.get("must_not", [])) != 1
        ):
            return None
        excluded = _frequency(searcher, body["must_not"][0])
        return None if excluded is None else searcher.num_docs - excluded
    return _frequency(searcher, node)


def _frequency(searcher: tantivy.Searcher, node: dict) -> int | None:
    """The document frequency of a keyword term or an exists (None for other clauses)."""
    ((kind, body),) = node.items()
    if kind == "exists":
        return searcher.doc_freq("_field_names", body["field"])
    if kind == "term":
        ((path, value),) = body.items()
        if profile_fields.FIELDS[path].kind in (KEYWORD, BOOLEAN):
            return searcher.doc_freq(path, keyword(value))
    return None


def count_hits(searcher: tantivy.Searcher, query: Query) -> int:
    """How many documents `query` matches."""
    return searcher.search(query, 1, count=True).count  # tantivy refuses a limit of 0
