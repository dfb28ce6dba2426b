"""The person query budget: text, tokens, patterns, clauses and terms refused with 400 naming the
bound before any search work, on every search route, the SQL path, the MCP tools and the
Elasticsearch backend; the time budget answering 503; all of it documented in /openapi.json."""

from __future__ import annotations

import threading
import time

import pytest

from plugins.person.query_budget import (
    ENGINE_AUTOMATON_STATES,
    MAX_CLAUSES,
    MAX_PATTERN_LENGTH,
    MAX_PATTERN_WILDCARDS,
    MAX_PATTERNS,
    MAX_SQL_LENGTH,
    MAX_TERMS,
    MAX_TEXT_LENGTH,
    MAX_TOKENS,
    MAX_WILDCARD_TAIL,
)
from tests.person.test_person_elasticsearch_contract import INDEX, es_json, hits_answer, pit_cluster

SEARCH_ROUTES = [
    "/v1/person/search",
    "/v2/person/search",
    "/v2/person/search/page",
    "/v1/person/search-enrich",
    "/v2/person/search-enrich",
    "/v1/sandbox/person/search",
    "/v2/sandbox/person/search",
    "/v2/sandbox/person/search/page",
    "/v1/sandbox/person/search-enrich",
]
WORDS = "software engineer manager senior data sales python java lead director".split()


def words(count: int) -> str:
    return " ".join(WORDS[i % len(WORDS)] for i in range(count))


def should(clauses: list) -> dict:
    return {"bool": {"should": clauses}}


OVER_BUDGET = [
    pytest.param(
        {"match": {"job_title": "a" * (MAX_TEXT_LENGTH + 1)}},
        "1,000 characters per value",
        id="match text length",
    ),
    pytest.param(
        {"match": {"summary": "x" * 2_000_000}}, "1,000 characters per value", id="a 2 MB match"
    ),
    pytest.param(
        {"match_phrase": {"summary": {"query": "b" * 5000}}},
        "1,000 characters per value",
        id="match_phrase text length",
    ),
    pytest.param(
        {"term": {"job_company_name": "c" * (MAX_TEXT_LENGTH + 1)}},
        "1,000 characters per value",
        id="term value length",
    ),
    pytest.param(
        {"terms": {"skills": ["go", "d" * (MAX_TEXT_LENGTH + 1)]}},
        "1,000 characters per value",
        id="terms value length",
    ),
    pytest.param(
        {"match": {"job_title": words(MAX_TOKENS + 1)}},
        f"at most {MAX_TOKENS} tokens per match",
        id="match tokens",
    ),
    pytest.param(
        {"match_phrase": {"summary": words(MAX_TOKENS + 1)}},
        f"at most {MAX_TOKENS} tokens per match",
        id="phrase tokens",
    ),
    pytest.param(
        {"prefix": {"full_name": "e" * (MAX_PATTERN_LENGTH + 1)}},
        f"at most {MAX_PATTERN_LENGTH} characters per prefix",
        id="prefix length",
    ),
    pytest.param(
        {"prefix": {"full_name": "e" * 5000}},
        f"at most {MAX_PATTERN_LENGTH} characters per prefix",
        id="prefix past the automaton",
    ),
    pytest.param(
        {"wildcard": {"full_name": "*a" * (MAX_PATTERN_WILDCARDS + 1)}},
        f"at most {MAX_PATTERN_WILDCARDS} * or ?",
        id="wildcards per pattern",
    ),
    pytest.param(
        {"wildcard": {"full_name": "*" + "ab" * MAX_WILDCARD_TAIL}},
        f"allows at most {MAX_WILDCARD_TAIL} (text before",
        id="characters after the first wildcard",
    ),
    pytest.param(
        should([{"wildcard": {"summary": f"*{c}*e*"}} for c in "abcdefghijk"[: MAX_PATTERNS + 1]]),
        f"at most {MAX_PATTERNS} prefix and wildcard patterns",
        id="patterns per query",
    ),
    pytest.param(
        should(
            [
                {"range": {"emails.address": {"gte": c, "lt": f"{c}z"}}}
                for c in "abcdefghij"[: MAX_PATTERNS + 1]
            ]
        ),
        f"at most {MAX_PATTERNS} prefix and wildcard patterns and ranges on keyword fields",
        id="keyword ranges per query",
    ),
    pytest.param(
        should([{"range": {"emails.address": {"gte": f"a{i}"}}} for i in range(199)]),
        f"at most {MAX_PATTERNS} prefix and wildcard patterns and ranges on keyword fields",
        id="199 keyword ranges",
    ),
    pytest.param(
        should(
            [{"prefix": {"full_name": "a"}}] * (MAX_PATTERNS - 1)
            + [{"range": {"emails.address": {"lt": "m"}}}] * 2
        ),
        f"at most {MAX_PATTERNS} prefix and wildcard patterns",
        id="patterns and keyword ranges together",
    ),
    pytest.param(
        should([{"term": {"skills": f"s{i}"}} for i in range(MAX_CLAUSES)]),
        f"at most {MAX_CLAUSES} clauses",
        id="clauses",
    ),
    pytest.param(
        should(
            [
                {"terms": {"skills": [f"s{i}" for i in range(600)]}},
                {"terms": {"skills": [f"t{i}" for i in range(401)]}},
            ]
        ),
        f"at most {MAX_TERMS:,} terms",
        id="terms across the query",
    ),
    pytest.param(
        should([{"match": {"summary": words(60)}} for _ in range(17)]),
        f"at most {MAX_TERMS:,} terms",
        id="match tokens across the query",
    ),
]


def refusal(response) -> str:
    assert response.status_code == 400, response.json
    assert response.json["error"]["type"] == "invalid_request_error"
    return response.json["error"]["message"]


@pytest.mark.parametrize("query, bound", OVER_BUDGET)
def test_an_over_budget_query_is_400_naming_the_bound_and_its_value(person_client, query, bound):
    client, headers = person_client()
    started = time.monotonic()
    response = client.post("/v2/person/search", json={"query": query}, headers=headers)
    assert bound in refusal(response) and "query" in response.json["error"]["message"]
    # refused before any search work (a 2 MB match ran for seconds)
    assert time.monotonic() - started < 2.0


@pytest.mark.parametrize("path", SEARCH_ROUTES)
def test_every_search_route_keeps_the_budget(person_client, path):
    client, headers = person_client("people8", sandbox="people8", ENRICH_VENDOR="local")
    response = client.post(
        path, json={"query": {"match": {"job_title": "z" * 10_000}}}, headers=headers
    )
    assert "1,000 characters per value" in refusal(response)
    over = client.get(
        path,
        query_string={"query": '{"prefix": {"full_name": "%s"}}' % ("q" * 500)},
        headers=headers,
    )
    assert f"at most {MAX_PATTERN_LENGTH} characters per prefix" in refusal(over)


@pytest.mark.parametrize(
    "statement, bound",
    [
        (
            "SELECT * FROM person WHERE full_name LIKE '%s%%'" % ("a" * 2000),
            f"at most {MAX_PATTERN_LENGTH} characters per prefix",
        ),
        (
            "SELECT * FROM person WHERE full_name LIKE '%s'" % ("%a" * 11),
            f"at most {MAX_PATTERN_WILDCARDS} * or ?",
        ),
        (
            "SELECT * FROM person WHERE job_title = '%s'" % ("w " * 800),
            "1,000 characters per value",
        ),
        (
            "SELECT * FROM person WHERE "
            + " OR ".join(f"skills = 's{i}'" for i in range(MAX_CLAUSES + 1)),
            f"at most {MAX_CLAUSES} clauses",
        ),
        (
            "SELECT * FROM person WHERE skills = '" + "v" * MAX_SQL_LENGTH + "'",
            f"at most {MAX_SQL_LENGTH:,}",
        ),
    ],
)
def test_sql_searches_keep_the_same_budget(person_client, statement, bound):
    client, headers = person_client()
    message = refusal(client.post("/v1/person/search", json={"sql": statement}, headers=headers))
    assert message.startswith("sql:") and bound in message


def test_a_pattern_past_the_engines_automaton_limit_is_400_not_500(person_client):
    client, headers = person_client()
    # a *, one character, six ?: more than 1,000 states
    for query in (
        {"wildcard": {"full_name": "*a??????"}},
        {
            "bool": {
                "filter": [{"range": {"full_name": {"gte": "a"}}}],
                "should": [{"wildcard": {"job_title": "*e??????"}}],
            }
        },
    ):
        message = refusal(client.post("/v2/person/search", json={"query": query}, headers=headers))
        # the budget refuses it before the engine compiles it
        assert f"at most {MAX_PATTERN_WILDCARDS} * or ?" in message
    sql = client.post(
        "/v2/person/search",
        json={"sql": "SELECT * FROM person WHERE full_name LIKE '%a______'"},
        headers=headers,
    )
    assert sql.status_code == 200  # SQL's _ is no wildcard here: a plain pattern


def test_queries_at_the_bounds_still_answer(person_client):
    client, headers = person_client()
    at_the_bounds = [
        {"match": {"job_title": {"query": words(MAX_TOKENS), "operator": "or"}}},
        {"match": {"summary": ("a" * 30 + " ") * 32 + "b" * (MAX_TEXT_LENGTH - 31 * 32)}},
        # 200 bytes: well inside the engine's automaton
        {"prefix": {"full_name": "é" * MAX_PATTERN_LENGTH}},
        {
            "wildcard": {
                "full_name": "*" + "*".join("abcdefghij"[: MAX_PATTERN_WILDCARDS - 1]) + "*"
            }
        },
        {"wildcard": {"location_locality": "*o"}},
        {
            "wildcard": {
                "full_name": "e" * (MAX_PATTERN_LENGTH - MAX_WILDCARD_TAIL)
                + "*"
                + "n" * (MAX_WILDCARD_TAIL - 1)
            }
        },
        should([{"prefix": {"full_name": c}} for c in "abcdefghij"[:MAX_PATTERNS]]),
        should(
            [
                {"range": {"emails.address": {"gte": c, "lt": f"{c}z"}}}
                for c in "abcdefghij"[:MAX_PATTERNS]
            ]
        ),
        # numeric ranges are no automata
        should([{"range": {"birth_year": {"gte": 1900 + i}}} for i in range(50)]),
        should([{"term": {"skills": f"s{i}"}} for i in range(MAX_CLAUSES - 1)]),
        should(
            [
                {"terms": {"skills": [f"s{i}" for i in range(600)]}},
                {"terms": {"skills": [f"t{i}" for i in range(400)]}},
            ]
        ),
    ]
    for query in at_the_bounds:
        response = client.post("/v2/person/search", json={"query": query}, headers=headers)
        assert response.status_code == 200, (query, response.json)
    found = client.post(
        "/v2/person/search",
        json={"query": {"wildcard": {"location_locality": "*o"}}},
        headers=headers,
    )
    assert sorted(p["id"] for p in found.json["data"]) == ["p1", "p4", "p8"]


def test_a_search_past_its_time_budget_answers_503_with_retry_after(person_client):
    """A deep page sorted by several keys reads thousands of records in Python: the deadline stops
    it between steps."""
    client, headers = person_client("scroll", PERSON_SEARCH_TIMEOUT=0.002)
    body = {
        "query": {"match_all": {}},
        "size": 100,
        "from": 1100,
        "sort": [{"skills": "asc"}, {"full_name": "desc"}],
    }
    started = time.monotonic()
    response = client.post("/v2/person/search", json=body, headers=headers)
    assert response.status_code == 503 and response.headers["Retry-After"] == "1"
    assert (
        response.json["error"]["type"] == "service_unavailable"
        and "PERSON_SEARCH_TIMEOUT" in response.json["error"]["message"]
    )
    assert time.monotonic() - started < 5.0
    relaxed, relaxed_headers = person_client("scroll")
    assert relaxed.post("/v2/person/search", json=body, headers=relaxed_headers).status_code == 200


def test_a_search_is_answered_at_its_deadline_while_one_engine_call_still_runs(
    person_client, monkeypatch
):
    """One engine call cannot be stopped: the request stops waiting for it at the deadline (503),
    the call runs on to its end on a thread of its own, and the searches after it are answered as
    usual."""
    from plugins.person.backends.embedded.bounded import BoundedSearcher

    engine_search = BoundedSearcher.engine_search
    entered, release, returned = threading.Event(), threading.Event(), threading.Event()

    def one_long_engine_call(self, *args, **kwargs):
        entered.set()
        release.wait(30)  # an engine call still running when the deadline passes
        returned.set()
        return engine_search(self, *args, **kwargs)

    client, headers = person_client("scroll", PERSON_SEARCH_TIMEOUT=0.2)
    monkeypatch.setattr(BoundedSearcher, "engine_search", one_long_engine_call)
    body = {
        "query": {
            "bool": {
                "should": [{"match": {"job_title": "engineer"}}, {"prefix": {"job_title": "eng"}}]
            }
        }
    }
    response = client.post("/v2/person/search", json=body, headers=headers)
    answered_while_running = entered.is_set() and not returned.is_set()
    release.set()
    assert response.status_code == 503 and response.headers["Retry-After"] == "1", response.json
    assert answered_while_running
    assert returned.wait(30)  # the abandoned call ended on its thread
    monkeypatch.setattr(BoundedSearcher, "engine_search", engine_search)
    after = client.post("/v2/person/search", json=body, headers=headers)
    assert after.status_code == 200 and after.json["total"] > 0


def test_only_queries_whose_engine_calls_may_run_long_are_handed_to_the_deadline_pool():
    from plugins.person.backends.embedded.query import may_run_long

    assert not may_run_long({"match_all": {}})
    assert not may_run_long({"match": {"job_title": {"query": "senior software engineer"}}})
    assert not may_run_long(
        {
            "bool": {
                "filter": [
                    {"term": {"location_country": "canada"}},
                    {"range": {"birth_year": {"gte": 1980}}},
                ]
            }
        }
    )
    assert may_run_long({"wildcard": {"job_title": {"value": "eng*r"}}})
    # keyword: an automaton
    assert may_run_long({"bool": {"must": [{"range": {"emails.address": {"gte": "a"}}}]}})
    assert may_run_long({"match": {"summary": {"query": " ".join(["word"] * 17)}}})
    assert may_run_long({"bool": {"should": [{"term": {"skills": f"s{n}"}} for n in range(17)]}})


def test_engine_calls_past_the_thread_bound_wait_within_their_deadline_and_never_run_once_it_passes():  # noqa: E501 - the test's name
    from plugins.person.backends import SearchDeadline, SearchTimedOut
    from plugins.person.backends.embedded.bounded import DEADLINE_THREADS, run_by

    release, started, ran = threading.Event(), threading.Semaphore(0), []
    busy = [
        threading.Thread(
            target=run_by, args=(SearchDeadline(30), lambda: (started.release(), release.wait(30)))
        )
        for _ in range(DEADLINE_THREADS)
    ]
    for thread in busy:
        thread.start()
    for _ in busy:
        # every thread of the process's bound is inside an engine call
        assert started.acquire(timeout=30)
    try:
        with pytest.raises(SearchTimedOut):
            run_by(SearchDeadline(0.1), lambda: ran.append(True))
    finally:
        release.set()
        for thread in busy:
            thread.join(30)
    assert run_by(SearchDeadline(30), lambda: "answered") == "answered" and ran == []


@pytest.mark.plugins("person", "jobs", "mcp")
def test_the_mcp_people_tools_keep_the_budget(client, tenant_a, app):
    from tests.test_mcp_sourcing import load_people, sourcing

    load_people(app)
    for name in ("people_search", "people_search_page"):
        result = sourcing(client, tenant_a, name, {"query": {"match": {"summary": "m" * 100_000}}})
        assert (
            result["isError"] is True
            and "1,000 characters per value" in result["content"][0]["text"]
        )


@pytest.fixture
def es_client(person_client, httpserver):
    client, headers = person_client(
        None,
        SEARCH_BACKEND="elasticsearch",
        ELASTICSEARCH_URL=httpserver.url_for("/").rstrip("/"),
        ELASTICSEARCH_INDEX=INDEX,
        PERSON_SEARCH_TIMEOUT=3.0,
    )
    return client, headers, httpserver


def test_elasticsearch_gets_no_over_budget_query_and_gets_the_time_budget(es_client):
    client, headers, server = es_client
    requests = pit_cluster(server, [es_json(hits_answer(["a"], 1))])
    for query in (q.values[0] for q in OVER_BUDGET):
        refusal(client.post("/v2/person/search", json={"query": query}, headers=headers))
    assert requests == []  # refused before sending
    answered = client.post(
        "/v2/person/search", json={"query": {"match": {"job_title": "engineer"}}}, headers=headers
    )
    searches = [body for _, path, body in requests if path == "/_search"]
    assert answered.status_code == 200 and len(searches) == 1
    assert searches[0]["timeout"].endswith("ms") and 0 < int(searches[0]["timeout"][:-2]) <= 3000


def test_elasticsearch_timed_out_answer_is_503_not_a_partial_page(es_client):
    client, headers, server = es_client
    pit_cluster(server, [es_json({**hits_answer(["a"], 50), "timed_out": True})])
    response = client.post("/v1/person/search", json={"query": {"match_all": {}}}, headers=headers)
    assert response.status_code == 503 and response.headers["Retry-After"] == "3"
    assert "time budget of 3 s" in response.json["error"]["message"]


def test_openapi_lists_each_bound_on_the_search_routes(person_client):
    client, _ = person_client()
    document = client.get("/openapi.json").json
    bounds = [
        f"{MAX_TEXT_LENGTH:,} characters",
        f"{MAX_TOKENS} tokens",
        f"{MAX_PATTERN_LENGTH} characters",
        f"{MAX_PATTERN_WILDCARDS} * or ?",
        f"{MAX_PATTERNS} patterns",
        f"{ENGINE_AUTOMATON_STATES:,} automaton states",
        f"{MAX_CLAUSES} clauses",
        f"{MAX_TERMS:,} terms",
        f"{MAX_SQL_LENGTH:,} characters",
        "PERSON_SEARCH_TIMEOUT",
        "503 with Retry-After",
    ]
    for path in SEARCH_ROUTES:
        for method in ("post", "get"):
            description = document["paths"][path][method]["description"]
            assert all(bound in description for bound in bounds), (path, method)


@pytest.mark.parametrize(
    "path, body, field",
    [
        (
            "/v1/person/enrich",
            {"full_name": "ann lee", "company_name": "acme", "job_title": "engineer " * 1000},
            "job_title",
        ),
        ("/v2/person/enrich", {"email": ["a@example.com", "b" * (MAX_TEXT_LENGTH + 1)]}, "email"),
        (
            "/v2/person/identify",
            {"email": "a@example.com", "required": "emails OR " * 200},
            "required",
        ),
    ],
)
def test_enrich_inputs_keep_the_text_bound(person_client, path, body, field):
    """The enrich matcher searches with its inputs: a value past the text bound is 422 naming the
    field and the bound."""
    client, headers = person_client("enrich")
    response = client.post(path, json=body, headers=headers)
    assert response.status_code == 422 and field in response.json["error"]["fields"]
    assert f"{MAX_TEXT_LENGTH:,}" in " ".join(response.json["error"]["fields"][field])
