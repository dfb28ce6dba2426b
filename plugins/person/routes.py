"""Person routes (docs/integrating.md, Person search and enrichment) and PDL's bulk, retrieve and
identify: v1, v2 and sandbox, POST with JSON or GET with query parameters, PDL's output options on
each."""

from __future__ import annotations

from functools import partial

import orjson
from flask import Response
from flask.views import MethodView

from app.http.api import Blueprint
from plugins.person import services, shaping
from plugins.person.profile_fields import CONTACT_FIELDS
from plugins.person.query_budget import BUDGET_DOC
from plugins.person.schemas import (
    LIKELIHOOD_DOC,
    PdlPersonBulkEnrichSchema,
    PdlPersonEnrichV1Schema,
    PdlPersonEnrichV2Schema,
    PdlPersonSearchPageSchema,
    PdlPersonSearchSchema,
    PersonBulkResultSchema,
    PersonEnrichResultSchema,
    PersonIdentifyResultSchema,
    PersonMappingSchema,
    PersonPdlBulkResultSchema,
    PersonRetrieveArgsSchema,
    PersonRetrieveResultSchema,
    PersonSearchPageResultSchema,
    PersonSearchResultSchema,
)

SEARCH_NOTES = (
    "No hits answers 200 with total 0. 503 with Retry-After when no dataset is configured or "
    "loaded. "
    f"`sql` (PDL's SQL) may replace `query`. {BUDGET_DOC}"
)
CONTACT_DETAILS_DOC = (
    f"Contact details ({', '.join(CONTACT_FIELDS)}): every v1 person route, and v2 search, "
    "search/page, "
    "search-enrich, enrich/info and enrich/info/bulk answer them; plain v2 enrich, bulk, retrieve "
    "and "
    "identify leave them out (enrich/info answers them). Each sandbox route does as its v1 or v2 "
    "twin."
)
ENRICH_NOTES = (
    "Minimum input: profile, email, phone_number or the id, or a name (full_name, or first_name + "
    "last_name) with "
    "company_name, school or location; less is 400. Inputs may be lists (GET: repeat the "
    "parameter). No match, a "
    "best match below min_likelihood (default 2), or one lacking `required`, is 404. "
    f"{LIKELIHOOD_DOC} 503 with Retry-After when no vendor is configured."
)
OUTPUT_NOTES = (
    " Output options: data_include, titlecase, pretty. The key may also come as the "
    "api_key parameter."
)

v1 = Blueprint(
    "person_v1",
    __name__,
    read_only=True,
    url_prefix="/v1/person",
    auth="api_key",
    description="Person search and enrichment, v1 (X-API-Key)",
)
v2 = Blueprint(
    "person_v2",
    __name__,
    read_only=True,
    url_prefix="/v2/person",
    auth="api_key",
    description="Person search and enrichment, v2 (X-API-Key)",
)
sandbox_v1 = Blueprint(
    "person_sandbox_v1",
    __name__,
    read_only=True,
    url_prefix="/v1/sandbox/person",
    auth="api_key",
    description="Sandbox person API, v1 shape: a synthetic dataset, never the production upstream",
)
sandbox_v2 = Blueprint(
    "person_sandbox_v2",
    __name__,
    read_only=True,
    url_prefix="/v2/sandbox/person",
    auth="api_key",
    description="Sandbox person API, v2 shape: a synthetic dataset, never the production upstream",
)
BLUEPRINTS = (v1, v2, sandbox_v1, sandbox_v2)
# The one place /openapi.json says which person routes answer contact details (as
# docs/integrating.md says them): the v2 tag, where the split is, read when the document is first
# built.
v2.description = f"{v2.description}. {CONTACT_DETAILS_DOC}"
JSON = "application/json"


def shaped(service, layout: shaping.Layout):
    """`service(params)` answered with PDL's output options applied to the records `layout` finds in
    its answer.

    Without options the answer goes out as the service built it (JSON bytes spliced from the index,
    or a dict the route's schema dumps); with them, the records are reshaped and the body rendered
    here."""

    def answer(params, *args):
        options = shaping.OutputOptions.take(params)
        body = service(params, *args)
        if options.plain:
            return Response(body, mimetype=JSON) if isinstance(body, bytes) else body
        if isinstance(body, bytes):
            body = orjson.loads(body)
        return Response(
            shaping.render(shaping.shape(body, layout, options), options), mimetype=JSON
        )

    return answer


GET_NOTES = (
    " JSON values (query, sort) are sent as JSON strings; a repeated input parameter is a list."
)
SEARCH_ERRORS, ENRICH_ERRORS = (400, 503), (400, 404, 502, 503)


def post_doc(summary: str, notes: str) -> dict:
    """The summary and description of an operation's POST (its body read as JSON), for blp.doc."""
    return {"summary": summary, "description": f"{notes}{OUTPUT_NOTES}"}


def get_doc(summary: str, notes: str) -> dict:
    """The summary and description of the GET twin of a POST (its query string read instead)."""
    return {
        "summary": f"{summary} (query parameters)",
        "description": f"{notes}{OUTPUT_NOTES}{GET_NOTES}",
    }


def dataset(sandbox: bool) -> str:
    return "the sandbox dataset" if sandbox else "the dataset"


def contact_note(contact: bool) -> str:
    """What bulk and identify say on a version whose plain enrich leaves contact details out."""
    if contact:
        return ""
    return " Contact details are left out, as v2's enrich does (use enrich/info for them)."


# Each function below declares one route on the blueprint it is given: the same route serves a
# version and its sandbox (v1 and sandbox_v1, v2 and sandbox_v2), each answered from its own
# dataset. A view's endpoint names its operationId (app.http.api.operation_id: search on person_v1
# is person_search_v1, its GET twin person_search_v1_get).


def post_and_get_route(
    blp: Blueprint,
    rule: str,
    endpoint: str,
    *,
    arguments,
    result,
    errors: tuple[int, ...],
    summary: str,
    notes: str,
    answer,
) -> None:
    """A person operation as PDL serves it: a POST reading `arguments` from the JSON body and its
    GET twin reading them from the query string, both answered by `answer(params)`."""

    @blp.route(rule, endpoint=endpoint)
    class PostAndGet(MethodView):
        @blp.arguments(arguments)
        @blp.response(200, result)
        @blp.errors(*errors)
        @blp.doc(**post_doc(summary, notes))
        def post(self, params):
            return answer(params)

        @blp.arguments(arguments, location="query")
        @blp.response(200, result)
        @blp.errors(*errors)
        @blp.doc(**get_doc(summary, notes))
        def get(self, params):
            return answer(params)


def search_route(blp: Blueprint, *, sandbox: bool) -> None:
    post_and_get_route(
        blp,
        "/search",
        "search",
        arguments=PdlPersonSearchSchema,
        result=PersonSearchResultSchema,
        errors=SEARCH_ERRORS,
        summary=f"Search {dataset(sandbox)} with the DSL or SQL; scroll with scroll_token",
        notes=SEARCH_NOTES,
        answer=shaped(partial(services.people_search, sandbox=sandbox, as_json=True), shaping.hits),
    )


def search_page_route(blp: Blueprint, *, sandbox: bool) -> None:
    post_and_get_route(
        blp,
        "/search/page",
        "search_page",
        arguments=PdlPersonSearchPageSchema,
        result=PersonSearchPageResultSchema,
        errors=SEARCH_ERRORS,
        summary=f"Search {dataset(sandbox)}, page by page",
        notes=SEARCH_NOTES,
        answer=shaped(
            partial(services.people_search_page, sandbox=sandbox, as_json=True), shaping.hits
        ),
    )


def search_enrich_route(blp: Blueprint, *, sandbox: bool) -> None:
    post_and_get_route(
        blp,
        "/search-enrich",
        "search_enrich",
        arguments=PdlPersonSearchSchema,
        result=PersonSearchResultSchema,
        errors=SEARCH_ERRORS,
        summary=f"Search {dataset(sandbox)} and overlay each hit with its enrichment",
        notes=SEARCH_NOTES + " Also 503 when no enrichment vendor is configured.",
        answer=shaped(partial(services.people_search_enrich, sandbox=sandbox), shaping.hits),
    )


def enrich_v1_route(blp: Blueprint, *, sandbox: bool) -> None:
    post_and_get_route(
        blp,
        "/enrich",
        "enrich",
        arguments=PdlPersonEnrichV1Schema,
        result=PersonEnrichResultSchema,
        errors=ENRICH_ERRORS,
        summary=f"Enrich one person from {dataset(sandbox)} (vendor_id identifies them)",
        notes=ENRICH_NOTES,
        answer=shaped(partial(services.people_enrich, sandbox=sandbox), shaping.record),
    )


def enrich_info_route(blp: Blueprint, *, sandbox: bool) -> None:
    post_and_get_route(
        blp,
        "/enrich/info",
        "enrich_info",
        arguments=PdlPersonEnrichV2Schema,
        result=PersonEnrichResultSchema,
        errors=ENRICH_ERRORS,
        summary=(
            f"Enrich one person from {dataset(sandbox)} with additional profile info (emails, "
            "phone numbers, social profiles)"
        ),
        notes=ENRICH_NOTES,
        answer=shaped(
            partial(services.people_enrich, contact=True, sandbox=sandbox), shaping.record
        ),
    )


def enrich_v2_route(blp: Blueprint, *, sandbox: bool) -> None:
    post_and_get_route(
        blp,
        "/enrich",
        "enrich",
        arguments=PdlPersonEnrichV2Schema,
        result=PersonEnrichResultSchema,
        errors=ENRICH_ERRORS,
        summary=(
            f"Enrich one person from {dataset(sandbox)} (servicegraph_id identifies them); "
            "contact details left out"
        ),
        notes=ENRICH_NOTES,
        answer=shaped(
            partial(services.people_enrich, contact=False, sandbox=sandbox), shaping.record
        ),
    )


def pdl_bulk_route(blp: Blueprint, *, contact: bool, sandbox: bool, version: str) -> None:
    """PDL's bulk, as PDL's SDKs call it."""
    answer = shaped(
        partial(services.people_pdl_bulk, contact=contact, sandbox=sandbox, version=version),
        shaping.array_items,
    )
    notes = (
        "HTTP 200 overall; each item has its own status (200, 400, 404, 422) and error when "
        "it failed; top-level min_likelihood, include_if_matched and required apply to items "
        "that do not set their own. Fewer than 1 or more than 100 requests is 422."
        + contact_note(contact)
    )

    @blp.route("/bulk", endpoint="pdl_bulk")
    class PdlBulk(MethodView):
        @blp.arguments(PdlPersonBulkEnrichSchema)
        @blp.response(200, PersonPdlBulkResultSchema(many=True))
        @blp.errors(502, 503)
        @blp.doc(
            **post_doc(
                "Enrich 1-100 people (PDL's bulk): a JSON array in request order, metadata echoed",
                notes,
            )
        )
        def post(self, params):
            return answer(params)


def retrieve_route(blp: Blueprint, *, contact: bool, sandbox: bool) -> None:
    """PDL's GET /person/retrieve/{person_id}."""
    answer = shaped(
        lambda params, person_id: services.person_retrieve(
            person_id, contact=contact, sandbox=sandbox
        ),
        shaping.record,
    )
    left_out = "" if contact else " Contact details are left out, as v2's enrich does."

    @blp.route("/retrieve/<string:person_id>", endpoint="retrieve")
    class PersonRetrieve(MethodView):
        @blp.arguments(PersonRetrieveArgsSchema, location="query")
        @blp.response(200, PersonRetrieveResultSchema)
        @blp.errors(503)
        @blp.doc(
            summary="One profile by its id (PDL's retrieve)",
            description=f"404 when no profile has the id.{left_out}{OUTPUT_NOTES}",
        )
        def get(self, params, person_id):
            return answer(params, person_id)


def identify_route(blp: Blueprint, enrich_schema, *, contact: bool, sandbox: bool) -> None:
    """PDL's identify, its inputs those of the version's enrich (`enrich_schema`)."""
    post_and_get_route(
        blp,
        "/identify",
        "identify",
        arguments=enrich_schema,
        result=PersonIdentifyResultSchema,
        errors=ENRICH_ERRORS,
        summary="Up to 20 profiles the inputs may describe, strongest first (PDL's identify)",
        notes=(
            "The enrich matcher's candidates with match_score (likelihood x 10) and matched_on; "
            "min_likelihood (default 1) and required leave candidates out; none left is 404. "
            "Inputs as for enrich." + contact_note(contact)
        ),
        answer=shaped(
            partial(services.people_identify, contact=contact, sandbox=sandbox), shaping.matches
        ),
    )


for _blp, _sandbox in ((v1, False), (sandbox_v1, True)):
    search_route(_blp, sandbox=_sandbox)
    enrich_v1_route(_blp, sandbox=_sandbox)
    search_enrich_route(_blp, sandbox=_sandbox)
    pdl_bulk_route(_blp, contact=True, sandbox=_sandbox, version="v1")
    retrieve_route(_blp, contact=True, sandbox=_sandbox)
    identify_route(_blp, PdlPersonEnrichV1Schema, contact=True, sandbox=_sandbox)
for _blp, _sandbox in ((v2, False), (sandbox_v2, True)):
    search_route(_blp, sandbox=_sandbox)
    search_page_route(_blp, sandbox=_sandbox)
    enrich_info_route(_blp, sandbox=_sandbox)
    enrich_v2_route(_blp, sandbox=_sandbox)
    pdl_bulk_route(_blp, contact=False, sandbox=_sandbox, version="v2")
    retrieve_route(_blp, contact=False, sandbox=_sandbox)
    identify_route(_blp, PdlPersonEnrichV2Schema, contact=False, sandbox=_sandbox)
search_enrich_route(v2, sandbox=False)


bulk_enrich_info = shaped(
    partial(services.people_bulk_enrich, contact=True, sandbox=False), shaping.items
)


@v2.route("/enrich/info/bulk", endpoint="bulk_enrich_info")
class BulkEnrichInfo(MethodView):
    @v2.arguments(PdlPersonBulkEnrichSchema)
    @v2.response(200, PersonBulkResultSchema)
    @v2.errors(502, 503)
    @v2.doc(
        **post_doc(
            "Enrich 1-100 people with additional profile info; answers in request "
            "order, each with its own status",
            "HTTP 200 overall; each item carries status (200, 400, 404, 422, 429, 502) "
            "and error when it failed. Fewer than 1 or more than 100 requests is 422. "
            + LIKELIHOOD_DOC,
        )
    )
    def post(self, params):
        return bulk_enrich_info(params)


@v2.route("/schema", endpoint="schema")
class PersonMapping(MethodView):
    @v2.response(200, PersonMappingSchema)
    def get(self):
        """The raw mapping of the v2 person index: every searchable field and its type"""
        return services.person_mapping()
