"""Range on keyword fields (an automaton over the term dictionary, or the terms listed when a bound
is too long to compile): Elasticsearch's lexical semantics, where on a list field one value must fit
every bound."""

from __future__ import annotations

import json
import random

import pytest


def values(record: dict, path: str) -> list[str]:
    value = record.get(path)
    return [str(v) for v in (value if isinstance(value, list) else [value]) if v is not None]


def fits(value: str, bounds: dict) -> bool:
    tests = {"gte": value.__ge__, "gt": value.__gt__, "lte": value.__le__, "lt": value.__lt__}
    return all(tests[name](bound) for name, bound in bounds.items())


def cases(records: list[dict]) -> list[tuple[str, dict]]:
    chosen = random.Random(7)
    found = []
    for path in ("id", "full_name", "skills", "job_company_name", "personal_emails"):
        known = sorted({v for record in records for v in values(record, path)})
        for _ in range(4):
            low, high = sorted(chosen.sample(known, 2))
            found += [
                (path, {"gte": low}),
                (path, {"gt": low}),
                (path, {"lte": high}),
                (path, {"lt": high}),
                (path, {"gte": low, "lte": high}),
                (path, {"gt": low, "lt": high}),
                (path, {"gte": low, "lte": low}),
                (path, {"gt": low[:2], "lt": low}),
                (path, {"gte": low[:3], "lt": high[:2] + "z" * 40}),
            ]
    return found + [
        ("full_name", {"gte": "m", "lt": "m"}),
        ("full_name", {"lt": ""}),
        ("skills", {"gte": "python", "lte": "go"}),
    ]


def test_keyword_ranges_match_a_lexical_evaluation_of_every_record(person_client, sample_file):
    with open(sample_file(1234, 11)) as lines:
        records = [json.loads(line) for line in lines]
    client, headers = person_client("scroll")
    for path, bounds in cases(records):
        expected = sum(
            1 for record in records if any(fits(v, bounds) for v in values(record, path))
        )
        response = client.post(
            "/v2/person/search",
            json={"query": {"range": {path: bounds}}, "size": 1},
            headers=headers,
        )
        assert response.status_code == 200 and response.json["total"] == expected, (path, bounds)


@pytest.mark.parametrize(
    "bounds, ids",
    [
        ({"gte": "b", "lte": "h"}, ["p2", "p5"]),
        ({"gt": "globex", "lt": "hooli"}, []),
        ({"gt": "globex", "lte": "hooli"}, ["p7", "p8"]),
        # too long for an automaton: the terms are listed
        ({"gte": "a" * 60}, ["p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8"]),
        ({"lt": "acme" + "\x01" * 40}, ["p1", "p3", "p6"]),
    ],
)
def test_keyword_range_bounds_on_the_reference_profiles(person_client, bounds, ids):
    client, headers = person_client()
    response = client.post(
        "/v2/person/search",
        json={"query": {"range": {"job_company_name": bounds}}, "sort": ["id"]},
        headers=headers,
    )
    assert [p["id"] for p in response.json["data"]] == ids
