"""Person search over HTTP: size, from and page bounds, DSL errors, scroll tokens, page search, 503
without a dataset, sandbox isolation, limits."""

from __future__ import annotations

import pytest

from tests.person.paging import walk_pages, walk_scroll

MATCH_ALL = {"match_all": {}}


def search(client, headers, path="/v2/person/search", **body):
    return client.post(path, json={"query": MATCH_ALL, **body}, headers=headers)


@pytest.mark.parametrize(
    "path, body, field",
    [
        ("/v2/person/search", {"size": 0}, "size"),
        ("/v2/person/search", {"size": 101}, "size"),
        ("/v2/person/search", {"from": -1}, "from"),
        ("/v2/person/search/page", {"page": 0}, "page"),
        ("/v2/person/search/page", {"size": 101}, "size"),
        ("/v1/person/search", {"query": "not an object"}, "query"),
    ],
)
def test_out_of_bounds_values_are_422_naming_the_field(person_client, path, body, field):
    client, headers = person_client()
    response = search(client, headers, path, **body)
    assert response.status_code == 422
    assert field in response.json["error"]["fields"]


@pytest.mark.parametrize(
    "query, named",
    [
        ({"fuzzy": {"full_name": "jon"}}, "fuzzy"),
        ({"nested": {"path": "experience"}}, "nested"),
        ({"term": {"favourite_colour": "blue"}}, "favourite_colour"),
        (
            {"bool": {"must": [{"term": {"experience.company.nickname": "x"}}]}},
            "experience.company.nickname",
        ),
        ({"bool": {"boost": 2}}, "boost"),
        ({"range": {"job_title": {"gte": "a"}}}, "job_title"),
        ({"terms": {"skills": ["x"] * 1001}}, "1000"),
        ({"match": {"job_title": {"query": "x", "operator": "xor"}}}, "operator"),
        ({"range": {"job_start_date": {"gte": "last tuesday"}}}, "job_start_date"),
    ],
)
def test_malformed_queries_are_400_naming_the_clause_or_field(person_client, query, named):
    client, headers = person_client()
    response = client.post("/v2/person/search", json={"query": query}, headers=headers)
    assert response.status_code == 400
    assert response.json["error"]["type"] == "invalid_request_error"
    assert named in response.json["error"]["message"]


@pytest.mark.parametrize(
    "body, named",
    [
        ({"query": MATCH_ALL, "sql": "SELECT * FROM person"}, "sql"),
        ({"query": MATCH_ALL, "aggs": {"x": {}}}, "aggs"),
        ({"query": MATCH_ALL, "sort": [{"job_title": "asc"}]}, "job_title"),
        (
            {"query": MATCH_ALL, "sort": [{"skills": "asc"}, {"experience.company.name": "asc"}]},
            "experience.company.name",
        ),
        ({"query": MATCH_ALL, "sort": [{"birth_year": "asc"}] * 11}, "at most 10 sort keys"),
        ({"query": MATCH_ALL, "from": 9950, "size": 51}, "from"),
    ],
)
def test_unsupported_requests_are_400(person_client, body, named):
    client, headers = person_client()
    response = client.post("/v1/person/search", json=body, headers=headers)
    assert response.status_code == 400 and named in response.json["error"]["message"]


def test_from_with_scroll_token_is_400(person_client):
    client, headers = person_client()
    token = search(client, headers, size=2).json["scroll_token"]
    response = search(client, headers, size=2, scroll_token=token, **{"from": 0})
    assert response.status_code == 400 and "scroll_token" in response.json["error"]["message"]


def test_scroll_token_replayed_with_another_query_is_400(person_client):
    client, headers = person_client()
    token = search(client, headers, size=2).json["scroll_token"]
    response = client.post(
        "/v2/person/search",
        json={"query": {"term": {"job_company_name": "acme"}}, "scroll_token": token},
        headers=headers,
    )
    assert response.status_code == 400 and "another query" in response.json["error"]["message"]
    sorted_differently = search(
        client, headers, size=2, scroll_token=token, sort=[{"skills": "asc"}]
    )
    assert sorted_differently.status_code == 400


def test_forged_scroll_token_is_400(person_client):
    client, headers = person_client()
    response = search(client, headers, scroll_token="eyJub3QiOiAidGhpcyJ9")
    assert response.status_code == 400 and response.json["error"]["fields"] == {
        "scroll_token": ["Invalid token."]
    }


def test_no_hits_is_200_with_total_0(person_client):
    client, headers = person_client()
    response = client.post(
        "/v1/person/search",
        json={"query": {"term": {"job_company_name": "nobody"}}},
        headers=headers,
    )
    assert response.status_code == 200
    assert response.json == {"status": 200, "total": 0, "data": []}


def test_get_takes_the_query_as_a_json_string(person_client):
    client, headers = person_client()
    response = client.get(
        "/v2/person/search",
        query_string={"query": '{"term": {"skills": "rust"}}', "size": "5"},
        headers=headers,
    )
    assert response.status_code == 200 and [h["id"] for h in response.json["data"]] == ["p8"]
    bad = client.get("/v2/person/search", query_string={"query": "{not json"}, headers=headers)
    assert bad.status_code == 422 and "query" in bad.json["error"]["fields"]


def test_person_routes_want_the_x_api_key(person_client):
    client, headers = person_client()
    assert client.post("/v2/person/search", json={"query": MATCH_ALL}).status_code == 401
    bearer = {"Authorization": f"Bearer {headers['X-API-Key']}"}
    assert (
        client.post("/v2/person/search", json={"query": MATCH_ALL}, headers=bearer).status_code
        == 401
    )


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"sort": [{"inferred_years_experience": "desc"}]},
        {"sort": [{"birth_year": "asc"}]},
        {"sort": [{"location_country": "asc"}]},
        {"query": {"match": {"job_title": "senior software engineer manager"}}},
        {"sort": [{"job_title_role": "asc"}, {"birth_year": "desc"}, {"last_name": "asc"}]},
        {"sort": [{"inferred_years_experience": "asc"}]},
        {"sort": [{"job_start_date": "desc"}]},
        {"sort": [{"birth_year": "desc"}]},
        {
            "query": {"bool": {"filter": [{"range": {"birth_year": {"gte": 1975}}}]}},
            "sort": [{"birth_year": "desc"}],
        },
        {
            "query": {"exists": {"field": "location_country"}},
            "sort": [{"location_country": "desc"}],
        },
    ],
    ids=[
        "index order",
        "number desc",
        "number with missing",
        "keyword",
        "relevance",
        "several keys",
        "number asc",
        "date desc",
        "number desc with missing",
        "range on the sort field",
        "exists on the sort field",
    ],
)
def test_scrolling_1234_hits_returns_each_once_in_page_order(person_client, extra):
    client, headers = person_client("scroll")
    body = {"query": MATCH_ALL, "size": 100, **extra}
    scrolled, pages, last = walk_scroll(client, headers, body)
    paged, page_answer = walk_pages(client, headers, body)
    total = page_answer["total"]
    assert len(scrolled) == len(set(scrolled)) == total
    assert scrolled == paged
    assert pages == page_answer["total_pages"] == -(-total // 100)
    assert "scroll_token" not in last
    if not extra:
        assert (
            total == 1234
            and pages == 13
            and page_answer["page"] == 13
            and len(page_answer["data"]) == 34
        )


def test_page_search_answers_totals(person_client):
    client, headers = person_client()
    response = client.post(
        "/v2/person/search/page", json={"query": MATCH_ALL, "size": 3, "page": 3}, headers=headers
    )
    assert response.json == {**response.json, "total": 8, "page": 3, "size": 3, "total_pages": 3}
    assert [h["id"] for h in response.json["data"]] == ["p7", "p8"]
    deep = client.post(
        "/v2/person/search/page",
        json={"query": MATCH_ALL, "size": 100, "page": 101},
        headers=headers,
    )
    assert deep.status_code == 400 and "page" in deep.json["error"]["fields"]


@pytest.mark.parametrize(
    "path",
    [
        "/v1/person/search",
        "/v2/person/search",
        "/v2/person/search/page",
        "/v1/person/search-enrich",
        "/v2/person/search-enrich",
    ],
)
def test_search_without_a_dataset_is_503_with_retry_after(person_client, path):
    client, headers = person_client(None)
    response = client.post(path, json={"query": MATCH_ALL}, headers=headers)
    assert response.status_code == 503
    assert response.headers["Retry-After"] and "person load" in response.json["error"]["message"]


def test_search_backend_none_is_503(person_client):
    client, headers = person_client(SEARCH_BACKEND="none")
    response = client.post("/v2/person/search", json={"query": MATCH_ALL}, headers=headers)
    assert response.status_code == 503 and response.headers["Retry-After"]


def test_sandbox_routes_use_the_sandbox_dataset(person_client):
    client, headers = person_client("people8", sandbox="sandbox")
    production = client.post(
        "/v1/person/search", json={"query": {"term": {"id": "p1"}}}, headers=headers
    )
    assert production.json["total"] == 1
    for path in (
        "/v1/sandbox/person/search",
        "/v2/sandbox/person/search",
        "/v1/sandbox/person/search-enrich",
    ):
        response = client.post(path, json={"query": {"term": {"id": "p1"}}}, headers=headers)
        assert response.status_code == 200 and response.json["total"] == 0
    everything = client.post(
        "/v2/sandbox/person/search/page", json={"query": MATCH_ALL, "size": 100}, headers=headers
    )
    assert everything.json["total"] == 60 and everything.json["total_pages"] == 1
    enrich = client.post("/v1/sandbox/person/enrich", json={"vendor_id": "p1"}, headers=headers)
    assert enrich.status_code == 404


def test_sandbox_without_its_dataset_is_503_even_when_production_has_one(person_client, tmp_path):
    client, headers = person_client("people8")
    for path in ("/v1/sandbox/person/search", "/v2/sandbox/person/search"):
        response = client.post(path, json={"query": MATCH_ALL}, headers=headers)
        message = response.json["error"]["message"]
        assert response.status_code == 503 and "--sandbox" in message
        # no server path
        assert "no embedded index has been loaded" in message and str(tmp_path) not in message


def test_schema_answers_the_index_mapping(person_client):
    client, headers = person_client(None)
    response = client.get("/v2/person/schema", headers=headers)
    assert response.status_code == 200
    properties = response.json["mappings"]["properties"]
    assert properties["job_title"]["type"] == "text" and properties["skills"]["type"] == "keyword"
    assert (
        properties["experience"]["properties"]["company"]["properties"]["name"]["type"] == "keyword"
    )
    assert properties["job_start_date"] == {"type": "date", "format": "yyyy-MM-dd||yyyy-MM||yyyy"}


def test_person_routes_have_their_own_rate_limit(person_client):
    client, headers = person_client(PERSON_RATE_LIMIT="2/minute", RATE_LIMIT="1000/minute")
    for _ in range(2):
        assert search(client, headers).status_code == 200
    limited = search(client, headers)
    assert limited.status_code == 429
    assert limited.json["error"]["type"] == "rate_limit_error"
    assert limited.headers["Retry-After"] and limited.headers["X-RateLimit-Limit"] == "2"


def test_readiness_reports_an_empty_dataset_and_fails_on_it_only_where_it_is_required(
    person_client,
):
    """A deployment that does not use person data stays ready with no dataset loaded (the body says
    it is empty); one that requires it (HIREKIT_PERSON_DATASET_REQUIRED) is not ready until a
    dataset is loaded."""
    client, _ = person_client(None)
    response = client.get("/readyz")
    assert response.status_code == 200 and response.json["status"] == "ok"
    assert (
        response.json["checks"]["search"]
        == "empty (not required: HIREKIT_PERSON_DATASET_REQUIRED is off)"
    )
    required, _ = person_client(None, PERSON_DATASET_REQUIRED=True)
    response = required.get("/readyz")
    assert response.status_code == 503 and response.json["status"] == "unavailable: search"
    assert (
        response.json["checks"]["search"] == "down: DatasetEmpty"
        and response.headers["Retry-After"]
    )
    for dataset_required in (False, True):
        ready, _ = person_client("people8", PERSON_DATASET_REQUIRED=dataset_required)
        answer = ready.get("/readyz")
        assert answer.status_code == 200 and answer.json["checks"]["search"] == "ok"


def test_readiness_reports_an_unreachable_elasticsearch_without_failing_unless_required(
    person_client,
):
    from tests.ports import free_port

    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    client, _ = person_client(
        None, SEARCH_BACKEND="elasticsearch", ELASTICSEARCH_URL=url, ELASTICSEARCH_TIMEOUT=1.0
    )
    response = client.get("/readyz")
    assert response.status_code == 200 and response.json["checks"]["search"].startswith("down: ")
    assert response.json["checks"]["search"].endswith(
        "(not required: HIREKIT_PERSON_DATASET_REQUIRED is off)"
    )
    required, _ = person_client(
        None,
        SEARCH_BACKEND="elasticsearch",
        ELASTICSEARCH_URL=url,
        ELASTICSEARCH_TIMEOUT=1.0,
        PERSON_DATASET_REQUIRED=True,
    )
    assert required.get("/readyz").status_code == 503


SORT_SHAPES = {
    "field and order": [{"field": "birth_year", "order": "desc"}, {"field": "last_name"}],
    "Elasticsearch": [{"birth_year": "desc"}, "last_name"],
    "Elasticsearch with options": [
        {"birth_year": {"order": "desc"}},
        {"last_name": {"order": "asc"}},
    ],
}


@pytest.mark.parametrize(
    "path",
    [
        "/v1/person/search",
        "/v2/person/search",
        "/v2/person/search/page",
        "/v1/sandbox/person/search",
        "/v2/person/search-enrich",
    ],
)
def test_every_sort_item_shape_orders_the_same_on_every_search_route(person_client, path):
    client, headers = person_client(sandbox="people8")
    orders = {}
    for shape, sort in SORT_SHAPES.items():
        response = search(client, headers, path=path, size=8, sort=sort)
        assert response.status_code == 200, (shape, response.json)
        orders[shape] = [hit["id"] for hit in response.json["data"]]
    assert (
        orders["field and order"] == orders["Elasticsearch"] == orders["Elasticsearch with options"]
    )
    assert len(orders["field and order"]) > 1


@pytest.mark.parametrize(
    "item",
    [
        {"field": "birth_year", "order": "up"},
        {"field": 3},
        {"field": "birth_year", "by": "x"},
        {"birth_year": "desc", "last_name": "asc"},
        7,
    ],
)
def test_a_bad_sort_item_is_400_showing_every_accepted_shape(person_client, item):
    client, headers = person_client()
    response = search(client, headers, sort=[item])
    assert response.status_code == 400, response.json
    message = response.json["error"]["message"]
    assert "sort[0]" in message
    if (
        not isinstance(item, dict)
        or len(item) == 2
        and "field" not in item
        or item.get("field") == 3
    ):
        assert (
            '{"field": "x", "order": "asc"|"desc"}' in message
            and '{"x": {"order"' in message
            and '"x"' in message
        )


def test_a_sloppy_phrase_matches_within_one_value_of_a_list_not_across_two(tmp_path):
    """Elasticsearch leaves 100 positions between a list's values: `executive account` with a slop
    of 1 does not match the end of one job title and the start of the next."""
    import json

    from plugins.person import dsl
    from plugins.person.backends.embedded import EmbeddedBackend
    from tests.person.conftest import build_embedded

    titles = {
        "across": ["account executive", "account manager"],
        "within": ["executive of account"],
    }
    jsonl = tmp_path / "titles.jsonl"
    jsonl.write_text(
        "".join(
            json.dumps({"id": key, "experience": [{"title": {"name": t}} for t in value]}) + "\n"
            for key, value in titles.items()
        )
    )
    backend = EmbeddedBackend(build_embedded(tmp_path / "index", str(jsonl)))
    query = dsl.validate_query(
        {"match_phrase": {"experience.title.name": {"query": "executive account", "slop": 1}}}
    )
    assert [hit["id"] for hit in backend.search(query, size=10).hits] == ["within"]
