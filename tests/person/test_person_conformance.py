"""One conformance suite for every search backend: (query, expected ids in order) over the 8
reference profiles of person-api.md section 6."""

from __future__ import annotations

import pytest

from tests.person.conftest import PEOPLE8, SEARCH_BACKENDS

T = lambda field, value: {"term": {field: value}}  # noqa: E731

CASES = [
    # person-api.md section 6, in its numbering
    ("1 term keyword", {"query": T("job_company_name", "acme")}, ["p1", "p3", "p6"]),
    ("1 term is case-sensitive", {"query": T("job_company_name", "Acme")}, []),
    (
        "2 terms",
        {"query": {"terms": {"location_country": ["canada", "japan", "mexico"]}}},
        ["p4", "p5", "p8"],
    ),
    ("3 term on an array", {"query": T("skills", "python")}, ["p1", "p2", "p3", "p4"]),
    (
        "4 match by BM25",
        {"query": {"match": {"job_title": "software engineer"}}},
        ["p2", "p1", "p6", "p8"],
    ),
    (
        "5 match and, sorted",
        {
            "query": {"match": {"job_title": {"query": "engineer software", "operator": "and"}}},
            "sort": [{"inferred_years_experience": "desc"}],
        },
        ["p1", "p2", "p6"],
    ),
    ("6 match_phrase", {"query": {"match_phrase": {"job_title": "engineer in test"}}}, ["p6"]),
    (
        "6 match_phrase keeps order",
        {"query": {"match_phrase": {"job_title": "engineer software"}}},
        [],
    ),
    ("7 term on text is one token", {"query": T("job_title", "software engineer")}, []),
    (
        "7 match on keyword is the whole value",
        {"query": {"match": {"location_locality": "san"}}},
        [],
    ),
    (
        "7 match on keyword, whole value",
        {"query": {"match": {"location_locality": "san francisco"}}},
        ["p1"],
    ),
    (
        "8 filter and must_not",
        {
            "query": {
                "bool": {
                    "filter": [T("location_country", "united states")],
                    "must_not": [T("job_company_name", "acme")],
                }
            }
        },
        ["p2", "p7"],
    ),
    (
        "9 should only",
        {
            "query": {
                "bool": {"should": [T("job_title_role", "sales"), T("job_title_role", "product")]}
            }
        },
        ["p5", "p7"],
    ),
    (
        "10 must with should scoring",
        {
            "query": {
                "bool": {
                    "must": [T("job_title_role", "engineering")],
                    "should": [T("location_country", "japan")],
                }
            }
        },
        ["p8", "p1", "p2", "p3", "p6"],
    ),
    (
        "11 should does not filter beside filter",
        {
            "query": {
                "bool": {
                    "filter": [T("job_company_name", "hooli")],
                    "should": [T("skills", "rust")],
                }
            }
        },
        ["p8", "p7"],
    ),
    (
        "12 minimum_should_match",
        {
            "query": {
                "bool": {
                    "should": [T("skills", "python"), T("skills", "go"), T("skills", "kubernetes")],
                    "minimum_should_match": 2,
                }
            }
        },
        ["p1", "p8"],
    ),
    (
        "13 range on numbers",
        {"query": {"range": {"inferred_years_experience": {"gte": 6, "lt": 15}}}},
        ["p1", "p3", "p4"],
    ),
    (
        "13 range on dates",
        {"query": {"range": {"job_start_date": {"gte": "2019-01-01", "lte": "2021-12-31"}}}},
        ["p1", "p2", "p4"],
    ),
    (
        "14 exists on an array",
        {"query": {"exists": {"field": "job_title_levels"}}},
        ["p1", "p3", "p5", "p7", "p8"],
    ),
    ("14 exists: empty string counts", {"query": {"exists": {"field": "summary"}}}, ["p1", "p3"]),
    (
        "14 must_not exists",
        {"query": {"bool": {"must_not": [{"exists": {"field": "job_start_date"}}]}}},
        ["p7"],
    ),
    ("14 exists on an object", {"query": {"exists": {"field": "experience"}}}, ["p1", "p4", "p7"]),
    ("15 wildcard", {"query": {"wildcard": {"location_locality": "*o"}}}, ["p1", "p4", "p8"]),
    ("15 prefix on keyword", {"query": {"prefix": {"job_company_name": "in"}}}, ["p4"]),
    (
        "15 prefix on text tokens",
        {"query": {"prefix": {"job_title": "eng"}}},
        ["p1", "p2", "p3", "p6", "p8"],
    ),
    (
        "16 object arrays are flattened",
        {
            "query": {
                "bool": {
                    "filter": [
                        T("experience.company.name", "acme"),
                        T("experience.title.role", "product"),
                    ]
                }
            }
        },
        ["p7"],
    ),
    (
        "17 sort desc",
        {"query": {"match_all": {}}, "sort": [{"inferred_years_experience": "desc"}], "size": 3},
        ["p8", "p5", "p3"],
    ),
    (
        "17 sort desc from 6",
        {"query": {"match_all": {}}, "sort": [{"inferred_years_experience": "desc"}], "from": 6},
        ["p6", "p7"],
    ),
    (
        "17 sort asc, missing last",
        {"query": {"match_all": {}}, "sort": [{"inferred_years_experience": "asc"}], "size": 8},
        ["p6", "p2", "p4", "p1", "p3", "p5", "p8", "p7"],
    ),
    (
        "18 array sort asc by min",
        {"query": {"match_all": {}}, "sort": [{"skills": "asc"}]},
        ["p1", "p8", "p2", "p6", "p3", "p4", "p5", "p7"],
    ),
    (
        "18 array sort desc by max",
        {"query": {"match_all": {}}, "sort": [{"skills": {"order": "desc"}}]},
        ["p4", "p7", "p6", "p5", "p8", "p1", "p2", "p3"],
    ),
    (
        "19 bool in filter",
        {
            "query": {
                "bool": {
                    "filter": [
                        {
                            "bool": {
                                "should": [
                                    T("location_country", "japan"),
                                    T("location_country", "canada"),
                                ]
                            }
                        }
                    ]
                }
            }
        },
        ["p4", "p8"],
    ),
    # every clause and option beyond the reference cases
    (
        "match minimum_should_match",
        {
            "query": {
                "match": {
                    "job_title": {"query": "senior software engineer", "minimum_should_match": 2}
                }
            }
        },
        ["p1", "p2", "p6"],
    ),
    (
        "match_phrase with slop",
        {"query": {"match_phrase": {"job_title": {"query": "software test", "slop": 2}}}},
        ["p6"],
    ),
    (
        "match_phrase with slop: a repeated token takes two places",
        {"query": {"match_phrase": {"job_title": {"query": "engineer engineer", "slop": 1}}}},
        [],
    ),
    (
        "match_phrase with slop: three tokens out of order",
        {"query": {"match_phrase": {"job_title": {"query": "president vice of", "slop": 2}}}},
        ["p5"],
    ),
    (
        "exists beside a should of text scores as BM25 with its (k1 + 1) factor",
        {
            "query": {
                "bool": {
                    "should": [
                        {"exists": {"field": "summary"}},
                        {
                            "bool": {
                                "should": [
                                    {"match": {"job_title": "principal"}},
                                    {"match": {"job_title": "president"}},
                                ]
                            }
                        },
                    ]
                }
            }
        },
        ["p8", "p5", "p1", "p3"],
    ),
    (
        "term on text: one token, BM25 by length",
        {"query": T("job_title", "engineer")},
        ["p2", "p8", "p1", "p6"],
    ),
    ("terms on numbers", {"query": {"terms": {"inferred_years_experience": [2, 4]}}}, ["p2", "p6"]),
    (
        "range exclusive bounds",
        {"query": {"range": {"inferred_years_experience": {"gt": 4, "lt": 14}}}},
        ["p1", "p4"],
    ),
    (
        "range on keyword is lexical",
        {"query": {"range": {"job_company_name": {"gte": "b", "lte": "h"}}}},
        ["p2", "p5"],
    ),
    (
        "range with an incomplete date",
        {"query": {"range": {"job_start_date": {"gte": "2020"}}}},
        ["p2", "p4", "p6"],
    ),
    (
        "exists on an object subfield",
        {"query": {"exists": {"field": "experience.company.name"}}},
        ["p1", "p4", "p7"],
    ),
    ("prefix is case-sensitive", {"query": {"prefix": {"job_company_name": "Ac"}}}, []),
    ("wildcard ?", {"query": {"wildcard": {"location_country": "japa?"}}}, ["p8"]),
    (
        "wildcard on text tokens",
        {"query": {"wildcard": {"job_title": "eng*r"}}},
        ["p1", "p2", "p6", "p8"],
    ),
    (
        "must_not only",
        {"query": {"bool": {"must_not": [T("job_title_role", "engineering")]}}},
        ["p4", "p5", "p7"],
    ),
    (
        "minimum_should_match as a percentage",
        {
            "query": {
                "bool": {
                    "should": [T("skills", s) for s in ("python", "go", "kubernetes", "java")],
                    "minimum_should_match": "50%",
                }
            }
        },
        ["p1", "p8", "p2"],
    ),
    ("empty bool is match_all", {"query": {"bool": {}}, "size": 2}, ["p1", "p2"]),
    ("PDL's nested query form", {"query": {"query": T("job_company_name", "hooli")}}, ["p7", "p8"]),
    (
        "sort on a date",
        {"query": {"match_all": {}}, "sort": [{"job_start_date": "asc"}]},
        ["p8", "p5", "p3", "p1", "p4", "p2", "p6", "p7"],
    ),
    (
        "sort on a keyword desc",
        {"query": {"match_all": {}}, "sort": [{"job_company_name": "desc"}]},
        ["p4", "p7", "p8", "p2", "p5", "p1", "p3", "p6"],
    ),
    (
        "keyword sort with from",
        {"query": {"match_all": {}}, "sort": [{"job_company_name": "desc"}], "from": 3, "size": 3},
        ["p2", "p5", "p1"],
    ),
    (
        "number sort from into missing values",
        {
            "query": {"match_all": {}},
            "sort": [{"inferred_years_experience": "asc"}],
            "from": 6,
            "size": 2,
        },
        ["p8", "p7"],
    ),
    (
        "several sort keys: ties on the first broken by the second",
        {
            "query": {"match_all": {}},
            "sort": [{"job_title_role": "asc"}, {"inferred_years_experience": "desc"}],
        },
        ["p8", "p3", "p1", "p2", "p6", "p7", "p4", "p5"],
    ),
    (
        "several sort keys, then index order",
        {
            "query": {"match_all": {}},
            "sort": [{"job_company_name": "desc"}, {"location_country": "asc"}],
        },
        ["p4", "p8", "p7", "p5", "p2", "p6", "p1", "p3"],
    ),
    (
        "several sort keys: a tie group cut by the page edge",
        {
            "query": {"match_all": {}},
            "size": 4,
            "sort": [{"job_company_name": "desc"}, {"location_country": "asc"}],
        },
        ["p4", "p8", "p7", "p5"],
    ),
    (
        "several sort keys with from",
        {
            "query": {"match_all": {}},
            "from": 4,
            "size": 3,
            "sort": [{"job_company_name": "desc"}, {"location_country": "asc"}],
        },
        ["p2", "p6", "p1"],
    ),
    (
        "several sort keys: arrays by min, missing last at every level",
        {
            "query": {"match_all": {}},
            "sort": [{"job_title_levels": "asc"}, {"inferred_years_experience": "asc"}],
        },
        ["p3", "p7", "p1", "p8", "p5", "p6", "p2", "p4"],
    ),
    (
        "several sort keys: the missing group cut by the page edge",
        {
            "query": {"match_all": {}},
            "size": 6,
            "sort": [{"job_title_levels": "asc"}, {"inferred_years_experience": "asc"}],
        },
        ["p3", "p7", "p1", "p8", "p5", "p6"],
    ),
    (
        "relevance then a field",
        {
            "query": {"match": {"job_title": "engineer"}},
            "sort": ["_score", {"job_company_name": "desc"}],
        },
        ["p8", "p2", "p1", "p6"],
    ),
    (
        "a field then relevance",
        {
            "query": {"match": {"job_title": "engineer in test"}},
            "sort": [{"job_company_name": "asc"}, {"_score": "desc"}],
        },
        ["p6", "p1", "p2", "p8"],
    ),
    (
        "_score sort is the default",
        {"query": {"match": {"job_title": "software engineer"}}, "sort": [{"_score": "desc"}]},
        ["p2", "p1", "p6", "p8"],
    ),
]


@pytest.fixture(scope="module")
def cluster_people8(request):
    """The 8 reference profiles loaded once per cluster kind for this module: kind -> its app
    settings."""
    from app.config import DEFAULTS
    from plugins.person import datasets
    from plugins.person.loader import load_file
    from tests.person.conftest import elasticsearch_settings

    loaded: dict[str, dict] = {}

    def settings(kind: str) -> dict:
        if kind not in loaded:
            index = f"hirekit-conformance-{kind}"
            loaded[kind] = (
                elasticsearch_settings(index)
                if kind == "elasticsearch"
                else {
                    "SEARCH_BACKEND": "opensearch",
                    "OPENSEARCH_URL": request.getfixturevalue("opensearch_url"),
                    "OPENSEARCH_INDEX": index,
                    "OPENSEARCH_TIMEOUT": 60.0,
                }
            )
            backend = datasets.build_backend({**DEFAULTS, **loaded[kind]})
            backend.create_index(replace=True)
            assert not load_file(
                backend, PEOPLE8, replace=True, processes=1, writer_threads=1
            ).skipped
            request.addfinalizer(backend.drop_index)
        return loaded[kind]

    return settings


@pytest.fixture(params=SEARCH_BACKENDS)
def conformance_client(request, shared_person_client, cluster_people8):
    """A client over the 8 reference profiles on the parametrized backend (one app per backend: the
    tests only read)."""
    if request.param == "embedded":
        return shared_person_client("people8")
    return shared_person_client(None, **cluster_people8(request.param))


@pytest.mark.parametrize("name, body, expected", CASES, ids=[case[0] for case in CASES])
def test_search_conformance(conformance_client, name, body, expected):
    client, headers = conformance_client
    response = client.post("/v2/person/search", json={"size": 10, **body}, headers=headers)
    assert response.status_code == 200, response.json
    assert [hit["id"] for hit in response.json["data"]] == expected


def test_scroll_conformance_walks_three_pages_then_stops(conformance_client):
    client, headers = conformance_client
    pages, token = [], None
    for _ in range(3):
        body = {"query": {"match_all": {}}, "size": 3, **({"scroll_token": token} if token else {})}
        response = client.post("/v1/person/search", json=body, headers=headers)
        assert response.status_code == 200 and response.json["total"] == 8
        pages.append([hit["id"] for hit in response.json["data"]])
        token = response.json.get("scroll_token")
    assert pages == [["p1", "p2", "p3"], ["p4", "p5", "p6"], ["p7", "p8"]]
    assert token is None


def test_total_counts_every_hit_not_just_the_page(conformance_client):
    client, headers = conformance_client
    response = client.post(
        "/v2/person/search",
        json={
            "query": {"match_all": {}},
            "size": 3,
            "sort": [{"inferred_years_experience": "desc"}],
        },
        headers=headers,
    )
    assert response.json["total"] == 8 and len(response.json["data"]) == 3
