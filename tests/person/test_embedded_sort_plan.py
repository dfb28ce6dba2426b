"""Which sorted queries need no "documents without a value" part
(plugins.person.backends.embedded.query.requires_value)."""

import pytest

from plugins.person.backends.embedded.query import requires_value
from plugins.person.dsl import validate_query

PATH = "birth_year"


@pytest.mark.parametrize(
    "query, expected",
    [
        ({"range": {PATH: {"gte": 1970}}}, True),
        ({"term": {PATH: 1980}}, True),
        ({"exists": {"field": PATH}}, True),
        (
            {
                "bool": {
                    "filter": [
                        {"term": {"location_country": "canada"}},
                        {"range": {PATH: {"lt": 1990}}},
                    ]
                }
            },
            True,
        ),
        ({"bool": {"must": [{"bool": {"filter": [{"terms": {PATH: [1980, 1981]}}]}}]}}, True),
        ({"match_all": {}}, False),
        ({"range": {"inferred_years_experience": {"gte": 3}}}, False),
        (
            {"bool": {"should": [{"range": {PATH: {"gte": 1970}}}, {"term": {"sex": "male"}}]}},
            False,
        ),
        ({"bool": {"must_not": [{"exists": {"field": PATH}}]}}, False),
        ({"exists": {"field": "experience"}}, False),
    ],
)
def test_a_required_clause_on_the_sort_field_implies_a_value(query, expected):
    assert requires_value(validate_query(query), PATH) is expected
