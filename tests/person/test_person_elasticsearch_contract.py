"""The Elasticsearch backend against a local HTTP server playing Elasticsearch: request bodies,
response mapping, tokens, errors."""

from __future__ import annotations

import json
import re

import pytest
from werkzeug import Response

from tests.person.conftest import PEOPLE8

ES_HEADERS = {"X-Elastic-Product": "Elasticsearch", "Content-Type": "application/json"}
INDEX = "people"
PIT_ID = "pit-1"  # what the cluster of pit_cluster names each PIT it opens
OPEN_PIT = ("POST", f"/{INDEX}/_pit?keep_alive=5m", None)


def es_json(body, status=200):
    return Response(json.dumps(body), status=status, headers=ES_HEADERS)


def hits_answer(ids, total, sort_base=0, pit_id=None):
    return {
        "took": 1,
        "timed_out": False,
        **({"pit_id": pit_id} if pit_id else {}),
        "hits": {
            "total": {"value": total, "relation": "eq"},
            "max_score": None,
            "hits": [
                {
                    "_index": INDEX,
                    "_id": pid,
                    "_score": None,
                    "_source": {"id": pid, "full_name": f"person {pid}"},
                    "sort": [sort_base + n, pid],
                }
                for n, pid in enumerate(ids)
            ],
        },
    }


@pytest.fixture
def es_client(person_client, httpserver, request):
    """A client on the cluster `httpserver` plays; settings of its own come as the fixture's
    parameter (indirect)."""
    client, headers = person_client(
        None,
        SEARCH_BACKEND="elasticsearch",
        ELASTICSEARCH_URL=httpserver.url_for("/").rstrip("/"),
        ELASTICSEARCH_INDEX=INDEX,
        **getattr(request, "param", {}),
    )
    return client, headers, httpserver


def pit_cluster(server, searches):
    """A cluster whose point-in-time API opens PIT_ID and frees what it is asked to close, and which
    answers each search with the next of `searches`; returns every request as (method, path with its
    query string, JSON body), after checking that each search refuses partial results."""
    requests = []

    def handle(request):
        query = request.args.to_dict()
        # every search refuses partial results: a failed shard fails the page
        if request.path.endswith("/_search"):
            assert query.pop("allow_partial_search_results") == "false"
        path = request.path + (
            "?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else ""
        )
        requests.append((request.method, path, json.loads(request.data or b"null")))
        if request.path.endswith("/_pit"):
            return es_json(
                {"id": PIT_ID} if request.method == "POST" else {"succeeded": True, "num_freed": 1}
            )
        return searches.pop(0)

    server.expect_request(re.compile(".*")).respond_with_handler(handle)
    return requests


SORTED = {
    "query": {
        "bool": {
            "filter": [{"term": {"location_country": "canada"}}],
            "must": [{"match": {"job_title": "data scientist"}}],
        }
    },
    "size": 2,
    "sort": [{"inferred_years_experience": "desc"}],
}


def test_a_scroll_walks_one_point_in_time_with_search_after_and_closes_it_on_its_last_page(
    es_client,
):
    client, headers, server = es_client
    requests = pit_cluster(
        server,
        [
            es_json(hits_answer(["a", "b"], 3, pit_id="pit-2")),
            es_json(hits_answer(["c"], 3, sort_base=2, pit_id="pit-3")),
        ],
    )
    first = client.post("/v2/person/search", json=SORTED, headers=headers)
    assert first.status_code == 200
    assert first.json["total"] == 3 and [h["id"] for h in first.json["data"]] == ["a", "b"]
    assert len(requests) == 2 and requests[0] == OPEN_PIT  # the PIT is opened on the alias ...
    assert requests[1][:2] == ("POST", "/_search")  # ... and the search in it names no index
    body = requests[1][2]
    assert body["pit"] == {"id": PIT_ID, "keep_alive": "5m"}
    assert body["query"] == {
        "bool": {
            "filter": [{"term": {"location_country": "canada"}}],
            "must": [{"match": {"job_title": {"query": "data scientist", "operator": "or"}}}],
        }
    }
    assert body["size"] == 2 and body["track_total_hits"] is True and "from" not in body
    assert body["sort"] == [
        {"inferred_years_experience": {"order": "desc", "missing": "_last"}},
        {"id": {"order": "asc"}},
    ]
    assert body["timeout"].endswith("ms")  # the time budget holds in a PIT too
    second = client.post(
        "/v2/person/search",
        json={**SORTED, "scroll_token": first.json["scroll_token"]},
        headers=headers,
    )
    assert [h["id"] for h in second.json["data"]] == ["c"] and "scroll_token" not in second.json
    method, path, body = requests[2]
    assert (method, path) == ("POST", "/_search") and "from" not in body
    # the id the last answer gave
    assert body["pit"] == {"id": "pit-2", "keep_alive": "5m"} and body["search_after"] == [1, "b"]
    # the walk is done: its PIT is freed
    assert requests[3:] == [("DELETE", "/_pit", {"id": "pit-3"})]


def test_relevance_sort_and_from_are_sent(es_client):
    client, headers, server = es_client
    requests = pit_cluster(server, [es_json(hits_answer([], 0))])
    response = client.post(
        "/v1/person/search",
        json={"query": {"match_all": {}}, "from": 20, "size": 5},
        headers=headers,
    )
    assert response.json == {"status": 200, "total": 0, "data": []}
    body = requests[1][2]
    assert body["from"] == 20 and body["sort"] == [
        {"_score": {"order": "desc"}},
        {"id": {"order": "asc"}},
    ]
    # a scroll-form page with from runs in a PIT too, as its token would go on in it; no hits
    # remain, so it is freed
    assert body["pit"]["id"] == PIT_ID and requests[2] == ("DELETE", "/_pit", {"id": PIT_ID})


def test_searches_that_hand_out_no_scroll_token_open_no_point_in_time(es_client):
    client, headers, server = es_client
    requests = pit_cluster(
        server,
        [
            es_json(hits_answer(["a", "b"], 30)),
            es_json(hits_answer(["e", "f"], 30)),
            es_json(hits_answer(["c"], 30)),
        ],
    )
    for page in (1, 3):
        answer = client.post(
            "/v2/person/search/page",
            json={"query": {"match_all": {}}, "size": 2, "page": page},
            headers=headers,
        )
        assert answer.status_code == 200 and answer.json["total_pages"] == 15
    with client.application.app_context():  # the enrich matcher's own searches
        hits = (
            client.application.extensions["hirekit_person"][False]
            .backend()
            .search({"match_all": {}}, size=1)
            .hits
        )
    assert [hit["id"] for hit in hits] == ["c"]
    assert [(method, path) for method, path, _ in requests] == [("POST", f"/{INDEX}/_search")] * 3
    assert not any("pit" in body for _, _, body in requests)
    assert "from" not in requests[0][2] and requests[1][2]["from"] == 4


CONTEXT_MISSING = {
    "error": {
        "root_cause": [
            {
                "type": "search_context_missing_exception",
                "reason": "No search context found for id [7]",
            }
        ],
        "type": "search_phase_execution_exception",
        "reason": "all shards failed",
        "phase": "query",
        "grouped": True,
        "failed_shards": [
            {
                "shard": -1,
                "index": None,
                "reason": {
                    "type": "search_context_missing_exception",
                    "reason": "No search context found for id [7]",
                },
            }
        ],
    },
    "status": 404,
}


@pytest.mark.parametrize("es_client", [{"ELASTICSEARCH_SCROLL_KEEP_ALIVE": "90s"}], indirect=True)
def test_a_scroll_whose_point_in_time_is_gone_is_told_to_start_again(es_client):
    """Its keep_alive passed, or a replacing load deleted the index it was open on: a 400 on the
    token, not a 503."""
    client, headers, server = es_client
    requests = pit_cluster(
        server, [es_json(hits_answer(["a", "b"], 3)), es_json(CONTEXT_MISSING, 404)]
    )
    first = client.post("/v2/person/search", json=SORTED, headers=headers)
    response = client.post(
        "/v2/person/search",
        json={**SORTED, "scroll_token": first.json["scroll_token"]},
        headers=headers,
    )
    assert response.status_code == 400 and "Retry-After" not in response.headers
    error = response.json["error"]
    assert error["type"] == "invalid_request_error" and error["fields"] == {
        "scroll_token": ["The scroll expired or the dataset was reloaded."]
    }
    assert (
        "more than 90s apart" in error["message"]
        and "Start the scroll again without scroll_token" in error["message"]
    )
    assert requests[0] == ("POST", f"/{INDEX}/_pit?keep_alive=90s", None)
    assert requests[2][2]["pit"] == {"id": PIT_ID, "keep_alive": "90s"}


def test_a_new_scroll_whose_point_in_time_vanishes_before_its_first_search_opens_another(es_client):
    """A replacing load deleted the index between the PIT's opening and its search: the client,
    which sent no token, gets its first page from a PIT on the new index rather than a 400 about a
    token."""
    client, headers, server = es_client
    requests = pit_cluster(
        server, [es_json(CONTEXT_MISSING, 404), es_json(hits_answer(["a", "b"], 3))]
    )
    first = client.post("/v2/person/search", json=SORTED, headers=headers)
    assert (
        first.status_code == 200
        and [h["id"] for h in first.json["data"]] == ["a", "b"]
        and first.json["scroll_token"]
    )
    assert [(method, path) for method, path, _ in requests] == [
        OPEN_PIT[:2],
        ("POST", "/_search"),
    ] * 2


def test_a_new_scroll_that_loses_its_point_in_time_twice_is_503(es_client):
    client, headers, server = es_client
    pit_cluster(server, [es_json(CONTEXT_MISSING, 404), es_json(CONTEXT_MISSING, 404)])
    response = client.post("/v2/person/search", json=SORTED, headers=headers)
    assert response.status_code == 503 and "being replaced" in response.json["error"]["message"]


NODE_GONE = {
    "error": {
        "root_cause": [
            {"type": "node_not_connected_exception", "reason": "[node-2] Node not connected"}
        ],
        "type": "search_phase_execution_exception",
        "reason": "all shards failed",
    },
    "status": 500,
}


def test_a_scroll_whose_point_in_time_lost_a_node_is_told_to_start_again(es_client):
    """A node holding part of the walk's PIT left the cluster: retrying that page can never succeed,
    so the client is told to start again (400 on the token), not to retry a 503 until its
    deadline."""
    client, headers, server = es_client
    pit_cluster(server, [es_json(hits_answer(["a", "b"], 3)), es_json(NODE_GONE, 500)])
    first = client.post("/v2/person/search", json=SORTED, headers=headers)
    response = client.post(
        "/v2/person/search",
        json={**SORTED, "scroll_token": first.json["scroll_token"]},
        headers=headers,
    )
    assert response.status_code == 400 and "Retry-After" not in response.headers
    error = response.json["error"]
    assert error["fields"] == {
        "scroll_token": ["The search cluster lost this scroll's point in time."]
    }
    assert "a node holding it left the cluster" in error["message"]


def test_a_new_scroll_whose_first_page_fails_on_the_cluster_is_503_and_frees_its_point_in_time(
    es_client,
):
    client, headers, server = es_client
    requests = pit_cluster(server, [es_json(NODE_GONE, 500)])
    response = client.post("/v2/person/search", json=SORTED, headers=headers)
    assert response.status_code == 503 and response.headers.get("Retry-After")
    assert "Elasticsearch answered 500" in response.json["error"]["message"]
    assert [(method, path) for method, path, _ in requests] == [
        OPEN_PIT[:2],
        ("POST", "/_search"),
        ("DELETE", "/_pit"),
    ]


def resigned(client, token: str, cursor_of) -> str:
    """`token` with its cursor changed by `cursor_of`, signed as only the server can."""
    from app.security import tokens

    with client.application.app_context():
        fingerprint, cursor, generation = tokens.verify("person-scroll", token, None)
        return tokens.sign("person-scroll", [fingerprint, cursor_of(cursor), generation])


def test_a_token_issued_without_a_point_in_time_continues_on_the_alias(es_client):
    client, headers, server = es_client
    requests = pit_cluster(
        server, [es_json(hits_answer(["a", "b"], 3)), es_json(hits_answer(["c"], 3, sort_base=2))]
    )
    first = client.post("/v2/person/search", json=SORTED, headers=headers)
    older = resigned(client, first.json["scroll_token"], lambda cursor: cursor[:3])
    second = client.post(
        "/v2/person/search", json={**SORTED, "scroll_token": older}, headers=headers
    )
    assert second.status_code == 200 and [h["id"] for h in second.json["data"]] == ["c"]
    method, path, body = requests[2]
    assert (
        (method, path) == ("POST", f"/{INDEX}/_search")
        and "pit" not in body
        and body["search_after"] == [1, "b"]
    )
    assert len(requests) == 3  # no PIT to close


@pytest.mark.parametrize(
    "cursor_of",
    [
        lambda cursor: [*cursor[:3], 42],
        lambda cursor: [*cursor[:3], ""],
        lambda cursor: [*cursor, "pit-2"],
        lambda cursor: [*cursor[:2], "after", cursor[3]],
    ],
    ids=["number", "empty", "two ids", "sort values not a list"],
)
def test_a_token_with_a_malformed_point_in_time_part_is_refused(es_client, cursor_of):
    client, headers, server = es_client
    requests = pit_cluster(server, [es_json(hits_answer(["a", "b"], 3))])
    first = client.post("/v2/person/search", json=SORTED, headers=headers)
    forged = resigned(client, first.json["scroll_token"], cursor_of)
    response = client.post(
        "/v2/person/search", json={**SORTED, "scroll_token": forged}, headers=headers
    )
    assert response.status_code == 400 and response.json["error"]["fields"] == {
        "scroll_token": ["Invalid token."]
    }
    assert "not a token this service issued" in response.json["error"]["message"]
    assert len(requests) == 2  # nothing sent


@pytest.mark.parametrize(
    "status, body, expected, says",
    [
        (
            404,
            {
                "error": {"type": "index_not_found_exception", "reason": "no such index [people]"},
                "status": 404,
            },
            503,
            "create-index",
        ),
        (
            500,
            {"error": {"type": "exception", "reason": "boom"}, "status": 500},
            503,
            "answered 500",
        ),
        (
            400,
            {
                "error": {
                    "root_cause": [{"type": "x", "reason": "No mapping found for [zzz]"}],
                    "type": "search_phase_execution_exception",
                },
                "status": 400,
            },
            400,
            "No mapping found",
        ),
    ],
)
def test_cluster_errors_map_to_our_statuses(es_client, status, body, expected, says):
    client, headers, server = es_client
    if status == 404:  # a missing index shows when the PIT is opened on it
        server.expect_request(f"/{INDEX}/_pit", method="POST").respond_with_response(
            es_json(body, status)
        )
    requests = pit_cluster(server, [es_json(body, status)])
    response = client.post("/v2/person/search", json={"query": {"match_all": {}}}, headers=headers)
    assert response.status_code == expected and says in response.json["error"]["message"]
    if expected == 503:
        assert response.headers["Retry-After"]
    if status != 404:  # a first page that fails frees the PIT it opened: no token names it
        assert requests == [
            OPEN_PIT,
            ("POST", "/_search", requests[1][2]),
            ("DELETE", "/_pit", {"id": PIT_ID}),
        ]


def test_unreachable_cluster_is_503(person_client):
    client, headers = person_client(
        None,
        SEARCH_BACKEND="elasticsearch",
        ELASTICSEARCH_URL="http://127.0.0.1:9",
        ELASTICSEARCH_TIMEOUT=1.0,
    )
    response = client.post("/v2/person/search", json={"query": {"match_all": {}}}, headers=headers)
    assert response.status_code == 503 and "not reachable" in response.json["error"]["message"]


@pytest.mark.parametrize(
    "es_client, asked",
    [({}, "9"), ({"ELASTICSEARCH_COMPATIBLE_WITH": "8"}, "8")],
    indirect=["es_client"],
    ids=["client-major", "eight"],
)
def test_the_rest_api_major_asked_of_the_cluster_is_the_setting(es_client, asked):
    client, headers, server = es_client
    seen = []

    def handle(request):
        seen.append((request.headers.get("Accept"), request.headers.get("Content-Type")))
        return es_json({"id": PIT_ID} if request.path.endswith("/_pit") else hits_answer(["p1"], 1))

    server.expect_request(re.compile(".*")).respond_with_handler(handle)
    response = client.post("/v2/person/search", json={"query": {"match_all": {}}}, headers=headers)
    assert response.status_code == 200, response.json
    assert seen and all(
        accept == f"application/vnd.elasticsearch+json; compatible-with={asked}"
        for accept, _ in seen
    )
    assert all(kind is None or kind.endswith(f"compatible-with={asked}") for _, kind in seen)


class FakeCluster:
    """Just enough of Elasticsearch's index, alias, settings and bulk API, with state, to follow
    index creation, a replacing load and a delta."""

    def __init__(self):
        # name -> {"docs": {id: source}, "meta": {}, "body": create body}
        self.indices: dict[str, dict] = {}
        self.aliases: dict[str, set[str]] = {}
        self.calls: list[tuple[str, str, object]] = []
        self.during_bulk: list[dict] = []  # what the alias answered while the load was writing
        self.bulk_actions: list[tuple[str, str]] = []  # (index or delete, id) in the order sent
        self.reject_bulk = False

    def resolve(self, name: str) -> list[str]:
        return sorted(self.aliases.get(name) or ([name] if name in self.indices else []))

    def __call__(self, request):
        method, parts = request.method, [p for p in request.path.split("/") if p]
        body = request.data
        self.calls.append(
            (method, request.path, json.loads(body) if body and parts[-1] != "_bulk" else None)
        )
        if parts[0] == "_alias":
            indices = {
                i: {"aliases": {parts[1]: {}}} for i in sorted(self.aliases.get(parts[1], ()))
            }
            return es_json(
                indices if indices else {"error": "alias missing", "status": 404},
                200 if indices else 404,
            )
        if parts[0] == "_aliases":
            for action in json.loads(body)["actions"]:
                ((kind, spec),) = action.items()
                if kind == "add":
                    self.aliases.setdefault(spec["alias"], set()).add(spec["index"])
                elif kind == "remove":
                    self.aliases[spec["alias"]].discard(spec["index"])
                else:
                    del self.indices[spec["index"]]
            return es_json({"acknowledged": True})
        if parts[0] == "_bulk":
            lines = iter(json.loads(line) for line in body.splitlines() if line.strip())
            self.during_bulk.append({alias: self.resolve(alias) for alias in self.aliases})
            items = []
            for action in lines:
                ((kind, spec),) = action.items()
                (target,) = self.resolve(spec["_index"])
                docs = self.indices[target]["docs"]
                self.bulk_actions.append((kind, spec["_id"]))
                if kind == "delete":
                    found = docs.pop(spec["_id"], None) is not None
                    items.append(
                        {
                            "delete": {
                                "_id": spec["_id"],
                                "status": 200 if found else 404,
                                "result": "deleted" if found else "not_found",
                            }
                        }
                    )
                    continue
                docs[spec["_id"]] = next(lines)
                items.append(
                    {
                        "index": {
                            "_id": spec["_id"],
                            "status": 400 if self.reject_bulk else 201,
                            **(
                                {"error": {"type": "mapper_parsing_exception"}}
                                if self.reject_bulk
                                else {}
                            ),
                        }
                    }
                )
            return es_json({"took": 1, "errors": self.reject_bulk, "items": items})
        name, op = parts[0], parts[1] if len(parts) > 1 else None
        if op is None and method == "HEAD":
            return Response(status=200 if self.resolve(name) else 404, headers=ES_HEADERS)
        if op is None and method == "PUT":
            created = json.loads(body)
            self.indices[name] = {"docs": {}, "meta": {}, "body": created}
            for alias in created.get("aliases", {}):
                self.aliases.setdefault(alias, set()).add(name)
            return es_json({"acknowledged": True, "index": name, "shards_acknowledged": True})
        if op is None and method == "DELETE":
            for target in self.resolve(name):
                del self.indices[target]
                for members in self.aliases.values():
                    members.discard(target)
            return es_json({"acknowledged": True})
        (target,) = self.resolve(name)
        if op == "_mapping":
            self.indices[target]["meta"] = json.loads(body)["_meta"]
            return es_json({"acknowledged": True})
        if op == "_refresh":
            return es_json({"_shards": {}})
        if op == "_settings" and method == "PUT":
            self.indices[target].setdefault("settings", {}).update(json.loads(body)["index"])
            return es_json({"acknowledged": True})
        if op == "_settings":
            settings = {
                k: v for k, v in self.indices[target].get("settings", {}).items() if v is not None
            }
            return es_json({target: {"settings": {"index": settings} if settings else {}}})
        if op == "_count":
            return es_json({"count": len(self.indices[target]["docs"])})
        raise AssertionError(f"unexpected {method} {request.path}")


@pytest.fixture
def cluster(es_client):
    client, _, server = es_client
    fake = FakeCluster()
    server.expect_request(re.compile(".*")).respond_with_handler(fake)
    return client.application, fake


def cli(app, *args):
    result = app.test_cli_runner().invoke(args=["person", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_create_index_makes_an_alias_over_a_dated_index_with_the_mapping_from_the_schema(cluster):
    app, fake = cluster
    cli(app, "create-index")
    (dated,) = fake.indices
    assert dated.startswith(f"{INDEX}-") and fake.aliases == {INDEX: {dated}}
    created = fake.indices[dated]["body"]
    assert created["mappings"]["properties"]["job_title"] == {
        "type": "text",
        "analyzer": "standard",
    }
    assert created["mappings"]["properties"]["education"]["properties"]["school"]["properties"][
        "name"
    ] == {"type": "keyword"}
    assert created["settings"]["index"]["max_result_window"] == 10000
    cli(app, "create-index")  # already there: nothing new
    assert list(fake.indices) == [dated]


def test_a_replacing_load_fills_a_new_index_aside_then_swaps_the_alias_in_one_call(cluster):
    app, fake = cluster
    cli(app, "create-index")
    (old,) = fake.indices
    fake.indices[old]["docs"]["someone-old"] = {"id": "someone-old"}
    output = cli(app, "load", PEOPLE8, "--replace", "--yes", "--dataset-version", "32.0")
    assert "loaded 8 profiles" in output
    (new,) = fake.indices
    assert new != old and fake.aliases == {INDEX: {new}}
    # readers kept the old data
    assert fake.during_bulk and all(state == {INDEX: [old]} for state in fake.during_bulk)
    assert sorted(fake.indices[new]["docs"]) == [f"p{n}" for n in range(1, 9)]
    assert fake.indices[new]["meta"] == {"dataset_version": "32.0"}
    swaps = [body for method, path, body in fake.calls if path == "/_aliases"]
    assert swaps == [
        {
            "actions": [
                {"add": {"index": new, "alias": INDEX}},
                {"remove": {"index": old, "alias": INDEX}},
            ]
        }
    ]
    deleted = [path for method, path, _ in fake.calls if method == "DELETE"]
    assert deleted == [f"/{old}"]
    order = [(method, path) for method, path, _ in fake.calls]
    # deleted only once nobody reads it
    assert order.index(("DELETE", f"/{old}")) > order.index(("POST", "/_aliases"))


def test_a_plain_index_of_an_older_release_becomes_an_alias_on_the_first_replacing_load(cluster):
    app, fake = cluster
    fake.indices[INDEX] = {"docs": {"someone-old": {}}, "meta": {}, "body": {}}
    cli(app, "load", PEOPLE8, "--replace", "--yes")
    (new,) = fake.indices
    assert fake.aliases == {INDEX: {new}} and len(fake.indices[new]["docs"]) == 8
    swaps = [body for _, path, body in fake.calls if path == "/_aliases"]
    assert swaps == [
        {"actions": [{"add": {"index": new, "alias": INDEX}}, {"remove_index": {"index": INDEX}}]}
    ]


def test_a_failed_replacing_load_leaves_the_alias_and_drops_the_half_built_index(cluster):
    app, fake = cluster
    cli(app, "create-index")
    (old,) = fake.indices
    fake.reject_bulk = True
    result = app.test_cli_runner().invoke(args=["person", "load", PEOPLE8, "--replace", "--yes"])
    assert result.exit_code != 0
    assert list(fake.indices) == [old] and fake.aliases == {INDEX: {old}}


def test_load_bulk_indexes_by_id_and_records_the_dataset_version(es_client):
    client, _, server = es_client
    bulk_lines = []

    def bulk(request):
        lines = [json.loads(line) for line in request.data.splitlines() if line.strip()]
        bulk_lines.extend(lines)
        actions = lines[::2]
        return es_json(
            {
                "took": 1,
                "errors": False,
                "items": [{"index": {"_id": a["index"]["_id"], "status": 201}} for a in actions],
            }
        )

    meta = []
    server.expect_request(f"/{INDEX}", method="HEAD").respond_with_response(
        Response(status=200, headers=ES_HEADERS)
    )
    server.expect_request("/_bulk", method="PUT").respond_with_handler(bulk)
    server.expect_request(f"/{INDEX}/_mapping", method="PUT").respond_with_handler(
        lambda request: meta.append(json.loads(request.data)) or es_json({"acknowledged": True})
    )
    server.expect_request(f"/{INDEX}/_refresh").respond_with_response(es_json({"_shards": {}}))
    server.expect_request(f"/{INDEX}/_count").respond_with_response(es_json({"count": 8}))
    result = client.application.test_cli_runner().invoke(
        args=["person", "load", PEOPLE8, "--dataset-version", "31.0"]
    )
    assert result.exit_code == 0, result.output
    assert "loaded 8 profiles" in result.output
    assert [line["index"]["_id"] for line in bulk_lines[::2]] == [f"p{n}" for n in range(1, 9)]
    assert bulk_lines[1]["job_company_name"] == "acme"
    assert meta == [{"_meta": {"dataset_version": "31.0"}}]


def test_search_enrich_on_elasticsearch_fetches_hits_by_id(es_client):
    client, headers, server = es_client
    server.expect_request(f"/{INDEX}/_pit", method="POST").respond_with_response(
        es_json({"id": PIT_ID})
    )
    server.expect_request("/_search").respond_with_response(es_json(hits_answer(["a"], 1)))
    server.expect_request("/_pit", method="DELETE").respond_with_response(
        es_json({"succeeded": True, "num_freed": 1})
    )
    server.expect_request(f"/{INDEX}/_mget").respond_with_response(
        es_json(
            {
                "docs": [
                    {
                        "_index": INDEX,
                        "_id": "a",
                        "found": True,
                        "_source": {"id": "a", "full_name": "person a", "work_email": "a@x.io"},
                    }
                ]
            }
        )
    )
    server.expect_request(f"/{INDEX}/_mapping", method="GET").respond_with_response(
        es_json({INDEX: {"mappings": {"_meta": {"dataset_version": "31.0"}, "properties": {}}}})
    )
    server.expect_request(f"/{INDEX}/_count").respond_with_response(es_json({"count": 1}))
    response = client.post(
        "/v1/person/search-enrich", json={"query": {"match_all": {}}}, headers=headers
    )
    assert response.status_code == 200
    assert response.json["data"] == [{"id": "a", "full_name": "person a", "work_email": "a@x.io"}]


def test_a_delta_is_bulk_written_into_the_current_index_with_refresh_held_then_published_by_one_refresh(  # noqa: E501 - the test's name
    cluster, tmp_path
):
    app, fake = cluster
    cli(app, "load", PEOPLE8, "--replace", "--yes", "--dataset-version", "31.0")
    (current,) = fake.indices
    fake.indices[current]["settings"] = {"refresh_interval": "5s"}
    fake.calls.clear()
    delta = tmp_path / "delta.jsonl"
    delta.write_text(
        '{"id": "p1", "full_name": "renamed one"}\n{"id": "p9", "full_name": "new nine"}\n'
    )
    ids = tmp_path / "removed.txt"
    ids.write_text("p2\np-never-loaded\n")
    output = cli(
        app, "load", str(delta), "--upsert", "--delete-ids", str(ids), "--dataset-version", "32.0"
    )
    assert "loaded 2 profiles" in output and "removed 1 of 2 listed ids" in output
    # same index, no alias move
    assert list(fake.indices) == [current] and fake.aliases == {INDEX: {current}}
    docs = fake.indices[current]["docs"]
    assert (
        docs["p1"] == {"id": "p1", "full_name": "renamed one"}
        and "p9" in docs
        and "p2" not in docs
        and len(docs) == 8
    )
    assert fake.bulk_actions[-4:] == [
        ("index", "p1"),
        ("index", "p9"),
        ("delete", "p2"),
        ("delete", "p-never-loaded"),
    ]
    order = [
        (method, path.replace(current, "<index>").replace(f"/{INDEX}/", "/<index>/"), body)
        for method, path, body in fake.calls
    ]
    writes = [(m, p, b) for m, p, b in order if m in ("PUT", "POST") and not p.endswith("_count")]
    assert writes == [
        # nothing of the delta is searchable ...
        ("PUT", "/<index>/_settings", {"index": {"refresh_interval": "-1"}}),
        ("PUT", "/_bulk", None),
        ("PUT", "/_bulk", None),
        ("POST", "/<index>/_refresh", None),  # ... until one refresh publishes all of it
        # the version, once published
        ("PUT", "/<index>/_mapping", {"_meta": {"dataset_version": "32.0"}}),
        ("PUT", "/<index>/_settings", {"index": {"refresh_interval": "5s"}}),
    ]
    assert fake.indices[current]["meta"] == {"dataset_version": "32.0"}


def test_a_malformed_delta_sends_nothing_to_elasticsearch(cluster, tmp_path):
    app, fake = cluster
    cli(app, "load", PEOPLE8, "--replace", "--yes", "--dataset-version", "31.0")
    (current,) = fake.indices
    fake.calls.clear()
    before = dict(fake.indices[current]["docs"])
    delta = tmp_path / "delta.jsonl"
    delta.write_text('{"id": "p1", "full_name": "renamed one"}\n{"full_name": "no id"}\n')
    result = app.test_cli_runner().invoke(
        args=["person", "load", str(delta), "--upsert", "--dataset-version", "32.0"]
    )
    assert (
        result.exit_code == 1
        and "line 2: rejected" in result.output
        and "nothing was published" in result.output
    )
    assert not [
        path for _, path, _ in fake.calls if path.endswith("_bulk") or path.endswith("_refresh")
    ]
    assert fake.indices[current]["docs"] == before and fake.indices[current]["meta"] == {
        "dataset_version": "31.0"
    }
    # switched off, then given back
    assert fake.indices[current]["settings"] == {"refresh_interval": None}
