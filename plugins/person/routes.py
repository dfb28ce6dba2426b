"""Person search and enrichment routes (SPEC 4.2, paths per DESIGN.md): v1, v2 and sandbox, POST with JSON or GET with query parameters."""

from __future__ import annotations

from functools import partial

from flask import Response
from flask.views import MethodView

from app.api import Blueprint
from plugins.person import services
from plugins.person.schemas import (LIKELIHOOD_DOC, PersonBulkEnrichSchema, PersonBulkResultSchema, PersonEnrichResultSchema,
                                    PersonEnrichV1Schema, PersonEnrichV2Schema, PersonMappingSchema, PersonSearchPageResultSchema,
                                    PersonSearchPageSchema, PersonSearchResultSchema, PersonSearchSchema)

SEARCH_NOTES = ("No hits answers 200 with total 0. 503 with Retry-After when no dataset is configured or loaded.")
ENRICH_NOTES = ("Minimum input: profile, email, phone_number or the id, or a name (full_name, or first_name + last_name) with "
                "company_name, school or location; less is 400. No match, or a best match below min_likelihood (default 2), "
                f"is 404. {LIKELIHOOD_DOC} 503 with Retry-After when no vendor is configured.")

v1 = Blueprint("person_v1", __name__, url_prefix="/v1/person", auth="api_key",
               description="Person search and enrichment, v1 (X-API-Key)")
v2 = Blueprint("person_v2", __name__, url_prefix="/v2/person", auth="api_key",
               description="Person search and enrichment, v2 (X-API-Key)")
sandbox_v1 = Blueprint("person_sandbox_v1", __name__, url_prefix="/v1/sandbox/person", auth="api_key",
                       description="Sandbox person API, v1 shape: a synthetic dataset, never the production upstream")
sandbox_v2 = Blueprint("person_sandbox_v2", __name__, url_prefix="/v2/sandbox/person", auth="api_key",
                       description="Sandbox person API, v2 shape: a synthetic dataset, never the production upstream")
BLUEPRINTS = (v1, v2, sandbox_v1, sandbox_v2)


def json_answer(service):
    """A service that answers JSON bytes (search hits spliced in as stored) as the route's response, skipping the dump."""
    def answer(params):
        return Response(service(params), mimetype="application/json")

    return answer


def add_route(blp: Blueprint, path: str, endpoint: str, service, request_schema, response_schema, summary: str,
              notes: str, errors: tuple[int, ...], methods=("GET", "POST")) -> None:
    """One operation answered by `service(params)`: POST reads the JSON body, GET the query string (JSON values as strings).

    `response_schema` documents the answer; a service wrapped in json_answer returns the serialized body itself."""
    members = {}
    if "POST" in methods:
        def post(self, params):
            return service(params)

        post.__doc__ = f"{summary}\n\n{notes}"
        members["post"] = blp.errors(*errors)(blp.response(200, response_schema)(blp.arguments(request_schema)(post)))
    if "GET" in methods:
        def get(self, params):
            return service(params)

        get.__doc__ = f"{summary} (query parameters)\n\n{notes} JSON values (query, sort, profile) are sent as JSON strings."
        members["get"] = blp.errors(*errors)(blp.response(200, response_schema)(blp.arguments(request_schema, location="query")(get)))
    view = type(f"{endpoint.title().replace('_', '')}View", (MethodView,), members)
    blp.route(path, endpoint=endpoint)(view)


def add_schema_route(blp: Blueprint) -> None:
    class PersonMapping(MethodView):
        @blp.response(200, PersonMappingSchema)
        def get(self):
            """The raw mapping of the v2 person index: every searchable field and its type"""
            return services.person_mapping()

    blp.route("/schema", endpoint="schema")(PersonMapping)


def _routes() -> None:
    search_errors, enrich_errors = (400, 503), (400, 404, 502, 503)
    for blp, sandbox in ((v1, False), (sandbox_v1, True)):
        where = "the sandbox dataset" if sandbox else "the dataset"
        add_route(blp, "/search", "search", json_answer(partial(services.people_search_json, sandbox=sandbox)), PersonSearchSchema,
                  PersonSearchResultSchema, f"Search {where} with the DSL; scroll with scroll_token", SEARCH_NOTES, search_errors)
        add_route(blp, "/enrich", "enrich", partial(services.people_enrich, sandbox=sandbox), PersonEnrichV1Schema,
                  PersonEnrichResultSchema, f"Enrich one person from {where} (vendor_id identifies them)", ENRICH_NOTES, enrich_errors)
        add_route(blp, "/search-enrich", "search_enrich", partial(services.people_search_enrich, sandbox=sandbox),
                  PersonSearchSchema, PersonSearchResultSchema, f"Search {where} and overlay each hit with its enrichment",
                  SEARCH_NOTES + " Also 503 when no enrichment vendor is configured.", search_errors)
    for blp, sandbox in ((v2, False), (sandbox_v2, True)):
        where = "the sandbox dataset" if sandbox else "the dataset"
        add_route(blp, "/search", "search", json_answer(partial(services.people_search_json, sandbox=sandbox)), PersonSearchSchema,
                  PersonSearchResultSchema, f"Search {where} with the DSL; scroll with scroll_token", SEARCH_NOTES, search_errors)
        add_route(blp, "/search/page", "search_page", json_answer(partial(services.people_search_page_json, sandbox=sandbox)),
                  PersonSearchPageSchema, PersonSearchPageResultSchema, f"Search {where}, page by page", SEARCH_NOTES, search_errors)
        add_route(blp, "/enrich/info", "enrich_info", partial(services.people_enrich, contact=True, sandbox=sandbox),
                  PersonEnrichV2Schema, PersonEnrichResultSchema,
                  f"Enrich one person from {where} with additional profile info (emails, phone numbers, social profiles)",
                  ENRICH_NOTES, enrich_errors)
    add_route(v2, "/search-enrich", "search_enrich", partial(services.people_search_enrich, sandbox=False), PersonSearchSchema,
              PersonSearchResultSchema, "Search the dataset and overlay each hit with its enrichment",
              SEARCH_NOTES + " Also 503 when no enrichment vendor is configured.", (400, 503))
    add_route(v2, "/enrich", "enrich", partial(services.people_enrich, contact=False, sandbox=False), PersonEnrichV2Schema,
              PersonEnrichResultSchema, "Enrich one person (servicegraph_id identifies them); contact details left out",
              ENRICH_NOTES, enrich_errors)
    add_route(v2, "/enrich/info/bulk", "bulk_enrich_info", partial(services.people_bulk_enrich, contact=True, sandbox=False),
              PersonBulkEnrichSchema, PersonBulkResultSchema,
              "Enrich 1-100 people with additional profile info; answers in request order, each with its own status",
              "HTTP 200 overall; each item carries status (200, 400, 404, 422, 429, 502) and error when it failed. "
              "Fewer than 1 or more than 100 requests is 422. " + LIKELIHOOD_DOC, (502, 503), methods=("POST",))
    add_schema_route(v2)


_routes()
