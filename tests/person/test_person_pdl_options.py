"""PDL's request conventions on every person route: data_include, titlecase and pretty, enrich
`required` and list inputs, the api_key parameter, and the SQL search's HTTP contract (one of query
or sql, 400 naming a refusal)."""

from __future__ import annotations

import pytest

from plugins.person import shaping
from plugins.person.required import compile_required
from plugins.person.sample import generate

PERSON = next(p for p in generate(400, 21) if p["work_email"] and p["profiles"] and p["experience"])
BY_EMAIL = {"email": PERSON["work_email"]}
US = {"term": {"location_country": "united states"}}
# route, body, where the records are in the answer
ROUTES = [
    ("/v1/person/search", {"query": US, "size": 3}, shaping.hits),
    (
        "/v2/person/search",
        {"sql": "SELECT * FROM person WHERE location_country = 'united states'", "size": 3},
        shaping.hits,
    ),
    ("/v2/person/search/page", {"query": US, "size": 3, "page": 2}, shaping.hits),
    ("/v1/person/search-enrich", {"query": US, "size": 3}, shaping.hits),
    ("/v2/person/search-enrich", {"query": US, "size": 3}, shaping.hits),
    ("/v1/person/enrich", BY_EMAIL, shaping.record),
    ("/v2/person/enrich", BY_EMAIL, shaping.record),
    ("/v2/person/enrich/info", BY_EMAIL, shaping.record),
    ("/v2/person/enrich/info/bulk", {"requests": [BY_EMAIL, {"params": BY_EMAIL}]}, shaping.items),
    ("/v1/person/bulk", {"requests": [{"params": BY_EMAIL}]}, shaping.array_items),
    ("/v2/person/identify", BY_EMAIL, shaping.matches),
]


@pytest.fixture
def pdl(shared_person_client):
    """The options' answers over one dataset; one app for the module, as its tests only read."""
    return shared_person_client("enrich", ENRICH_VENDOR="local")


def records(body, layout) -> list[dict]:
    found = [container[key] for container, key in layout(body)]
    assert found, body
    return found


@pytest.mark.parametrize(
    "path, body, layout", ROUTES, ids=[r[0] + "-" + next(iter(r[1])) for r in ROUTES]
)
def test_data_include_and_titlecase_on_each_route(pdl, path, body, layout):
    client, headers = pdl
    plain = client.post(path, json=body, headers=headers)
    assert plain.status_code == 200, plain.json
    assert all(r["location_country"].islower() for r in records(plain.json, layout))
    shaped = client.post(
        path,
        json={
            **body,
            "data_include": "id,location_country,experience.company.name",
            "titlecase": True,
        },
        headers=headers,
    )
    assert shaped.status_code == 200, shaped.json
    for person in records(shaped.json, layout):
        assert (
            set(person) <= {"id", "location_country", "experience"}
            and person["location_country"][0].isupper()
        )
        assert all(
            set(job) == {"company"} and job["company"]["name"][0].isupper()
            for job in person.get("experience", [])
        )
    dropped = client.post(
        path, json={**body, "data_include": "-experience,education"}, headers=headers
    )
    assert all(
        "experience" not in r and "education" not in r and "id" in r
        for r in records(dropped.json, layout)
    )
    empty = client.post(path, json={**body, "data_include": ""}, headers=headers)
    assert all(r == {} for r in records(empty.json, layout))


@pytest.mark.parametrize(
    "path, body, layout", ROUTES[:3] + ROUTES[5:6], ids=["v1-search", "v2-sql", "page", "enrich"]
)
def test_pretty_indents_the_same_answer(pdl, path, body, layout):
    client, headers = pdl
    plain = client.post(path, json=body, headers=headers)
    pretty = client.post(path, json={**body, "pretty": True}, headers=headers)
    assert b"\n  " in pretty.data and b"\n" not in plain.data
    # a scroll token carries its signing second, so two requests may straddle a tick: compare all
    # but the token
    assert {**pretty.json, "scroll_token": None} == {**plain.json, "scroll_token": None}


def test_retrieve_takes_output_options_as_query_parameters(pdl):
    client, headers = pdl
    answer = client.get(
        f"/v1/person/retrieve/{PERSON['id']}?titlecase=True&data_include=full_name", headers=headers
    )
    assert answer.status_code == 200 and answer.json["data"] == {
        "full_name": PERSON["full_name"].title()
    }
    assert answer.json["billed"] is False


@pytest.mark.parametrize(
    "data_include, problem", [("a,-b", "Cannot mix"), ("full name", "Not a field path")]
)
def test_bad_data_include_is_400(pdl, data_include, problem):
    client, headers = pdl
    answer = client.post(
        "/v1/person/search", json={"query": US, "data_include": data_include}, headers=headers
    )
    assert answer.status_code == 400 and problem in str(
        answer.json["error"]["fields"]["data_include"]
    )


def test_titlecase_words():
    assert (
        shaping.title_case("jean-luc o'neil of san francisco/bay (area)")
        == "Jean-Luc O'neil Of San Francisco/Bay (Area)"
    )


# ---- required -----------------------------------------------------------------

RECORD = {
    "emails": [{"address": "a@b.c"}],
    "phone_numbers": [],
    "profiles": [{"network": "linkedin", "url": "x"}],
    "summary": "",
    "experience": [{"title": {"name": "cto"}}],
}


@pytest.mark.parametrize(
    "expression, holds",
    [
        ("emails", True),
        ("phone_numbers", False),
        ("summary", False),
        ("emails AND phone_numbers", False),
        ("emails AND (profiles OR phone_numbers)", True),
        ("NOT phone_numbers", True),
        ("phone_numbers or emails", True),
        ("profiles.network:linkedin", True),
        ("profiles.network:github", False),
        ("experience.title.name:CTO", True),
        ("emails AND NOT profiles", False),
        ("experience", True),
    ],
)
def test_required_expression(expression, holds):
    assert compile_required(expression)(RECORD) is holds


@pytest.mark.parametrize(
    "expression, problem",
    [
        ("emails AND", "ends where a field"),
        ("(emails", "not closed"),
        ("emails)", "unexpected ')'"),
        ("florp", "unknown field 'florp'"),
        ("AND emails", "expected a field name"),
    ],
)
def test_malformed_required_is_400_before_matching(pdl, expression, problem):
    client, headers = pdl
    answer = client.post(
        "/v1/person/enrich", json={**BY_EMAIL, "required": expression}, headers=headers
    )
    assert answer.status_code == 400 and problem in answer.json["error"]["message"]


def test_required_applies_to_bulk_items_that_do_not_set_their_own(pdl):
    client, headers = pdl
    answer = client.post(
        "/v1/person/bulk",
        headers=headers,
        json={
            "required": "interests",
            "requests": [{"params": BY_EMAIL}, {"params": {**BY_EMAIL, "required": "emails"}}],
        },
    )
    assert [item["status"] for item in answer.json] == [404, 200]


# ---- inputs as PDL sends them ---------------------------------------------------------


def test_enrich_get_takes_repeated_parameters_as_lists_and_sdk_booleans(pdl):
    client, headers = pdl
    query = [
        ("company", "no such company"),
        ("company", PERSON["job_company_name"]),
        ("name", PERSON["full_name"]),
        ("include_if_matched", "True"),
    ]
    answer = client.get("/v1/person/enrich", query_string=query, headers=headers)
    assert answer.status_code == 200, answer.json
    assert answer.json["data"]["id"] == PERSON["id"] and set(answer.json["matched"]) == {
        "full_name",
        "company_name",
    }


def test_a_name_given_twice_is_422(pdl):
    client, headers = pdl
    answer = client.post(
        "/v1/person/enrich", json={"name": ["a b", "c d"], "company": "x"}, headers=headers
    )
    assert answer.status_code == 422 and "full_name" in answer.json["error"]["fields"]


@pytest.mark.parametrize("where", ["query", "body", "lowercase header"])
def test_key_as_pdl_clients_send_it(pdl, where):
    client, headers = pdl
    key = headers["X-API-Key"]
    if where == "query":
        answer = client.get(f"/v1/person/retrieve/{PERSON['id']}?api_key={key}")
    elif where == "body":
        answer = client.post("/v1/person/search", json={"query": US, "api_key": key})
    else:
        answer = client.post("/v1/person/search", json={"query": US}, headers={"x-api-key": key})
    assert answer.status_code == 200, answer.json


def test_unknown_key_as_a_parameter_is_401_without_echoing_it(pdl):
    client, _ = pdl
    answer = client.get("/v1/person/enrich?email=a@b.c&api_key=hk_not-a-real-key-123")
    assert answer.status_code == 401 and b"hk_not-a-real-key-123" not in answer.data
    assert (
        "api_key parameter" in client.get("/v1/person/enrich?email=a@b.c").json["error"]["message"]
    )


# ---- SQL over HTTP -----------------------------------------------------------------------


def test_query_and_sql_together_is_400(pdl):
    client, headers = pdl
    answer = client.post(
        "/v1/person/search", json={"query": US, "sql": "SELECT * FROM person"}, headers=headers
    )
    assert answer.status_code == 400 and "query and sql" in answer.json["error"]["message"]


def test_neither_query_nor_sql_is_422_naming_query(pdl):
    client, headers = pdl
    answer = client.post("/v1/person/search", json={"size": 3}, headers=headers)
    assert answer.status_code == 422 and "sql" in answer.json["error"]["fields"]["query"][0]


def test_sql_pages_like_its_dsl_twin(pdl):
    client, headers = pdl
    by_sql = client.get(
        "/v2/person/search/page",
        query_string={
            "sql": "SELECT * FROM person WHERE location_country = 'united states'",
            "size": 7,
            "page": 3,
        },
        headers=headers,
    ).json
    by_dsl = client.post(
        "/v2/person/search/page", json={"query": US, "size": 7, "page": 3}, headers=headers
    ).json
    assert by_sql == by_dsl and len(by_sql["data"]) == 7


def test_a_scroll_token_from_sql_refuses_another_statement(pdl):
    client, headers = pdl
    first = client.post(
        "/v1/person/search",
        json={"sql": "SELECT * FROM person WHERE location_country = 'united states'", "size": 2},
        headers=headers,
    ).json
    other = client.post(
        "/v1/person/search",
        json={
            "sql": "SELECT * FROM person WHERE location_country = 'canada'",
            "size": 2,
            "scroll_token": first["scroll_token"],
        },
        headers=headers,
    )
    assert other.status_code == 400
