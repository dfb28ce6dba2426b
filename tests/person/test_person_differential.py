"""The embedded engine checked by a real one: Hypothesis writes queries over every clause, option
and field the DSL accepts (and SQL searches through their translation), runs each on the embedded
index and on an OpenSearch node holding the same generated profiles, and asserts the same total and
the same hits: in the same order when sorted, and as the same set on the first page of a
relevance-ordered search wherever OpenSearch's scores tell the hits apart."""

from __future__ import annotations

import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.config import DEFAULTS
from plugins.person import dsl, profile_fields, sql
from plugins.person.backends.embedded import EmbeddedBackend
from plugins.person.analysis import analyze
from plugins.person.backends.embedded.query import B, K1, is_constant_score, leaves
from plugins.person.backends.opensearch import OpenSearchBackend
from plugins.person.loader import load_file
from plugins.person.profile_fields import BOOLEAN, DATE, FLOAT, INTEGER, KEYWORD, TEXT
from tests.person.conftest import OPENSEARCH_MISSING

PROFILES, SEED = 3000, 77
EXAMPLES = int(os.environ.get("HIREKIT_DIFFERENTIAL_EXAMPLES", "2000"))
SQL_EXAMPLES = max(1, EXAMPLES // 4)
SCORE_TOLERANCE = 1e-3  # relative: OpenSearch scores closer than this do not tell hits apart

pytestmark = pytest.mark.skipif(
    bool(OPENSEARCH_MISSING),
    reason=f"the differential test starts OpenSearch with Java "
    f"and Maven: {' and '.join(OPENSEARCH_MISSING)} not on PATH",
)


def values_at(record, path: str) -> list:
    """Every value at a dotted path, through object arrays and lists."""
    nodes = [record]
    for part in path.split("."):
        found = []
        for node in nodes:
            value = node.get(part) if isinstance(node, dict) else None
            found += value if isinstance(value, list) else [] if value is None else [value]
        nodes = found
    return [node for node in nodes if not isinstance(node, (dict, list))]


def length_spread(values: list[list[str]]) -> float:
    """How far, relatively, the embedded engine's BM25 for one token of a text field may stray
    from Lucene's on these profiles' values (docs/person-search.md): tantivy averages the field's
    length over every profile, Lucene over those with a value, and the boost that makes up for it
    is exact only at the average length."""
    lengths = [[analyze(value) for value in record] for record in values]
    present = [tokens for tokens in lengths if tokens]
    if not present or len(present) == len(values):
        return 0.0
    share = len(present) / len(values)
    average = sum(len(t) for tokens in present for t in tokens) / len(present)
    boost = (1 + K1 * (1 - B + B / share)) / (1 + K1)
    spread = 0.0
    for tokens in present:
        flat = [token for value in tokens for token in value]
        lucene = K1 * (1 - B + B * len(flat) / average)
        engine = K1 * (1 - B + B * len(flat) / (average * share))
        for tf in set(Counter(flat).values()):
            spread = max(spread, abs(boost * (tf + lucene) / (tf + engine) - 1))
    return spread


def scored_text_paths(query: dict) -> set[str]:
    """The text fields a query's term, match and match_phrase clauses name."""
    found = set()
    for kind, body in leaves(query):
        if kind in ("term", "match", "match_phrase"):
            ((path, _),) = body.items()
            if profile_fields.FIELDS[path].kind == TEXT:
                found.add(path)
    return found


class Engines:
    """The same profiles on both engines, and what queries are made of: each field's values as
    loaded."""

    def __init__(
        self, embedded: EmbeddedBackend, opensearch: OpenSearchBackend, profiles: list[dict]
    ):
        self.embedded = embedded
        self.opensearch = opensearch
        self.pools: dict[str, list] = {}
        for path in profile_fields.FIELDS:
            seen = {value for record in profiles for value in values_at(record, path)}
            self.pools[path] = sorted(seen, key=repr)[:400] or ["absent"]
        self.spread = {
            path: length_spread([values_at(record, path) for record in profiles])
            for path, f in profile_fields.FIELDS.items()
            if f.kind == TEXT
        }
        self.words = {
            path: sorted(
                {word for value in self.pools[path] for word in str(value).lower().split()}
            )
            for path, f in profile_fields.FIELDS.items()
            if f.kind == TEXT
        }

    def compare(self, query: dict, sort: list, size: int, offset: int) -> None:
        validated = dsl.validate_query(query)
        keys = dsl.validate_sort(sort)
        if keys and keys[-1][0] != "id":
            keys = [
                *keys,
                ("id", "asc"),
            ]  # both engines break ties their own way: the id makes the order total
        embedded = self.embedded.search(validated, size=size, offset=offset, sort=keys)
        if keys and not (keys[0][0] == "_score" and not is_constant_score(validated)):
            opensearch = self.opensearch.search(validated, size=size, offset=offset, sort=keys)
            assert embedded.total == opensearch.total, (query, keys)
            assert [hit["id"] for hit in embedded.hits] == [hit["id"] for hit in opensearch.hits], (
                query,
                keys,
            )
            return
        total, scores = self.opensearch_scores(validated, size, offset)
        assert embedded.total == total, (query, keys)
        embedded_ids = {hit["id"] for hit in embedded.hits}
        assert len(embedded_ids) == len(scores), (query, keys)
        if offset:  # ties at both edges of a later relevance page: nothing certain to compare
            return
        if total <= size:
            certain = {hit_id for hit_id, _ in scores}  # the page holds every hit
        else:
            spread = max([self.spread[path] for path in scored_text_paths(validated)], default=0.0)
            edge = scores[-1][1] * (1 + spread) * (1 + SCORE_TOLERANCE) + 1e-9
            certain = {hit_id for hit_id, score in scores if score * (1 - spread) > edge}
        assert certain <= embedded_ids, (query, sorted(certain - embedded_ids))

    def opensearch_scores(self, query: dict, size: int, offset: int) -> tuple[int, list]:
        """(total, [(id, score)]) of a relevance-ordered page: the request the backend sends for
        it (relevance, then the id), read raw for the scores."""
        body = {
            "query": query,
            "size": size,
            "track_total_hits": True,
            "sort": [{"_score": {"order": "desc"}}, {"id": {"order": "asc"}}],
        }
        if offset:
            body["from"] = offset
        answer = self.opensearch.client.search(body, index=self.opensearch.index, timeout=None)
        hits = answer["hits"]["hits"]
        return answer["hits"]["total"]["value"], [(hit["_id"], hit["sort"][0]) for hit in hits]


@pytest.fixture(scope="module")
def engines(tmp_path_factory, sample_file, opensearch_url):
    path = sample_file(PROFILES, SEED)
    embedded = EmbeddedBackend(str(tmp_path_factory.mktemp("differential") / "index"))
    assert not load_file(embedded, path, replace=True, processes=1, writer_threads=1).skipped
    opensearch = OpenSearchBackend.from_config(
        {**DEFAULTS, "OPENSEARCH_TIMEOUT": 60.0}, opensearch_url, "hirekit-differential"
    )
    opensearch.create_index(replace=True)
    assert not load_file(opensearch, path, replace=True, processes=1, writer_threads=1).skipped
    import orjson

    with open(path, "rb") as lines:
        profiles = [orjson.loads(line) for line in lines]
    yield Engines(embedded, opensearch, profiles)
    opensearch.drop_index()


# --- the query strategies: built from the loaded values, so most clauses match something
FIELDS = sorted(profile_fields.FIELDS)
PATTERN_FIELDS = [path for path in FIELDS if profile_fields.FIELDS[path].kind in (KEYWORD, TEXT)]
RANGE_FIELDS = [
    path for path in FIELDS if profile_fields.FIELDS[path].kind in (INTEGER, FLOAT, DATE, KEYWORD)
]
SORT_FIELDS = [path for path in FIELDS if profile_fields.FIELDS[path].sortable]
EXISTS_PATHS = sorted({*FIELDS, *profile_fields.OBJECT_PATHS})


def value_of(engines: Engines, draw, path: str):
    """A value for `path`: mostly one the dataset holds, sometimes one it does not."""
    f = profile_fields.FIELDS[path]
    if f.kind == TEXT:
        return " ".join(
            draw(st.lists(st.sampled_from(engines.words[path] or ["x"]), min_size=1, max_size=3))
        )
    if draw(st.integers(0, 9)) == 0:
        return {KEYWORD: "zz-absent", INTEGER: -5, FLOAT: 99.5, DATE: "1901-01", BOOLEAN: False}[
            f.kind
        ]
    value = draw(st.sampled_from(engines.pools[path]))
    if f.kind == DATE and draw(st.booleans()):
        value = str(value)[: draw(st.sampled_from([4, 7]))]  # yyyy or yyyy-MM
    return value


def pattern_of(engines: Engines, draw, path: str, wildcard: bool) -> str:
    f = profile_fields.FIELDS[path]
    source = draw(st.sampled_from(engines.words[path] if f.kind == TEXT else engines.pools[path]))
    source = str(source) or "a"
    if not wildcard:
        return source[: draw(st.integers(1, max(1, min(len(source), 6))))]
    cut = draw(st.integers(0, min(len(source), 8)))
    tail = source[cut + 1 :][-draw(st.integers(0, 5)) :] if draw(st.booleans()) else ""
    return source[:cut] + draw(st.sampled_from(["*", "?", "*?"])) + tail


def leaf(engines: Engines):
    @st.composite
    def build(draw):
        kind = draw(
            st.sampled_from(
                [
                    "term",
                    "terms",
                    "match",
                    "match_phrase",
                    "exists",
                    "range",
                    "prefix",
                    "wildcard",
                    "match_all",
                ]
            )
        )
        if kind == "match_all":
            return {"match_all": {}}
        if kind == "exists":
            return {"exists": {"field": draw(st.sampled_from(EXISTS_PATHS))}}
        if kind in ("prefix", "wildcard"):
            path = draw(st.sampled_from(PATTERN_FIELDS))
            return {kind: {path: pattern_of(engines, draw, path, kind == "wildcard")}}
        if kind == "range":
            path = draw(st.sampled_from(RANGE_FIELDS))
            bounds = {}
            for lower, upper in (("gt", "gte"), ("lt", "lte")):
                if draw(st.booleans()):
                    bounds[draw(st.sampled_from([lower, upper]))] = value_of(engines, draw, path)
            return {"range": {path: bounds or {"gte": value_of(engines, draw, path)}}}
        path = draw(st.sampled_from(FIELDS))
        if kind == "terms":
            return {
                "terms": {
                    path: [value_of(engines, draw, path) for _ in range(draw(st.integers(1, 4)))]
                }
            }
        if kind == "term":
            return {"term": {path: value_of(engines, draw, path)}}
        text = value_of(engines, draw, path)
        if kind == "match":
            options = {"query": text}
            if draw(st.booleans()):
                options["operator"] = draw(st.sampled_from(["and", "or", "AND"]))
            if draw(st.integers(0, 3)) == 0:
                options["minimum_should_match"] = draw(st.sampled_from([1, 2, "50%", "-1", "75%"]))
            return {"match": {path: options}}
        options = {"query": text}
        if draw(st.booleans()):
            options["slop"] = draw(st.integers(0, 3))
        return {"match_phrase": {path: options}}

    return build()


def queries(engines: Engines):
    def extend(children):
        clauses = st.lists(children, max_size=3)
        return st.fixed_dictionaries(
            {},
            optional={
                "must": clauses,
                "filter": clauses,
                "should": clauses,
                "must_not": clauses,
                "minimum_should_match": st.sampled_from([0, 1, 2, "50%", "-1"]),
            },
        ).map(lambda body: {"bool": body})

    return st.recursive(leaf(engines), extend, max_leaves=6)


def sorts():
    key = st.one_of(
        st.tuples(st.sampled_from(SORT_FIELDS), st.sampled_from(["asc", "desc"])),
        st.just(("_score", "desc")),
    )
    return st.lists(key, max_size=3).map(lambda keys: [{path: order} for path, order in keys])


DIFFERENTIAL = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)


@DIFFERENTIAL
@given(data=st.data())
def test_dsl_queries_answer_alike_on_both_engines(engines, data):
    query = data.draw(queries(engines), label="query")
    sort = data.draw(sorts(), label="sort")
    size = data.draw(st.sampled_from([1, 7, 25, 100]), label="size")
    offset = data.draw(st.sampled_from([0, 0, 0, 3, 40]), label="from")
    try:
        dsl.validate_query(query)
    except dsl.DslError:  # a query the API would refuse with a 400 is not compared
        return
    engines.compare(query, sort, size, offset)


def sql_value(engines: Engines, draw, path: str) -> str:
    value = value_of(engines, draw, path)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def sql_conditions(engines: Engines):
    @st.composite
    def condition(draw):
        path = draw(st.sampled_from(FIELDS))
        f = profile_fields.FIELDS[path]
        shape = draw(
            st.sampled_from(
                ["=", "!=", "<", ">=", "like", "in", "not in", "is null", "is not null"]
            )
        )
        if shape in ("<", ">=") and f.kind not in (INTEGER, FLOAT, DATE, KEYWORD):
            shape = "="
        if shape == "like":
            if f.kind not in (KEYWORD, TEXT):
                shape = "="
            else:
                pattern = pattern_of(engines, draw, path, True).replace("*", "%").replace("?", "%")
                if set(pattern) & set("'\\_"):
                    pattern = pattern.translate({ord(c): None for c in "'\\_"}) or "a%"
                return f"{path} LIKE '{pattern}'"
        if shape in ("in", "not in"):
            values = ", ".join(
                sql_value(engines, draw, path) for _ in range(draw(st.integers(1, 3)))
            )
            return f"{path} {shape.upper()} ({values})"
        if shape.startswith("is"):
            return f"{path} {shape.upper()}"
        return f"{path} {shape} {sql_value(engines, draw, path)}"

    def combine(children):
        return st.one_of(
            st.tuples(children, st.sampled_from([" AND ", " OR "]), children).map(
                lambda parts: f"({parts[0]}{parts[1]}{parts[2]})"
            ),
            children.map(lambda inner: f"NOT ({inner})"),
        )

    return st.recursive(condition(), combine, max_leaves=5)


@settings(DIFFERENTIAL, max_examples=SQL_EXAMPLES)
@given(data=st.data())
def test_sql_searches_answer_alike_on_both_engines(engines, data):
    where = data.draw(sql_conditions(engines), label="where")
    statement = f"SELECT * FROM person WHERE {where}"
    try:
        query = sql.to_query(statement)
        dsl.validate_query(query)
    except (sql.SqlError, dsl.DslError):
        return
    engines.compare(query, [], data.draw(st.sampled_from([10, 50]), label="size"), 0)
