"""PDL's SQL search translated to the person DSL: each operator, precedence, nested fields, and each
refusal (400 naming it)."""

from __future__ import annotations

import pytest

from app.errors import ApiError
from plugins.person import sql
from plugins.person.services import search_query

WHERE = "SELECT * FROM person WHERE "

TRANSLATIONS = [
    ("= on a keyword", "job_company_name = 'acme'", {"term": {"job_company_name": "acme"}}),
    (
        "= on a text field",
        "job_title = 'software engineer'",
        {"match_phrase": {"job_title": "software engineer"}},
    ),
    ("= on a number", "inferred_years_experience = 9", {"term": {"inferred_years_experience": 9}}),
    ("= on a boolean", "experience.is_primary = true", {"term": {"experience.is_primary": True}}),
    (
        "!=",
        "job_company_name != 'acme'",
        {"bool": {"must_not": [{"term": {"job_company_name": "acme"}}]}},
    ),
    (
        "<>",
        "job_company_name <> 'acme'",
        {"bool": {"must_not": [{"term": {"job_company_name": "acme"}}]}},
    ),
    ("<", "inferred_years_experience < 5", {"range": {"inferred_years_experience": {"lt": 5}}}),
    ("<=", "inferred_years_experience <= 5", {"range": {"inferred_years_experience": {"lte": 5}}}),
    (">", "inferred_years_experience > 5", {"range": {"inferred_years_experience": {"gt": 5}}}),
    (">=", "job_start_date >= '2019-01-01'", {"range": {"job_start_date": {"gte": "2019-01-01"}}}),
    (
        "value first",
        "5 < inferred_years_experience",
        {"range": {"inferred_years_experience": {"gt": 5}}},
    ),
    ("negative number", "birth_year > -1", {"range": {"birth_year": {"gt": -1}}}),
    ("LIKE prefix", "job_company_name LIKE 'ac%'", {"prefix": {"job_company_name": "ac"}}),
    ("LIKE wildcard", "location_locality LIKE '%o'", {"wildcard": {"location_locality": "*o"}}),
    ("LIKE inner %", "job_company_name LIKE 'a%e'", {"wildcard": {"job_company_name": "a*e"}}),
    ("LIKE only %", "summary LIKE '%'", {"exists": {"field": "summary"}}),
    (
        "IN",
        "location_country IN ('canada', 'japan')",
        {"terms": {"location_country": ["canada", "japan"]}},
    ),
    (
        "IN on text",
        "job_title IN ('data scientist', 'product manager')",
        {
            "bool": {
                "should": [
                    {"match_phrase": {"job_title": "data scientist"}},
                    {"match_phrase": {"job_title": "product manager"}},
                ]
            }
        },
    ),
    (
        "NOT IN",
        "location_country NOT IN ('canada')",
        {"bool": {"must_not": [{"terms": {"location_country": ["canada"]}}]}},
    ),
    ("IS NULL", "summary IS NULL", {"bool": {"must_not": [{"exists": {"field": "summary"}}]}}),
    ("IS NOT NULL", "summary IS NOT NULL", {"exists": {"field": "summary"}}),
    (
        "NOT",
        "NOT job_company_name = 'acme'",
        {"bool": {"must_not": [{"term": {"job_company_name": "acme"}}]}},
    ),
    (
        "AND flattens",
        "a1 = 'x' AND a2 = 'y' AND a3 = 'z'".replace("a1", "skills")
        .replace("a2", "industry")
        .replace("a3", "sex"),
        {
            "bool": {
                "must": [
                    {"term": {"skills": "x"}},
                    {"term": {"industry": "y"}},
                    {"term": {"sex": "z"}},
                ]
            }
        },
    ),
    (
        "OR flattens",
        "skills = 'go' OR skills = 'rust' OR skills = 'java'",
        {
            "bool": {
                "should": [
                    {"term": {"skills": "go"}},
                    {"term": {"skills": "rust"}},
                    {"term": {"skills": "java"}},
                ]
            }
        },
    ),
    (
        "AND binds tighter than OR",
        "skills = 'go' OR skills = 'rust' AND industry = 'x'",
        {
            "bool": {
                "should": [
                    {"term": {"skills": "go"}},
                    {"bool": {"must": [{"term": {"skills": "rust"}}, {"term": {"industry": "x"}}]}},
                ]
            }
        },
    ),
    (
        "parentheses override",
        "(skills = 'go' OR skills = 'rust') AND industry = 'x'",
        {
            "bool": {
                "must": [
                    {
                        "bool": {
                            "should": [{"term": {"skills": "go"}}, {"term": {"skills": "rust"}}]
                        }
                    },
                    {"term": {"industry": "x"}},
                ]
            }
        },
    ),
    (
        "NOT binds tighter than AND",
        "NOT skills = 'go' AND industry = 'x'",
        {
            "bool": {
                "must": [
                    {"bool": {"must_not": [{"term": {"skills": "go"}}]}},
                    {"term": {"industry": "x"}},
                ]
            }
        },
    ),
    (
        "nested field, three parts",
        "experience.title.name = 'engineer'",
        {"match_phrase": {"experience.title.name": "engineer"}},
    ),
    (
        "nested field, two parts",
        "profiles.network = 'github'",
        {"term": {"profiles.network": "github"}},
    ),
    (
        "quoted nested field",
        '"experience"."company"."name" = \'acme\'',
        {"term": {"experience.company.name": "acme"}},
    ),
    (
        "lowercase keywords",
        "skills in ('go') and not summary is null",
        {"bool": {"must": [{"terms": {"skills": ["go"]}}, {"exists": {"field": "summary"}}]}},
    ),
]


@pytest.mark.parametrize(
    "condition, expected", [pytest.param(c, e, id=name) for name, c, e in TRANSLATIONS]
)
def test_sql_condition_translates_to_dsl(condition, expected):
    assert sql.to_query(WHERE + condition) == expected


def test_no_where_is_match_all():
    assert sql.to_query("select * from person") == {"match_all": {}}
    assert sql.to_query("SELECT * FROM person;") == {"match_all": {}}


REFUSALS = [
    ("columns", "SELECT id FROM person", "only SELECT *"),
    ("aggregate", "SELECT COUNT(*) FROM person", "only SELECT *"),
    ("LIMIT", "SELECT * FROM person WHERE skills = 'go' LIMIT 5", "LIMIT is not supported"),
    ("ORDER BY", "SELECT * FROM person ORDER BY birth_year", "ORDER BY is not supported"),
    ("GROUP BY", "SELECT * FROM person GROUP BY industry", "GROUP BY is not supported"),
    (
        "join",
        "SELECT * FROM person JOIN company ON person.id = company.id",
        "joins are not supported",
    ),
    ("other table", "SELECT * FROM company", "FROM person"),
    ("alias", "SELECT * FROM person p WHERE p.skills = 'go'", "aliases are not supported"),
    ("not a select", "DELETE FROM person", "only SELECT"),
    ("two statements", "SELECT * FROM person; SELECT * FROM person", "exactly one SELECT"),
    ("unparseable", "SELECT * FROM person WHERE", "cannot parse"),
    ("empty", "   ", "expected a SELECT statement"),
    ("two fields", "SELECT * FROM person WHERE skills = industry", "compares two fields"),
    ("double-quoted string", 'SELECT * FROM person WHERE skills = "go"', "compares two fields"),
    ("= NULL", "SELECT * FROM person WHERE summary = NULL", "IS NULL"),
    ("function", "SELECT * FROM person WHERE LOWER(skills) = 'go'", "field on one side"),
    ("ILIKE", "SELECT * FROM person WHERE skills ILIKE 'go'", "unsupported condition"),
    ("BETWEEN", "SELECT * FROM person WHERE birth_year BETWEEN 1 AND 2", "unsupported condition"),
    ("subquery", "SELECT * FROM person WHERE id IN (SELECT id FROM person)", "not a subquery"),
    ("LIKE with *", "SELECT * FROM person WHERE skills LIKE 'g*'", "only % is a wildcard"),
    (
        "IS TRUE",
        "SELECT * FROM person WHERE experience.is_primary IS TRUE",
        "IS NULL and IS NOT NULL",
    ),
]


@pytest.mark.parametrize(
    "statement, problem", [pytest.param(s, p, id=name) for name, s, p in REFUSALS]
)
def test_sql_refusal_is_400_naming_the_problem(statement, problem):
    with pytest.raises(ApiError) as raised:
        sql.to_query(statement)
    assert raised.value.status == 400
    assert raised.value.message.startswith("sql: ") and problem in raised.value.message


@pytest.mark.parametrize(
    "statement, problem",
    [
        ("SELECT * FROM person WHERE florp = 'x'", "unknown field 'florp'"),
        ("SELECT * FROM person WHERE inferred_years_experience = 'many'", "expected an integer"),
        ("SELECT * FROM person WHERE experience = 'x'", "'experience' is an object"),
        (
            "SELECT * FROM person WHERE job_title > 'a'",
            "range works on numbers, dates and keywords",
        ),
    ],
)
def test_sql_fields_and_values_are_checked_by_the_dsl_validator_and_named_as_sql(
    statement, problem
):
    with pytest.raises(ApiError) as raised:
        search_query({"sql": statement})
    assert (
        raised.value.status == 400
        and raised.value.message.startswith("sql: ")
        and problem in raised.value.message
    )
