"""The Elasticsearch backend against a local HTTP server playing Elasticsearch: request bodies, response mapping, tokens, errors."""

from __future__ import annotations

import json
import re

import pytest
from werkzeug import Response

from tests.person.conftest import PEOPLE8

ES_HEADERS = {"X-Elastic-Product": "Elasticsearch", "Content-Type": "application/json"}
INDEX = "people"


def es_json(body, status=200):
    return Response(json.dumps(body), status=status, headers=ES_HEADERS)


def hits_answer(ids, total, sort_base=0):
    return {"took": 1, "timed_out": False, "hits": {"total": {"value": total, "relation": "eq"}, "max_score": None, "hits": [
        {"_index": INDEX, "_id": pid, "_score": None, "_source": {"id": pid, "full_name": f"person {pid}"},
         "sort": [sort_base + n, pid]} for n, pid in enumerate(ids)]}}


@pytest.fixture
def es_client(person_client, httpserver):
    client, headers = person_client(None, SEARCH_BACKEND="elasticsearch", ELASTICSEARCH_URL=httpserver.url_for("/").rstrip("/"),
                                    ELASTICSEARCH_INDEX=INDEX)
    return client, headers, httpserver


def recorder(answers):
    """A handler that records each request's JSON body and answers the next prepared response."""
    seen = []

    def handle(request):
        seen.append(json.loads(request.data or b"null"))
        return answers.pop(0)

    return seen, handle


def test_search_sends_the_dsl_as_is_and_pages_with_search_after(es_client):
    client, headers, server = es_client
    seen, handle = recorder([es_json(hits_answer(["a", "b"], 3)), es_json(hits_answer(["c"], 3, sort_base=2))])
    server.expect_request(f"/{INDEX}/_search", method="POST").respond_with_handler(handle)
    query = {"bool": {"filter": [{"term": {"location_country": "canada"}}], "must": [{"match": {"job_title": "data scientist"}}]}}
    first = client.post("/v2/person/search", json={"query": query, "size": 2, "sort": [{"inferred_years_experience": "desc"}]},
                        headers=headers)
    assert first.status_code == 200
    assert first.json["total"] == 3 and [h["id"] for h in first.json["data"]] == ["a", "b"]
    assert seen[0]["query"] == {"bool": {"filter": [{"term": {"location_country": "canada"}}],
                                         "must": [{"match": {"job_title": {"query": "data scientist", "operator": "or"}}}]}}
    assert seen[0]["size"] == 2 and seen[0]["track_total_hits"] is True and "from" not in seen[0]
    assert seen[0]["sort"] == [{"inferred_years_experience": {"order": "desc", "missing": "_last"}}, {"id": {"order": "asc"}}]
    second = client.post("/v2/person/search", json={"query": query, "size": 2, "sort": [{"inferred_years_experience": "desc"}],
                                                     "scroll_token": first.json["scroll_token"]}, headers=headers)
    assert seen[1]["search_after"] == [1, "b"] and "from" not in seen[1]
    assert [h["id"] for h in second.json["data"]] == ["c"] and "scroll_token" not in second.json


def test_relevance_sort_and_from_are_sent(es_client):
    client, headers, server = es_client
    seen, handle = recorder([es_json(hits_answer([], 0))])
    server.expect_request(f"/{INDEX}/_search", method="POST").respond_with_handler(handle)
    response = client.post("/v1/person/search", json={"query": {"match_all": {}}, "from": 20, "size": 5}, headers=headers)
    assert response.json == {"status": 200, "total": 0, "data": []}
    assert seen[0]["from"] == 20 and seen[0]["sort"] == [{"_score": {"order": "desc"}}, {"id": {"order": "asc"}}]


@pytest.mark.parametrize("status, body, expected, says", [
    (404, {"error": {"type": "index_not_found_exception", "reason": "no such index [people]"}, "status": 404}, 503, "create-index"),
    (500, {"error": {"type": "exception", "reason": "boom"}, "status": 500}, 503, "answered 500"),
    (400, {"error": {"root_cause": [{"type": "x", "reason": "No mapping found for [zzz]"}], "type": "search_phase_execution_exception"},
           "status": 400}, 400, "No mapping found"),
])
def test_cluster_errors_map_to_our_statuses(es_client, status, body, expected, says):
    client, headers, server = es_client
    server.expect_request(f"/{INDEX}/_search").respond_with_response(es_json(body, status))
    response = client.post("/v2/person/search", json={"query": {"match_all": {}}}, headers=headers)
    assert response.status_code == expected and says in response.json["error"]["message"]
    if expected == 503:
        assert response.headers["Retry-After"]


def test_unreachable_cluster_is_503(person_client):
    client, headers = person_client(None, SEARCH_BACKEND="elasticsearch", ELASTICSEARCH_URL="http://127.0.0.1:9",
                                    ELASTICSEARCH_TIMEOUT=1.0)
    response = client.post("/v2/person/search", json={"query": {"match_all": {}}}, headers=headers)
    assert response.status_code == 503 and "not reachable" in response.json["error"]["message"]


class FakeCluster:
    """Just enough of Elasticsearch's index, alias, settings and bulk API, with state, to follow index creation, a
    replacing load and a delta."""

    def __init__(self):
        self.indices: dict[str, dict] = {}  # name -> {"docs": {id: source}, "meta": {}, "body": create body}
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
        self.calls.append((method, request.path, json.loads(body) if body and parts[-1] != "_bulk" else None))
        if parts[0] == "_alias":
            indices = {i: {"aliases": {parts[1]: {}}} for i in sorted(self.aliases.get(parts[1], ()))}
            return es_json(indices if indices else {"error": "alias missing", "status": 404}, 200 if indices else 404)
        if parts[0] == "_aliases":
            for action in json.loads(body)["actions"]:
                (kind, spec), = action.items()
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
                (kind, spec), = action.items()
                (target,) = self.resolve(spec["_index"])
                docs = self.indices[target]["docs"]
                self.bulk_actions.append((kind, spec["_id"]))
                if kind == "delete":
                    found = docs.pop(spec["_id"], None) is not None
                    items.append({"delete": {"_id": spec["_id"], "status": 200 if found else 404,
                                             "result": "deleted" if found else "not_found"}})
                    continue
                docs[spec["_id"]] = next(lines)
                items.append({"index": {"_id": spec["_id"], "status": 400 if self.reject_bulk else 201,
                                        **({"error": {"type": "mapper_parsing_exception"}} if self.reject_bulk else {})}})
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
            settings = {k: v for k, v in self.indices[target].get("settings", {}).items() if v is not None}
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
    assert created["mappings"]["properties"]["job_title"] == {"type": "text", "analyzer": "standard"}
    assert created["mappings"]["properties"]["education"]["properties"]["school"]["properties"]["name"] == {"type": "keyword"}
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
    assert fake.during_bulk and all(state == {INDEX: [old]} for state in fake.during_bulk)  # readers kept the old data
    assert sorted(fake.indices[new]["docs"]) == [f"p{n}" for n in range(1, 9)]
    assert fake.indices[new]["meta"] == {"dataset_version": "32.0"}
    swaps = [body for method, path, body in fake.calls if path == "/_aliases"]
    assert swaps == [{"actions": [{"add": {"index": new, "alias": INDEX}}, {"remove": {"index": old, "alias": INDEX}}]}]
    deleted = [path for method, path, _ in fake.calls if method == "DELETE"]
    assert deleted == [f"/{old}"]
    order = [(method, path) for method, path, _ in fake.calls]
    assert order.index(("DELETE", f"/{old}")) > order.index(("POST", "/_aliases"))  # deleted only once nobody reads it


def test_a_plain_index_of_an_older_release_becomes_an_alias_on_the_first_replacing_load(cluster):
    app, fake = cluster
    fake.indices[INDEX] = {"docs": {"someone-old": {}}, "meta": {}, "body": {}}
    cli(app, "load", PEOPLE8, "--replace", "--yes")
    (new,) = fake.indices
    assert fake.aliases == {INDEX: {new}} and len(fake.indices[new]["docs"]) == 8
    swaps = [body for _, path, body in fake.calls if path == "/_aliases"]
    assert swaps == [{"actions": [{"add": {"index": new, "alias": INDEX}}, {"remove_index": {"index": INDEX}}]}]


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
        return es_json({"took": 1, "errors": False, "items": [{"index": {"_id": a["index"]["_id"], "status": 201}} for a in actions]})

    meta = []
    server.expect_request(f"/{INDEX}", method="HEAD").respond_with_response(Response(status=200, headers=ES_HEADERS))
    server.expect_request("/_bulk", method="PUT").respond_with_handler(bulk)
    server.expect_request(f"/{INDEX}/_mapping", method="PUT").respond_with_handler(
        lambda request: meta.append(json.loads(request.data)) or es_json({"acknowledged": True}))
    server.expect_request(f"/{INDEX}/_refresh").respond_with_response(es_json({"_shards": {}}))
    server.expect_request(f"/{INDEX}/_count").respond_with_response(es_json({"count": 8}))
    result = client.application.test_cli_runner().invoke(args=["person", "load", PEOPLE8, "--dataset-version", "31.0"])
    assert result.exit_code == 0, result.output
    assert "loaded 8 profiles" in result.output
    assert [line["index"]["_id"] for line in bulk_lines[::2]] == [f"p{n}" for n in range(1, 9)]
    assert bulk_lines[1]["job_company_name"] == "acme"
    assert meta == [{"_meta": {"dataset_version": "31.0"}}]


def test_search_enrich_on_elasticsearch_fetches_hits_by_id(es_client):
    client, headers, server = es_client
    server.expect_request(f"/{INDEX}/_search").respond_with_response(es_json(hits_answer(["a"], 1)))
    server.expect_request(f"/{INDEX}/_mget").respond_with_response(es_json({"docs": [
        {"_index": INDEX, "_id": "a", "found": True, "_source": {"id": "a", "full_name": "person a", "work_email": "a@x.io"}}]}))
    server.expect_request(f"/{INDEX}/_mapping", method="GET").respond_with_response(es_json(
        {INDEX: {"mappings": {"_meta": {"dataset_version": "31.0"}, "properties": {}}}}))
    server.expect_request(f"/{INDEX}/_count").respond_with_response(es_json({"count": 1}))
    response = client.post("/v1/person/search-enrich", json={"query": {"match_all": {}}}, headers=headers)
    assert response.status_code == 200
    assert response.json["data"] == [{"id": "a", "full_name": "person a", "work_email": "a@x.io"}]


def test_a_delta_is_bulk_written_into_the_current_index_with_refresh_held_then_published_by_one_refresh(cluster, tmp_path):
    app, fake = cluster
    cli(app, "load", PEOPLE8, "--replace", "--yes", "--dataset-version", "31.0")
    (current,) = fake.indices
    fake.indices[current]["settings"] = {"refresh_interval": "5s"}
    fake.calls.clear()
    delta = tmp_path / "delta.jsonl"
    delta.write_text('{"id": "p1", "full_name": "renamed one"}\n{"id": "p9", "full_name": "new nine"}\n')
    ids = tmp_path / "removed.txt"
    ids.write_text("p2\np-never-loaded\n")
    output = cli(app, "load", str(delta), "--upsert", "--delete-ids", str(ids), "--dataset-version", "32.0")
    assert "loaded 2 profiles" in output and "removed 1 of 2 listed ids" in output
    assert list(fake.indices) == [current] and fake.aliases == {INDEX: {current}}  # same index, no alias move
    docs = fake.indices[current]["docs"]
    assert docs["p1"] == {"id": "p1", "full_name": "renamed one"} and "p9" in docs and "p2" not in docs and len(docs) == 8
    assert fake.bulk_actions[-4:] == [("index", "p1"), ("index", "p9"), ("delete", "p2"), ("delete", "p-never-loaded")]
    order = [(method, path.replace(current, "<index>").replace(f"/{INDEX}/", "/<index>/"), body) for method, path, body in fake.calls]
    writes = [(m, p, b) for m, p, b in order if m in ("PUT", "POST") and not p.endswith("_count")]
    assert writes == [
        ("PUT", "/<index>/_settings", {"index": {"refresh_interval": "-1"}}),  # nothing of the delta is searchable ...
        ("PUT", "/_bulk", None), ("PUT", "/_bulk", None),
        ("POST", "/<index>/_refresh", None),  # ... until one refresh publishes all of it
        ("PUT", "/<index>/_mapping", {"_meta": {"dataset_version": "32.0"}}),  # the version, once published
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
    result = app.test_cli_runner().invoke(args=["person", "load", str(delta), "--upsert", "--dataset-version", "32.0"])
    assert result.exit_code == 1 and "line 2: rejected" in result.output and "nothing was published" in result.output
    assert not [path for _, path, _ in fake.calls if path.endswith("_bulk") or path.endswith("_refresh")]
    assert fake.indices[current]["docs"] == before and fake.indices[current]["meta"] == {"dataset_version": "31.0"}
    assert fake.indices[current]["settings"] == {"refresh_interval": None}  # switched off, then given back
