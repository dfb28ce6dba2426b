"""PDL's official Python SDK (peopledatalabs 6.4.13) against a live Hirekit, its base URL the only
change: every row of issue 19 (SQL and DSL search, output options, enrichment over GET with the
api_key parameter, bulk, retrieve, identify) on v1, v2 and both sandboxes."""

from __future__ import annotations

import threading

import pytest
import requests
from peopledatalabs import PDLPY
from werkzeug.serving import make_server

from plugins.person.sample import generate

# conftest's embedded indexes: name, count, seed
DATASETS = {False: ("enrich", 400, 21), True: ("sandbox", 60, 99)}
PREFIXES = [
    pytest.param("/v1", False, True, id="v1"),
    pytest.param("/v2", False, False, id="v2"),
    pytest.param("/v1/sandbox", True, True, id="v1-sandbox"),
    pytest.param("/v2/sandbox", True, False, id="v2-sandbox"),
]
# SQL searches and the DSL query each means: the SDK must answer the same ids, in the same order.
SQL_AND_DSL = [
    (
        "SELECT * FROM person WHERE location_country = 'united states' AND job_title_role = "
        "'engineering'",
        {
            "bool": {
                "must": [
                    {"term": {"location_country": "united states"}},
                    {"term": {"job_title_role": "engineering"}},
                ]
            }
        },
    ),
    (
        "SELECT * FROM person WHERE skills IN ('sql', 'python') AND NOT location_country = 'united "
        "states'",
        {
            "bool": {
                "must": [
                    {"terms": {"skills": ["sql", "python"]}},
                    {"bool": {"must_not": [{"term": {"location_country": "united states"}}]}},
                ]
            }
        },
    ),
    (
        "SELECT * FROM person WHERE (job_title_role = 'sales' OR job_title_role = 'finance') AND "
        "inferred_years_experience >= 5",
        {
            "bool": {
                "must": [
                    {
                        "bool": {
                            "should": [
                                {"term": {"job_title_role": "sales"}},
                                {"term": {"job_title_role": "finance"}},
                            ]
                        }
                    },
                    {"range": {"inferred_years_experience": {"gte": 5}}},
                ]
            }
        },
    ),
    (
        "SELECT * FROM person WHERE experience.title.name = 'software engineer' OR "
        "job_company_name LIKE 'red%'",
        {
            "bool": {
                "should": [
                    {"match_phrase": {"experience.title.name": "software engineer"}},
                    {"prefix": {"job_company_name": "red"}},
                ]
            }
        },
    ),
    (
        "SELECT * FROM person WHERE summary IS NULL AND location_country != 'india'",
        {
            "bool": {
                "must": [
                    {"bool": {"must_not": [{"exists": {"field": "summary"}}]}},
                    {"bool": {"must_not": [{"term": {"location_country": "india"}}]}},
                ]
            }
        },
    ),
]


@pytest.fixture
def live(person_app, make_tenant):
    """start(prefix, sandbox) -> (PDLPY client on http://127.0.0.1:PORT{prefix}, the raw base URL,
    the key, its dataset's profiles)."""
    servers = []

    def start(prefix: str, sandbox: bool):
        app = person_app(
            DATASETS[False][0],
            DATASETS[True][0],
            ENRICH_VENDOR="local",
            SANDBOX_ENRICH_VENDOR="local",
        )
        from app.data.db import database
        from app.data.tenancy import create_tenant

        with app.app_context(), database.connection_context():
            _, key = create_tenant(f"sdk-{len(servers)}-{prefix.replace('/', '')}")
        server = make_server("127.0.0.1", 0, app, threaded=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        base = f"http://127.0.0.1:{server.server_port}{prefix}"
        _, count, seed = DATASETS[sandbox]
        return PDLPY(api_key=key, base_path=base), base, key, list(generate(count, seed))

    yield start
    for server in servers:
        server.shutdown()


def ids(response) -> list[str]:
    assert response.status_code == 200, response.text
    return [person["id"] for person in response.json()["data"]]


def someone(people: list[dict]) -> dict:
    return next(
        p
        for p in people
        if p["work_email"]
        and p["personal_emails"]
        and p["profiles"]
        and p["experience"]
        and p["education"]
    )


@pytest.mark.parametrize("prefix, sandbox, contact", PREFIXES)
def test_sql_search_answers_the_ids_of_its_dsl_twin(live, prefix, sandbox, contact):
    client, _, _, _ = live(prefix, sandbox)
    compared = 0
    for statement, query in SQL_AND_DSL:
        by_sql, by_dsl = (
            ids(client.person.search(sql=statement, size=100)),
            ids(client.person.search(query=query, size=100)),
        )
        assert by_sql == by_dsl, statement
        compared += bool(by_sql)
    assert compared >= 4  # the comparisons are not all of empty answers


@pytest.mark.parametrize("prefix, sandbox, contact", PREFIXES)
def test_sql_search_scrolls_like_its_dsl_twin(live, prefix, sandbox, contact):
    client, _, _, _ = live(prefix, sandbox)
    statement, query = (
        "SELECT * FROM person WHERE location_country = 'united states'",
        {"term": {"location_country": "united states"}},
    )
    walked = {}
    for name, kwargs in (("sql", {"sql": statement}), ("dsl", {"query": query})):
        first = client.person.search(size=3, **kwargs).json()
        second = client.person.search(size=3, scroll_token=first["scroll_token"], **kwargs).json()
        walked[name] = [p["id"] for p in first["data"] + second["data"]]
    assert walked["sql"] == walked["dsl"] and len(set(walked["sql"])) == 6
    # the SDK sends from as "from_"
    later = client.person.search(sql=statement, size=3, from_=3).json()
    assert [p["id"] for p in later["data"]] == walked["sql"][3:]


@pytest.mark.parametrize("prefix, sandbox, contact", PREFIXES)
def test_sql_refusals_reach_the_sdk_as_400_naming_the_problem(live, prefix, sandbox, contact):
    client, _, _, _ = live(prefix, sandbox)
    for statement, problem in (
        ("SELECT * FROM person LIMIT 3", "LIMIT"),
        ("SELECT full_name FROM person", "SELECT *"),
        ("SELECT * FROM person WHERE florp = 'x'", "florp"),
    ):
        answer = client.person.search(sql=statement)
        assert answer.status_code == 400 and problem in answer.json()["error"]["message"]


@pytest.mark.parametrize("prefix, sandbox, contact", PREFIXES)
def test_search_titlecase_and_pretty(live, prefix, sandbox, contact):
    client, _, _, _ = live(prefix, sandbox)
    statement = "SELECT * FROM person WHERE location_country = 'united states'"
    answer = client.person.search(sql=statement, size=5, titlecase=True, pretty=True)
    assert answer.status_code == 200 and "\n  " in answer.text
    for person in answer.json()["data"]:
        assert (
            person["location_country"] == "United States"
            and person["full_name"] == person["full_name"].title()
        )
    plain = client.person.search(sql=statement, size=5).json()["data"]
    assert all(person["location_country"] == "united states" for person in plain)


def test_search_data_include_sent_as_pdl_documents_it(live):
    """peopledatalabs 6.4.13's SearchModel has no data_include field, so the SDK drops it before
    sending; PDL's clients that send it (the HTTP API, other SDKs) get the trimmed records."""
    _, base, key, _ = live("/v1", False)
    answer = requests.post(
        f"{base}/person/search",
        headers={"X-Api-Key": key},
        timeout=10,
        json={
            "sql": "SELECT * FROM person WHERE location_country = 'canada'",
            "size": 3,
            "data_include": "full_name,experience.company.name",
        },
    )
    assert answer.status_code == 200
    for person in answer.json()["data"]:
        assert set(person) == {"full_name", "experience"}
        assert all(
            set(job) == {"company"} and set(job["company"]) == {"name"}
            for job in person["experience"]
        )


@pytest.mark.parametrize("prefix, sandbox, contact", PREFIXES)
def test_enrichment_over_get_with_the_key_as_a_parameter(live, prefix, sandbox, contact):
    client, _, _, people = live(prefix, sandbox)
    person = someone(people)
    answer = client.person.enrichment(
        email=["nobody@example.com", person["work_email"]], min_likelihood=2
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["data"]["id"] == person["id"] and body["likelihood"] == 6
    # v2's enrich leaves contact details out (docs/integrating.md)
    assert ("work_email" in body["data"]) is contact
    shaped = client.person.enrichment(
        email=person["work_email"],
        titlecase=True,
        data_include="full_name,job_title",
        include_if_matched=True,
    ).json()
    assert shaped["data"] == {
        "full_name": person["full_name"].title(),
        "job_title": person["job_title"].title(),
    }
    assert shaped["matched"] == ["email"]
    required = "emails AND profiles" if contact else "experience AND education"
    assert (
        client.person.enrichment(email=person["work_email"], required=required).status_code == 200
    )
    lacking = client.person.enrichment(
        email=person["work_email"], required="interests AND NOT experience"
    )
    assert lacking.status_code == 404 and lacking.json()["error"]["type"] == "not_found"


@pytest.mark.parametrize("prefix, sandbox, contact", PREFIXES)
def test_bulk_answers_an_array_in_request_order_with_metadata(live, prefix, sandbox, contact):
    client, _, _, people = live(prefix, sandbox)
    first, second = people[0], someone(people[1:])
    answer = client.person.bulk(
        requests=[
            {"params": {"email": second["work_email"]}, "metadata": {"row": 1}},
            {"params": {"email": "nobody@example.com"}, "metadata": {"row": 2}},
            {"params": {"pdl_id": first["id"]}, "metadata": {"row": 3}},
        ],
        titlecase=True,
        data_include="id,full_name",
    )
    assert answer.status_code == 200, answer.text
    items = answer.json()
    assert isinstance(items, list) and [item["metadata"] for item in items] == [
        {"row": 1},
        {"row": 2},
        {"row": 3},
    ]
    assert [item["status"] for item in items] == [200, 404, 200]
    assert items[0]["data"] == {"id": second["id"], "full_name": second["full_name"].title()}
    assert items[2]["data"]["id"] == first["id"] and items[2]["likelihood"] == 10


@pytest.mark.parametrize("prefix, sandbox, contact", PREFIXES)
def test_retrieve_one_profile_by_id(live, prefix, sandbox, contact):
    client, _, _, people = live(prefix, sandbox)
    person = someone(people)
    answer = client.person.retrieve(person["id"])
    assert answer.status_code == 200, answer.text
    assert (
        answer.json()["data"]["id"] == person["id"]
        and answer.json()["data"]["full_name"] == person["full_name"]
    )
    assert ("personal_emails" in answer.json()["data"]) is contact
    missing = client.person.retrieve("no-such-person")
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "not_found"


@pytest.mark.parametrize("prefix, sandbox, contact", PREFIXES)
def test_identify_answers_candidates_strongest_first(live, prefix, sandbox, contact):
    client, _, _, people = live(prefix, sandbox)
    person = someone(people)
    answer = client.person.identify(
        name=person["full_name"], company=person["job_company_name"], email=person["work_email"]
    )
    assert answer.status_code == 200, answer.text
    matches = answer.json()["matches"]
    assert matches[0]["data"]["id"] == person["id"] and matches[0]["match_score"] == 100
    assert set(matches[0]["matched_on"]) >= {"email", "full_name", "company_name"}
    scores = [match["match_score"] for match in matches]
    assert scores == sorted(scores, reverse=True) and 1 <= len(matches) <= 20
    assert client.person.identify(email="nobody@example.com").status_code == 404
