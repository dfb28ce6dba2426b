"""The person family's MCP tools (the /mcp/sourcing server): search people and enrich profiles
through plugins.person.services."""

from __future__ import annotations

from app.http.jsonschema import register_field
from plugins.mcp.tools import Tool
from plugins.person import services
from plugins.person.schemas import (
    LIKELIHOOD_DOC,
    InputValues,
    JsonValue,
    PersonBulkEnrichSchema,
    PersonBulkResultSchema,
    PersonEnrichResultSchema,
    PersonEnrichV2Schema,
    PersonSearchPageResultSchema,
    PersonSearchPageSchema,
    PersonSearchResultSchema,
    PersonSearchSchema,
)

register_field(JsonValue, lambda field: {"type": "object" if field.expected is dict else "array"})
register_field(
    InputValues,
    lambda field: {key: value for key, value in field.metadata.items() if key in ("type", "oneOf")},
)

QUERY_GUIDE = (
    "query is Elasticsearch-style DSL over person fields, e.g. "
    '{"bool": {"must": [{"match": {"job_title": "registered nurse"}}], '
    '"filter": [{"term": {"location_country": "united states"}}]}}. '
    "Clauses: bool (must, filter, should, must_not, minimum_should_match), term, terms, match, "
    "match_phrase, exists, "
    "range (gt, gte, lt, lte), prefix, wildcard, match_all; an unknown clause or field fails with "
    "a message naming it. "
    "sort is optional, e.g. [{\"field\": \"inferred_years_experience\", \"order\": \"desc\"}] or "
    "[{\"inferred_years_experience\": \"desc\"}]. "
    "Instead of query, sql may carry PDL's SQL: SELECT * FROM person WHERE job_title LIKE 'nurse%' "
    "AND "
    "location_country = 'united states' (=, !=, <, <=, >, >=, LIKE with %, IN (...), IS [NOT] "
    "NULL, AND, OR, NOT, "
    "parentheses, single-quoted strings, dotted fields such as experience.title.name; no LIMIT: "
    "use size)."
)

ENRICH_GUIDE = (
    "Identify the person with any of: servicegraph_id (the id from a search hit; other inputs are "
    "then ignored), "
    "email, phone_number (E.164), profile (social profile URLs), or a name (full_name, or "
    "first_name and last_name) "
    "together with company_name, school or location. More agreeing inputs give a higher "
    "likelihood. "
    f"{LIKELIHOOD_DOC} min_likelihood (1-10, default 2) is the weakest match you accept; a weaker "
    "or missing match "
    "fails with 'no match'. include_if_matched adds matched, the inputs that agreed. required is a "
    "boolean expression "
    "over fields the profile must have, e.g. \"emails AND (profiles OR phone_numbers)\" or "
    "\"profiles.network:linkedin\"; "
    "a match lacking them fails with 'no match'."
)


# Search tools answer each profile as the dataset stored it (orjson.Fragment): a batch of 20
# searches of 100 profiles parsed into about a million objects, whose collection paused every
# request thread of the worker for 100+ ms.
def search(tenant_id: str, arguments: dict) -> dict:
    return services.people_search(arguments, spliced=True)


def search_page(tenant_id: str, arguments: dict) -> dict:
    return services.people_search_page(arguments, spliced=True)


def enrich(tenant_id: str, arguments: dict) -> dict:
    return services.people_enrich(arguments, contact=True)


def bulk_enrich(tenant_id: str, arguments: dict) -> dict:
    return services.people_bulk_enrich(arguments, contact=True, version="v2")


TOOLS = (
    Tool(
        name="people_search",
        title="Search people",
        description=(
            "Find professional person profiles (employment history, education, skills, social "
            "profiles, contact details "
            f"when available). {QUERY_GUIDE} size is 1-100 (default 10). The answer has total, "
            "data (the profiles) and, "
            "when more hits remain, scroll_token: call again with the same query and sort plus "
            "that scroll_token (and no "
            "from) for the next batch. from is an offset for shallow paging (from + size <= 10000)."
        ),
        arguments=PersonSearchSchema,
        result=PersonSearchResultSchema,
        run=search,
        plugin="person",
    ),
    Tool(
        name="people_search_page",
        title="Search people, page by page",
        description=(
            f"The same search as people_search, answered as numbered pages. {QUERY_GUIDE} page "
            "starts at 1 (default 1), "
            "size is 1-100 (default 10), page * size <= 10000. The answer has data, total, page, "
            "size and total_pages."
        ),
        arguments=PersonSearchPageSchema,
        result=PersonSearchPageResultSchema,
        run=search_page,
        plugin="person",
    ),
    Tool(
        name="people_enrich",
        title="Enrich a person",
        description=(
            "Match one person from identifying details and answer their full profile, contact "
            "details included, with "
            f"likelihood (1-10, how sure the match is). {ENRICH_GUIDE}"
        ),
        arguments=PersonEnrichV2Schema,
        result=PersonEnrichResultSchema,
        run=enrich,
        plugin="person",
    ),
    Tool(
        name="people_bulk_enrich",
        title="Enrich up to 100 people",
        description=(
            "Enrich 1-100 people in one call. requests is a list of objects, each with the same "
            "fields as people_enrich "
            "(or {\"params\": {...}, \"metadata\": ...}, metadata echoed back). min_likelihood and "
            "include_if_matched at "
            "the top apply to items that do not set their own. The answer's data is in request "
            "order; each item has "
            "status (200, or 404 no match, 400 too little to identify, 422 invalid), likelihood, "
            "data and, on failure, error."
        ),
        arguments=PersonBulkEnrichSchema,
        result=PersonBulkResultSchema,
        run=bulk_enrich,
        plugin="person",
    ),
)
