"""The HTTP enrichment vendor against a local server playing a PDL-compatible upstream: mapping,
404, retries, outages, timeouts."""

from __future__ import annotations

import json
import threading
import time

import pytest
from werkzeug import Response

PROFILE = {
    "id": "up-1",
    "full_name": "jane doe",
    "job_company_name": "acme",
    "work_email": "jane@acme.com",
    "dataset_version": "29.0",
}


def upstream_json(body, status=200, headers=None):
    return Response(
        json.dumps(body),
        status=status,
        headers={"Content-Type": "application/json", **(headers or {})},
    )


@pytest.fixture
def vendor_client(person_client, httpserver):
    client, headers = person_client(
        None,
        ENRICH_VENDOR="http",
        ENRICH_URL=httpserver.url_for("/"),
        ENRICH_API_KEY="upstream-key",
        ENRICH_BACKOFF=0.01,
        ENRICH_RETRIES=2,
        ENRICH_TIMEOUT=0.5,
    )
    return client, headers, httpserver


def test_inputs_are_sent_under_the_upstreams_names(vendor_client):
    client, headers, server = vendor_client
    seen = []

    def handle(request):
        seen.append((dict(request.args.lists()), request.headers.get("X-Api-Key")))
        return upstream_json(
            {
                "status": 200,
                "likelihood": 8,
                "data": PROFILE,
                "matched": ["name", "company", "phone"],
            }
        )

    server.expect_request("/v5/person/enrich", method="GET").respond_with_handler(handle)
    response = client.post(
        "/v2/person/enrich/info",
        json={
            "full_name": "Jane Doe",
            "company_name": "acme",
            "phone_number": "+14155550123",
            "include_if_matched": True,
        },
        headers=headers,
    )
    assert response.status_code == 200
    assert response.json == {
        "status": 200,
        "likelihood": 8,
        "data": PROFILE,
        "dataset_version": "29.0",
        "matched": ["full_name", "company_name", "phone_number"],
    }
    params, key = seen[0]
    assert key == "upstream-key"
    assert params == {
        "name": ["Jane Doe"],
        "company": ["acme"],
        "phone": ["+14155550123"],
        "include_if_matched": ["true"],
    }


def test_servicegraph_id_is_sent_as_pdl_id(vendor_client):
    client, headers, server = vendor_client
    server.expect_request(
        "/v5/person/enrich", query_string={"pdl_id": "up-1"}
    ).respond_with_response(upstream_json({"status": 200, "likelihood": 10, "data": PROFILE}))
    response = client.post("/v2/person/enrich", json={"servicegraph_id": "up-1"}, headers=headers)
    assert response.status_code == 200 and "work_email" not in response.json["data"]


def test_upstream_404_is_our_404(vendor_client):
    client, headers, server = vendor_client
    server.expect_request("/v5/person/enrich").respond_with_response(
        upstream_json(
            {"status": 404, "error": {"type": "not_found", "message": "No records were found"}}, 404
        )
    )
    response = client.post("/v1/person/enrich", json={"email": "x@y.z"}, headers=headers)
    assert response.status_code == 404 and response.json["error"]["type"] == "not_found"


def test_upstream_429_then_200_is_retried_honouring_retry_after(vendor_client):
    client, headers, server = vendor_client
    answers = [
        upstream_json({"status": 429}, 429, {"Retry-After": "0.2"}),
        upstream_json({"status": 200, "likelihood": 9, "data": PROFILE}),
    ]
    calls = []
    server.expect_request("/v5/person/enrich").respond_with_handler(
        lambda request: calls.append(time.monotonic()) or answers.pop(0)
    )
    response = client.post("/v1/person/enrich", json={"email": "jane@acme.com"}, headers=headers)
    assert response.status_code == 200 and response.json["likelihood"] == 9
    assert len(calls) == 2 and calls[1] - calls[0] >= 0.18


def test_upstream_429_after_every_retry_is_our_429(vendor_client):
    client, headers, server = vendor_client
    server.expect_request("/v5/person/enrich").respond_with_response(
        upstream_json({"status": 429}, 429, {"Retry-After": "0"})
    )
    response = client.post("/v1/person/enrich", json={"email": "jane@acme.com"}, headers=headers)
    assert response.status_code == 429 and response.headers["Retry-After"]
    assert len(server.log) == 3


def test_upstream_outage_is_502(vendor_client):
    client, headers, server = vendor_client
    server.expect_request("/v5/person/enrich").respond_with_response(Response("down", status=503))
    response = client.post("/v1/person/enrich", json={"email": "jane@acme.com"}, headers=headers)
    assert response.status_code == 502 and response.json["error"]["type"] == "upstream_error"


def test_unreachable_upstream_is_502(person_client):
    client, headers = person_client(
        None, ENRICH_VENDOR="http", ENRICH_URL="http://127.0.0.1:9", ENRICH_BACKOFF=0.01
    )
    response = client.post("/v1/person/enrich", json={"email": "jane@acme.com"}, headers=headers)
    assert response.status_code == 502 and "not reachable" in response.json["error"]["message"]


def test_slow_upstream_times_out_as_502(person_client, httpserver):
    client, headers = person_client(
        None,
        ENRICH_VENDOR="http",
        ENRICH_URL=httpserver.url_for("/"),
        ENRICH_RETRIES=0,
        ENRICH_TIMEOUT=0.3,
    )
    release, finished = threading.Event(), threading.Event()

    def slow(request):  # answers only once the test has its response (or after 10 s)
        release.wait(10)
        finished.set()
        return upstream_json({"status": 200, "likelihood": 9, "data": PROFILE})

    httpserver.expect_request("/v5/person/enrich").respond_with_handler(slow)
    started = time.monotonic()
    try:
        response = client.post(
            "/v1/person/enrich", json={"email": "jane@acme.com"}, headers=headers
        )
        took = time.monotonic() - started
    finally:
        release.set()
    assert (
        response.status_code == 502 and "no answer within 0.3s" in response.json["error"]["message"]
    )
    assert 0.3 <= took < 5  # gave up at its timeout, not when the upstream answered (10 s)
    finished.wait(2)  # let the server finish the abandoned request before the next test uses it


def test_bulk_uses_the_upstream_bulk_endpoint_in_order(vendor_client):
    client, headers, server = vendor_client
    seen = []

    def bulk(request):
        seen.append(json.loads(request.data))
        return upstream_json(
            [
                {"status": 200, "likelihood": 7, "data": PROFILE},
                {"status": 404, "error": {"type": "not_found", "message": "none"}},
            ]
        )

    server.expect_request("/v5/person/bulk", method="POST").respond_with_handler(bulk)
    response = client.post(
        "/v2/person/enrich/info/bulk",
        json={
            "requests": [
                {"email": "jane@acme.com", "metadata": "row-1"},
                {"params": {"email": "ghost@acme.com"}},
                {"first_name": "x"},
            ]
        },
        headers=headers,
    )
    assert response.status_code == 200
    assert [item["status"] for item in response.json["data"]] == [200, 404, 400]
    assert response.json["data"][0]["metadata"] == "row-1"
    assert seen == [
        {
            "requests": [
                {"params": {"email": "jane@acme.com"}},
                {"params": {"email": "ghost@acme.com"}},
            ]
        }
    ]


def test_sandbox_never_calls_the_production_upstream(person_client, httpserver):
    client, headers = person_client(
        None, ENRICH_VENDOR="http", ENRICH_URL=httpserver.url_for("/"), SANDBOX_ENRICH_VENDOR="http"
    )
    response = client.post(
        "/v1/sandbox/person/enrich", json={"email": "jane@acme.com"}, headers=headers
    )
    assert response.status_code == 503 and httpserver.log == []
    sandbox_client, sandbox_headers = person_client(
        None,
        ENRICH_VENDOR="http",
        ENRICH_URL="http://127.0.0.1:9",
        SANDBOX_ENRICH_VENDOR="http",
        SANDBOX_ENRICH_URL=httpserver.url_for("/"),
    )
    httpserver.expect_request("/v5/person/enrich").respond_with_response(
        upstream_json({"status": 200, "likelihood": 6, "data": PROFILE})
    )
    answer = sandbox_client.post(
        "/v2/sandbox/person/enrich/info", json={"email": "jane@acme.com"}, headers=sandbox_headers
    )
    assert answer.status_code == 200 and len(httpserver.log) == 1


def test_identify_reads_the_upstreams_candidates(vendor_client):
    client, headers, server = vendor_client
    other = {**PROFILE, "id": "up-2", "work_email": None}
    server.expect_request(
        "/v5/person/identify", method="GET", query_string={"email": "jane@acme.com"}
    ).respond_with_json(
        {
            "status": 200,
            "matches": [
                {"data": PROFILE, "match_score": 94, "matched_on": ["email"]},
                {"data": other, "match_score": 31, "matched_on": ["name"]},
            ],
        }
    )
    answer = client.get("/v1/person/identify?email=jane@acme.com", headers=headers)
    assert answer.status_code == 200, answer.json
    assert [
        (m["data"]["id"], m["match_score"], m["matched_on"]) for m in answer.json["matches"]
    ] == [("up-1", 90, ["email"]), ("up-2", 30, ["full_name"])]
    server.expect_request(
        "/v5/person/identify", method="GET", query_string={"email": "nobody@acme.com"}
    ).respond_with_json(
        {"status": 404, "error": {"type": "not_found", "message": "No records were found"}},
        status=404,
    )
    assert (
        client.get("/v1/person/identify?email=nobody@acme.com", headers=headers).status_code == 404
    )
