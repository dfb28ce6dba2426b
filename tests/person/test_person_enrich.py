"""Enrichment with the local matcher: identifiers, name plus context, likelihood thresholds, v1/v2
names, info vs plain, bulk."""

from __future__ import annotations

from collections import Counter

import phonenumbers
import pytest

from plugins.person.sample import generate

ENRICH_COUNT, ENRICH_SEED = 400, 21  # the "enrich" dataset of conftest


@pytest.fixture(scope="module")
def people():
    return list(generate(ENRICH_COUNT, ENRICH_SEED))


@pytest.fixture(scope="module")
def someone(people):
    """A profile with every identifier whose name + current company is unique in the dataset."""
    pairs = Counter((p["full_name"], p["job_company_name"]) for p in people)
    names = Counter(p["full_name"] for p in people)
    return next(
        p
        for p in people
        if p["work_email"]
        and p["phone_numbers"]
        and p["linkedin_url"]
        and p["personal_emails"]
        and pairs[(p["full_name"], p["job_company_name"])] == 1
        and names[p["full_name"]] == 1
        and p["phone_numbers"][0].startswith("+1")
    )


@pytest.fixture
def enrich_client(person_client):
    return person_client("enrich")


def enrich(client, headers, path="/v1/person/enrich", **body):
    return client.post(path, json=body, headers=headers)


def test_enrich_by_email(enrich_client, someone):
    client, headers = enrich_client
    response = enrich(client, headers, email=someone["work_email"].upper())
    assert response.status_code == 200
    assert response.json["data"]["id"] == someone["id"]
    assert response.json["likelihood"] == 6
    assert response.json["dataset_version"] == f"sample-{ENRICH_SEED}"
    assert "matched" not in response.json


def test_enrich_by_phone_in_another_format(enrich_client, someone):
    client, headers = enrich_client
    national = phonenumbers.format_number(
        phonenumbers.parse(someone["phone_numbers"][0]), phonenumbers.PhoneNumberFormat.NATIONAL
    )
    response = enrich(client, headers, phone_number=national, include_if_matched=True)
    assert response.status_code == 200 and response.json["data"]["id"] == someone["id"]
    assert response.json["matched"] == ["phone_number"]


def test_enrich_by_profile_url(enrich_client, someone):
    client, headers = enrich_client
    response = enrich(client, headers, profile=[f"https://www.{someone['linkedin_url']}/"])
    assert response.status_code == 200 and response.json["data"]["id"] == someone["id"]


def test_enrich_by_name_and_company_lists_what_matched(enrich_client, someone):
    client, headers = enrich_client
    response = enrich(
        client,
        headers,
        full_name=someone["full_name"].title(),
        company_name=someone["job_company_name"],
        include_if_matched=True,
    )
    assert response.status_code == 200 and response.json["data"]["id"] == someone["id"]
    assert response.json["likelihood"] == 5
    assert response.json["matched"] == ["full_name", "company_name"]


def test_pdl_names_are_aliases(enrich_client, someone):
    client, headers = enrich_client
    response = enrich(
        client,
        headers,
        first_name=someone["first_name"],
        last_name=someone["last_name"],
        company=someone["job_company_name"],
        location=someone["location_locality"],
        include_if_matched=True,
    )
    assert response.status_code == 200 and response.json["data"]["id"] == someone["id"]
    assert response.json["matched"] == ["full_name", "company_name", "location"]
    assert response.json["likelihood"] == 6


def test_more_agreeing_inputs_raise_likelihood_to_the_cap(enrich_client, someone):
    client, headers = enrich_client
    response = enrich(
        client,
        headers,
        email=someone["work_email"],
        full_name=someone["full_name"],
        company_name=someone["job_company_name"],
        include_if_matched=True,
    )
    assert response.json["likelihood"] == 10
    assert response.json["matched"] == ["email", "full_name", "company_name"]


def test_below_min_likelihood_is_404(enrich_client, someone):
    client, headers = enrich_client
    body = {"full_name": someone["full_name"], "company_name": someone["job_company_name"]}
    assert enrich(client, headers, **body, min_likelihood=5).status_code == 200
    response = enrich(client, headers, **body, min_likelihood=6)
    assert response.status_code == 404 and "likelihood 5" in response.json["error"]["message"]


def test_no_match_is_404(enrich_client):
    client, headers = enrich_client
    response = enrich(client, headers, email="nobody@nowhere.example")
    assert response.status_code == 404 and response.json["error"]["type"] == "not_found"


@pytest.mark.parametrize(
    "body, says",
    [
        ({"first_name": "jane"}, "first_name and last_name"),
        ({"full_name": "jane doe"}, "company_name, school or location"),
        ({"job_title": "engineer"}, "Got: job_title"),
        ({}, "Got: nothing"),
    ],
)
def test_too_little_to_identify_is_400_saying_what_is_missing(enrich_client, body, says):
    client, headers = enrich_client
    response = enrich(client, headers, **body)
    assert response.status_code == 400 and says in response.json["error"]["message"]


@pytest.mark.parametrize("value", [0, 11])
def test_min_likelihood_outside_1_to_10_is_422(enrich_client, value):
    client, headers = enrich_client
    response = enrich(client, headers, email="a@b.c", min_likelihood=value)
    assert response.status_code == 422 and "min_likelihood" in response.json["error"]["fields"]


def test_v1_identifies_with_vendor_id_and_v2_with_servicegraph_id(enrich_client, someone):
    client, headers = enrich_client
    v1 = enrich(client, headers, vendor_id=someone["id"], include_if_matched=True)
    assert (
        v1.status_code == 200
        and v1.json["likelihood"] == 10
        and v1.json["matched"] == ["vendor_id"]
    )
    v2 = enrich(
        client,
        headers,
        "/v2/person/enrich/info",
        servicegraph_id=someone["id"],
        include_if_matched=True,
    )
    assert v2.status_code == 200 and v2.json["matched"] == ["servicegraph_id"]
    assert enrich(client, headers, servicegraph_id=someone["id"]).status_code == 422
    assert enrich(client, headers, "/v2/person/enrich", vendor_id=someone["id"]).status_code == 422
    assert enrich(client, headers, vendor_id="no-such-person").status_code == 404


def test_plain_v2_enrich_leaves_out_contact_details_and_info_keeps_them(enrich_client, someone):
    client, headers = enrich_client
    plain = enrich(client, headers, "/v2/person/enrich", servicegraph_id=someone["id"]).json["data"]
    info = enrich(client, headers, "/v2/person/enrich/info", servicegraph_id=someone["id"]).json[
        "data"
    ]
    for field in (
        "work_email",
        "personal_emails",
        "emails",
        "phone_numbers",
        "profiles",
        "linkedin_url",
    ):
        assert field not in plain and info[field] == someone[field]
    assert plain["experience"] == info["experience"] == someone["experience"]


def test_get_enrich_reads_query_parameters(enrich_client, someone):
    client, headers = enrich_client
    response = client.get(
        "/v1/person/enrich",
        query_string={"email": someone["work_email"], "include_if_matched": "true"},
        headers=headers,
    )
    assert response.status_code == 200 and response.json["matched"] == ["email"]


def test_bulk_keeps_order_with_per_item_statuses(enrich_client, someone, people):
    client, headers = enrich_client
    other = next(p for p in people if p["work_email"] and p["id"] != someone["id"])
    body = {
        "requests": [
            {"params": {"email": someone["work_email"]}, "metadata": {"row": 1}},
            {"params": {"email": "nobody@nowhere.example"}, "metadata": {"row": 2}},
            {"params": {"first_name": "only"}},
            {"servicegraph_id": other["id"]},
            {"params": {"email": 5}},
        ],
        "include_if_matched": True,
    }
    response = client.post("/v2/person/enrich/info/bulk", json=body, headers=headers)
    assert response.status_code == 200
    items = response.json["data"]
    assert [item["status"] for item in items] == [200, 404, 400, 200, 422]
    assert (
        items[0]["data"]["id"] == someone["id"]
        and items[0]["metadata"] == {"row": 1}
        and items[0]["matched"] == ["email"]
    )
    assert (
        items[1]["data"] is None
        and items[1]["error"]["type"] == "not_found"
        and items[1]["metadata"] == {"row": 2}
    )
    assert "first_name and last_name" in items[2]["error"]["message"]
    assert items[3]["data"]["id"] == other["id"] and items[3]["likelihood"] == 10
    assert "email" in items[4]["error"]["fields"]


@pytest.mark.parametrize("count", [0, 101])
def test_bulk_outside_1_to_100_requests_is_422(enrich_client, count):
    client, headers = enrich_client
    response = client.post(
        "/v2/person/enrich/info/bulk",
        json={"requests": [{"email": "a@b.c"}] * count},
        headers=headers,
    )
    assert response.status_code == 422 and "requests" in response.json["error"]["fields"]


def test_search_enrich_overlays_hits_in_order(enrich_client, someone):
    client, headers = enrich_client
    body = {"query": {"term": {"job_company_name": someone["job_company_name"]}}, "size": 5}
    searched = client.post("/v2/person/search", json=body, headers=headers).json
    enriched = client.post("/v2/person/search-enrich", json=body, headers=headers).json
    assert [h["id"] for h in enriched["data"]] == [h["id"] for h in searched["data"]]
    assert enriched["total"] == searched["total"] and enriched["data"] == searched["data"]


@pytest.mark.parametrize(
    "path, body",
    [
        ("/v1/person/enrich", {"email": "a@b.c"}),
        ("/v2/person/enrich/info", {"email": "a@b.c"}),
        ("/v2/person/enrich/info/bulk", {"requests": [{"email": "a@b.c"}]}),
        ("/v1/person/search-enrich", {"query": {"match_all": {}}}),
        ("/v2/person/search-enrich", {"query": {"match_all": {}}}),
    ],
)
def test_enrichment_without_a_vendor_is_503(person_client, path, body):
    client, headers = person_client("enrich", ENRICH_VENDOR="none")
    response = client.post(path, json=body, headers=headers)
    assert response.status_code == 503 and response.headers["Retry-After"]
    assert "HIREKIT_ENRICH_VENDOR" in response.json["error"]["message"]
    assert (
        client.post(
            "/v2/person/search", json={"query": {"match_all": {}}}, headers=headers
        ).status_code
        == 200
    )


def test_bulk_of_identifiers_answers_what_one_by_one_enrich_answers(enrich_client, people):
    client, headers = enrich_client
    with_phone = [p for p in people if p["phone_numbers"]][:10]
    with_url = [p for p in people if p["linkedin_url"]][10:20]
    with_email = [p for p in people if p["work_email"]][20:40]
    singles = (
        [{"email": p["work_email"]} for p in with_email]
        + [{"phone": p["phone_numbers"][0]} for p in with_phone]
        + [{"profile": p["linkedin_url"]} for p in with_url]
        + [
            {"email": "nobody@nowhere.example"},
            {"email": with_email[0]["work_email"], "phone": "+15550000000"},
            {"name": with_email[1]["full_name"], "company": with_email[1]["job_company_name"]},
        ]
    )
    bulk = client.post(
        "/v2/person/enrich/info/bulk",
        json={"requests": singles, "include_if_matched": True},
        headers=headers,
    )
    assert bulk.status_code == 200
    for single, item in zip(singles, bulk.json["data"]):
        one = client.post(
            "/v2/person/enrich/info", json={**single, "include_if_matched": True}, headers=headers
        )
        assert item["status"] == one.status_code, single
        if one.status_code == 200:
            assert (item["data"]["id"], item["likelihood"], item["matched"]) == (
                one.json["data"]["id"],
                one.json["likelihood"],
                one.json["matched"],
            )
    assert sum(item["status"] == 200 for item in bulk.json["data"]) >= 41
