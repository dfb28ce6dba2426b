"""Person routes (docs/integrating.md, Person search and enrichment) and PDL's bulk, retrieve and identify: v1, v2
and sandbox, POST with JSON or GET with query parameters, PDL's output options on each."""

from __future__ import annotations

from functools import partial

import orjson
from flask import Response
from flask.views import MethodView

from app.http.api import Blueprint
from plugins.person import services, shaping
from plugins.person.profile_fields import CONTACT_FIELDS
from plugins.person.query_budget import BUDGET_DOC
from plugins.person.schemas import (LIKELIHOOD_DOC, PdlPersonBulkEnrichSchema, PdlPersonEnrichV1Schema, PdlPersonEnrichV2Schema,
                                    PdlPersonSearchPageSchema, PdlPersonSearchSchema, PersonBulkResultSchema,
                                    PersonEnrichResultSchema, PersonIdentifyResultSchema, PersonMappingSchema,
                                    PersonPdlBulkResultSchema, PersonRetrieveArgsSchema, PersonRetrieveResultSchema,
                                    PersonSearchPageResultSchema, PersonSearchResultSchema)

SEARCH_NOTES = ("No hits answers 200 with total 0. 503 with Retry-After when no dataset is configured or loaded. "
                f"`sql` (PDL's SQL) may replace `query`. {BUDGET_DOC}")
CONTACT_DETAILS_DOC = (f"Contact details ({', '.join(CONTACT_FIELDS)}): every v1 person route, and v2 search, search/page, "
                       "search-enrich, enrich/info and enrich/info/bulk answer them; plain v2 enrich, bulk, retrieve and "
                       "identify leave them out (enrich/info answers them). Each sandbox route does as its v1 or v2 twin.")
ENRICH_NOTES = ("Minimum input: profile, email, phone_number or the id, or a name (full_name, or first_name + last_name) with "
                "company_name, school or location; less is 400. Inputs may be lists (GET: repeat the parameter). No match, a "
                "best match below min_likelihood (default 2), or one lacking `required`, is 404. "
                f"{LIKELIHOOD_DOC} 503 with Retry-After when no vendor is configured.")
OUTPUT_NOTES = " Output options: data_include, titlecase, pretty. The key may also come as the api_key parameter."

v1 = Blueprint("person_v1", __name__, read_only=True, url_prefix="/v1/person", auth="api_key",
               description="Person search and enrichment, v1 (X-API-Key)")
v2 = Blueprint("person_v2", __name__, read_only=True, url_prefix="/v2/person", auth="api_key",
               description="Person search and enrichment, v2 (X-API-Key)")
sandbox_v1 = Blueprint("person_sandbox_v1", __name__, read_only=True, url_prefix="/v1/sandbox/person", auth="api_key",
                       description="Sandbox person API, v1 shape: a synthetic dataset, never the production upstream")
sandbox_v2 = Blueprint("person_sandbox_v2", __name__, read_only=True, url_prefix="/v2/sandbox/person", auth="api_key",
                       description="Sandbox person API, v2 shape: a synthetic dataset, never the production upstream")
BLUEPRINTS = (v1, v2, sandbox_v1, sandbox_v2)
# The one place /openapi.json says which person routes answer contact details (as docs/integrating.md says them):
# the v2 tag, where the split is, read when the document is first built.
v2.description = f"{v2.description}. {CONTACT_DETAILS_DOC}"
JSON = "application/json"


def shaped(service, layout: shaping.Layout):
    """`service(params)` answered with PDL's output options applied to the records `layout` finds in its answer.

    Without options the answer goes out as the service built it (JSON bytes spliced from the index, or a dict the
    route's schema dumps); with them, the records are reshaped and the body rendered here."""
    def answer(params, *args):
        options = shaping.OutputOptions.take(params)
        body = service(params, *args)
        if options.plain:
            return Response(body, mimetype=JSON) if isinstance(body, bytes) else body
        if isinstance(body, bytes):
            body = orjson.loads(body)
        return Response(shaping.render(shaping.shape(body, layout, options), options), mimetype=JSON)

    return answer


def add_route(blp: Blueprint, path: str, endpoint: str, service, request_schema, response_schema, summary: str,
              notes: str, errors: tuple[int, ...], methods=("GET", "POST")) -> None:
    """One operation answered by `service(params)`: POST reads the JSON body, GET the query string (JSON values as strings).

    `response_schema` documents the answer; a service answering a Response (shaped output, spliced hits) skips the dump."""
    members = {}
    if "POST" in methods:
        def post(self, params):
            return service(params)

        post.__doc__ = f"{summary}\n\n{notes}{OUTPUT_NOTES}"
        members["post"] = blp.errors(*errors)(blp.response(200, response_schema)(blp.arguments(request_schema)(post)))
    if "GET" in methods:
        def get(self, params):
            return service(params)

        get.__doc__ = (f"{summary} (query parameters)\n\n{notes}{OUTPUT_NOTES} JSON values (query, sort) are sent as JSON "
                       "strings; a repeated input parameter is a list.")
        members["get"] = blp.errors(*errors)(blp.response(200, response_schema)(blp.arguments(request_schema, location="query")(get)))
    view = type(f"{endpoint.title().replace('_', '')}View", (MethodView,), members)
    blp.route(path, endpoint=endpoint)(view)


def add_retrieve_route(blp: Blueprint, *, contact: bool, sandbox: bool) -> None:
    """PDL's GET /person/retrieve/{person_id}."""
    answer = shaped(lambda params, person_id: services.person_retrieve(person_id, contact=contact, sandbox=sandbox), shaping.record)

    class PersonRetrieve(MethodView):
        @blp.arguments(PersonRetrieveArgsSchema, location="query")
        @blp.response(200, PersonRetrieveResultSchema)
        @blp.errors(503)
        def get(self, params, person_id):
            return answer(params, person_id)

    PersonRetrieve.get.__doc__ = ("One profile by its id (PDL's retrieve)\n\n404 when no profile has the id."
                                  + ("" if contact else " Contact details are left out, as v2's enrich does.") + OUTPUT_NOTES)
    blp.route("/retrieve/<string:person_id>", endpoint="retrieve")(PersonRetrieve)


def add_pdl_routes(blp: Blueprint, enrich_schema, *, contact: bool, sandbox: bool, version: str) -> None:
    """PDL's bulk, retrieve and identify, as PDL's SDKs call them, under one prefix."""
    contact_note = "" if contact else " Contact details are left out, as v2's enrich does (use enrich/info for them)."
    add_route(blp, "/bulk", "pdl_bulk", shaped(partial(services.people_pdl_bulk, contact=contact, sandbox=sandbox, version=version),
                                               shaping.array_items),
              PdlPersonBulkEnrichSchema, PersonPdlBulkResultSchema(many=True),
              "Enrich 1-100 people (PDL's bulk): a JSON array in request order, metadata echoed",
              "HTTP 200 overall; each item has its own status (200, 400, 404, 422) and error when it failed; top-level "
              "min_likelihood, include_if_matched and required apply to items that do not set their own. Fewer than 1 or "
              "more than 100 requests is 422." + contact_note, (502, 503), methods=("POST",))
    add_retrieve_route(blp, contact=contact, sandbox=sandbox)
    add_route(blp, "/identify", "identify", shaped(partial(services.people_identify, contact=contact, sandbox=sandbox), shaping.matches),
              enrich_schema, PersonIdentifyResultSchema,
              "Up to 20 profiles the inputs may describe, strongest first (PDL's identify)",
              "The enrich matcher's candidates with match_score (likelihood x 10) and matched_on; min_likelihood (default 1) "
              "and required leave candidates out; none left is 404. Inputs as for enrich." + contact_note,
              (400, 404, 502, 503))


def add_schema_route(blp: Blueprint) -> None:
    class PersonMapping(MethodView):
        @blp.response(200, PersonMappingSchema)
        def get(self):
            """The raw mapping of the v2 person index: every searchable field and its type"""
            return services.person_mapping()

    blp.route("/schema", endpoint="schema")(PersonMapping)


def _routes() -> None:
    search_errors, enrich_errors = (400, 503), (400, 404, 502, 503)
    hits, record, items = shaping.hits, shaping.record, shaping.items
    for blp, sandbox in ((v1, False), (sandbox_v1, True)):
        where = "the sandbox dataset" if sandbox else "the dataset"
        add_route(blp, "/search", "search", shaped(partial(services.people_search, sandbox=sandbox, as_json=True), hits), PdlPersonSearchSchema,
                  PersonSearchResultSchema, f"Search {where} with the DSL or SQL; scroll with scroll_token", SEARCH_NOTES, search_errors)
        add_route(blp, "/enrich", "enrich", shaped(partial(services.people_enrich, sandbox=sandbox), record), PdlPersonEnrichV1Schema,
                  PersonEnrichResultSchema, f"Enrich one person from {where} (vendor_id identifies them)", ENRICH_NOTES, enrich_errors)
        add_route(blp, "/search-enrich", "search_enrich", shaped(partial(services.people_search_enrich, sandbox=sandbox), hits),
                  PdlPersonSearchSchema, PersonSearchResultSchema, f"Search {where} and overlay each hit with its enrichment",
                  SEARCH_NOTES + " Also 503 when no enrichment vendor is configured.", search_errors)
        add_pdl_routes(blp, PdlPersonEnrichV1Schema, contact=True, sandbox=sandbox, version="v1")
    for blp, sandbox in ((v2, False), (sandbox_v2, True)):
        where = "the sandbox dataset" if sandbox else "the dataset"
        add_route(blp, "/search", "search", shaped(partial(services.people_search, sandbox=sandbox, as_json=True), hits), PdlPersonSearchSchema,
                  PersonSearchResultSchema, f"Search {where} with the DSL or SQL; scroll with scroll_token", SEARCH_NOTES, search_errors)
        add_route(blp, "/search/page", "search_page", shaped(partial(services.people_search_page, sandbox=sandbox, as_json=True), hits),
                  PdlPersonSearchPageSchema, PersonSearchPageResultSchema, f"Search {where}, page by page", SEARCH_NOTES, search_errors)
        add_route(blp, "/enrich/info", "enrich_info", shaped(partial(services.people_enrich, contact=True, sandbox=sandbox), record),
                  PdlPersonEnrichV2Schema, PersonEnrichResultSchema,
                  f"Enrich one person from {where} with additional profile info (emails, phone numbers, social profiles)",
                  ENRICH_NOTES, enrich_errors)
        add_route(blp, "/enrich", "enrich", shaped(partial(services.people_enrich, contact=False, sandbox=sandbox), record),
                  PdlPersonEnrichV2Schema, PersonEnrichResultSchema,
                  f"Enrich one person from {where} (servicegraph_id identifies them); contact details left out",
                  ENRICH_NOTES, enrich_errors)
        add_pdl_routes(blp, PdlPersonEnrichV2Schema, contact=False, sandbox=sandbox, version="v2")
    add_route(v2, "/search-enrich", "search_enrich", shaped(partial(services.people_search_enrich, sandbox=False), hits),
              PdlPersonSearchSchema, PersonSearchResultSchema, "Search the dataset and overlay each hit with its enrichment",
              SEARCH_NOTES + " Also 503 when no enrichment vendor is configured.", (400, 503))
    add_route(v2, "/enrich/info/bulk", "bulk_enrich_info", shaped(partial(services.people_bulk_enrich, contact=True, sandbox=False), items),
              PdlPersonBulkEnrichSchema, PersonBulkResultSchema,
              "Enrich 1-100 people with additional profile info; answers in request order, each with its own status",
              "HTTP 200 overall; each item carries status (200, 400, 404, 422, 429, 502) and error when it failed. "
              "Fewer than 1 or more than 100 requests is 422. " + LIKELIHOOD_DOC, (502, 503), methods=("POST",))
    add_schema_route(v2)


_routes()
