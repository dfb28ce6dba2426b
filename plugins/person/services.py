"""Person operations shared by the REST routes and the MCP sourcing tools: plain functions over
validated dicts, answering the REST bodies."""

from __future__ import annotations

import math

import marshmallow as ma
import orjson
from flask import current_app

from app.errors import ApiError, flatten_fields, summarize_fields
from plugins.person import dsl, profile_fields, sql, suppression, tokens
from plugins.person.required import compile_required
from plugins.person.backends import MAX_RESULT_WINDOW, SearchDeadline, SearchResult
from plugins.person.datasets import sources
from plugins.person.enrich import Match, NoMatch
from plugins.person.schemas import PersonEnrichV1Schema, PersonEnrichV2Schema

DEFAULT_MIN_LIKELIHOOD = 2
ID_FIELDS = ("vendor_id", "servicegraph_id")
STRONG_INPUTS = ("profile", "email", "phone_number")
CONTEXT_INPUTS = ("company_name", "school", "location")


# ---- search ----------------------------------------------------------------


def people_search(
    params: dict, *, sandbox: bool = False, as_json: bool = False, spliced: bool = False
):
    """Scroll-form search: {status, total, data, scroll_token?}; the token is present only when more
    hits remain. as_json: the answer as JSON bytes, each hit spliced in as the dataset stored it (no
    parse and re-dump); spliced: the answer as a dict whose hits are that stored JSON
    (orjson.Fragment), for callers that serialize it."""
    return _answer(*_scroll_search(params, sandbox), as_json, spliced)


def _scroll_search(params: dict, sandbox: bool):
    size = params.get("size", 10)
    if "from" in params and params.get("scroll_token"):
        raise ApiError(
            400,
            "from and scroll_token cannot be combined: continue a scroll with the token alone.",
            fields={"from": ["Not allowed with scroll_token."]},
        )
    offset = params.get("from", 0)
    if offset + size > MAX_RESULT_WINDOW:
        raise ApiError(
            400,
            f"from + size must not exceed {MAX_RESULT_WINDOW}; page deeper with scroll_token.",
            fields={"from": [f"from + size > {MAX_RESULT_WINDOW}."]},
        )
    return _run_search(params, size=size, offset=offset, sandbox=sandbox, scroll=True)


def people_search_page(
    params: dict, *, sandbox: bool = False, as_json: bool = False, spliced: bool = False
):
    """Page-form search: {data, total, page, size, total_pages = ceil(total / size)}; as_json and
    spliced as above."""
    return _answer(*_page_search(params, sandbox), as_json, spliced)


def _page_search(params: dict, sandbox: bool):
    size, page = params.get("size", 10), params.get("page", 1)
    if page * size > MAX_RESULT_WINDOW:
        raise ApiError(
            400,
            f"page * size must not exceed {MAX_RESULT_WINDOW}; use /v2/person/search with "
            "scroll_token to go deeper.",
            fields={"page": [f"page * size > {MAX_RESULT_WINDOW}."]},
        )
    _, result = _run_search(
        {k: v for k, v in params.items() if k != "page"},
        size=size,
        offset=(page - 1) * size,
        sandbox=sandbox,
        scroll=False,
    )
    return {
        "total": result.total,
        "page": page,
        "size": size,
        "total_pages": math.ceil(result.total / size),
    }, result


def _answer(head: dict, result, as_json: bool, spliced: bool):
    """{...head, "data": [hits]}; as JSON bytes with the hits' stored JSON joined in place when
    as_json; with each hit as its stored JSON (orjson.Fragment) when spliced, so no hit is parsed
    into objects only to be serialized again."""
    if as_json:
        return orjson.dumps(head)[:-1] + b',"data":[' + b",".join(result.raw_hits()) + b"]}"
    if spliced:
        return {**head, "data": [orjson.Fragment(hit) for hit in result.raw_hits()]}
    return {**head, "data": result.hits}


def people_search_enrich(params: dict, *, sandbox: bool = False) -> dict:
    """Search, then overlay each hit with its enriched profile (enrichment values win, search-only
    keys stay), in hit order."""
    side = sources(sandbox)
    side.backend()
    vendor = side.vendor()
    found = people_search(params, sandbox=sandbox)
    matches = (
        vendor.by_ids([hit["id"] for hit in found["data"] if hit.get("id")])
        if found["data"]
        else {}
    )
    found["data"] = [
        overlay(hit, matches[hit["id"]].record) if hit.get("id") in matches else hit
        for hit in found["data"]
    ]
    return found


def overlay(hit: dict, enriched: dict) -> dict:
    """The hit with every present enrichment value written over it."""
    merged = dict(hit)
    merged.update(
        {key: value for key, value in enriched.items() if value not in (None, [], "", {})}
    )
    return merged


def _run_search(params: dict, *, size: int, offset: int, sandbox: bool, scroll: bool):
    """({status, total, scroll_token?}, the backend's SearchResult). The query budget is checked
    first (search_query); the search then runs under the time budget, PERSON_SEARCH_TIMEOUT seconds
    from here (0: none). `scroll`: the answer hands out a scroll_token while hits remain (the page
    form's does not)."""
    timeout = float(current_app.config["PERSON_SEARCH_TIMEOUT"])
    deadline = SearchDeadline(timeout) if timeout > 0 else None
    backend = sources(sandbox).backend()
    query = search_query(params)
    sort = dsl.validate_sort(params.get("sort"))
    fingerprint = tokens.query_fingerprint(
        query, sort, f"{'sandbox' if sandbox else 'production'}:{backend.name}"
    )
    cursor, generation = (
        tokens.decode(params["scroll_token"], fingerprint, size)
        if params.get("scroll_token")
        else (None, None)
    )
    query, anyone_suppressed = suppression.excluding(query)
    result = backend.search(
        query, size=size, offset=offset, sort=sort, cursor=cursor, deadline=deadline, scroll=scroll
    )
    tokens.check_generation(generation, result.generation)
    # the query matched emails as listed (lower case): a record spelling one otherwise goes here
    if anyone_suppressed:
        kept = suppression.unsuppressed(result.hits)
        if len(kept) < len(result.hits):
            result = SearchResult(
                result.total - (len(result.hits) - len(kept)),
                hits=kept,
                cursor=result.cursor,
                generation=result.generation,
            )
    head = {"status": 200, "total": result.total}
    if scroll and result.cursor:
        head["scroll_token"] = tokens.encode(result.cursor, fingerprint, result.generation)
    return head, result


def search_query(params: dict) -> dict:
    """The validated DSL query of a search, within the query budget: its `query`, or its `sql`
    translated (a refusal names the SQL's problem)."""
    if params.get("sql") is None:
        return dsl.validate_query(params["query"])
    try:
        return dsl.validate_query(sql.to_query(params["sql"]))
    except dsl.DslError as error:
        raise sql.SqlError(error.detail) from None


def person_mapping(*, sandbox: bool = False) -> dict:
    """The raw mapping of the person index (GET /v2/person/schema)."""
    side = sources(sandbox)
    try:
        return side.backend().mapping()
    except ApiError:
        return {"mappings": profile_fields.elasticsearch_mapping()}


# ---- enrichment ------------------------------------------------------------


def people_enrich(params: dict, *, contact: bool = True, sandbox: bool = False) -> dict:
    """Enrich one person: {status, likelihood, data, dataset_version, matched?}; 404 below
    min_likelihood (default 2).

    `contact=False` (v2 "enrich") leaves out emails, phone numbers and social profiles; the "info"
    variants keep them.
    """
    require_identifying_inputs(params)
    # a malformed expression is 400 before the vendor is asked
    compile_required(params.get("required"))
    vendor = sources(sandbox).vendor()
    match = vendor.enrich(vendor_params(params))
    return enrich_answer(match, params, contact=contact)


def people_bulk_enrich(
    params: dict, *, contact: bool = True, sandbox: bool = False, version: str = "v2"
) -> dict:
    """Enrich 1-100 people: {data: [...]} in request order, each {status, likelihood, data, error?,
    metadata?}; HTTP 200 overall."""
    vendor = sources(sandbox).vendor()
    item_schema = PersonEnrichV2Schema() if version == "v2" else PersonEnrichV1Schema()
    shared = {
        k: params[k] for k in ("min_likelihood", "include_if_matched", "required") if k in params
    }
    answers: list[dict | None] = []
    pending: list[tuple[int, dict]] = []
    for position, item in enumerate(params["requests"]):
        raw = item.get("params") if isinstance(item.get("params"), dict) else item
        try:
            values = {
                **shared,
                **item_schema.load(
                    {k: v for k, v in raw.items() if k != "metadata"} if raw is item else raw
                ),
            }
            require_identifying_inputs(values)
            compile_required(values.get("required"))
        except ma.ValidationError as error:
            messages = (
                error.messages if isinstance(error.messages, dict) else {"_schema": error.messages}
            )
            answers.append(
                _item_error(422, summarize_fields(messages), item, fields=flatten_fields(messages))
            )
            continue
        except ApiError as error:
            answers.append(_item_error(error.status, error.message, item))
            continue
        answers.append(None)
        pending.append((position, values))
    results = (
        vendor.enrich_many([vendor_params(values) for _, values in pending]) if pending else []
    )
    for (position, values), result in zip(pending, results):
        item = params["requests"][position]
        try:
            if isinstance(result, ApiError):
                raise result
            answer = enrich_answer(result, values, contact=contact)
        except ApiError as error:
            answers[position] = _item_error(error.status, error.message, item)
            continue
        if isinstance(item.get("metadata"), (dict, list, str)):
            answer["metadata"] = item["metadata"]
        answers[position] = answer
    return {"data": answers}


def _item_error(status: int, message: str, item: dict, fields: dict | None = None) -> dict:
    error = {"type": _error_type(status), "message": message}
    if fields:
        error["fields"] = fields
    answer = {"status": status, "likelihood": None, "data": None, "error": error}
    if isinstance(item, dict) and "metadata" in item:
        answer["metadata"] = item["metadata"]
    return answer


def _error_type(status: int) -> str:
    from app.errors import ERROR_TYPES

    return ERROR_TYPES.get(status, "api_error")


def require_identifying_inputs(params: dict) -> None:
    """400 unless the inputs can identify someone: an id, profile, email or phone, or a name with
    company, school or location."""
    if any(params.get(key) for key in ID_FIELDS + STRONG_INPUTS):
        return
    has_name = bool(
        params.get("full_name") or (params.get("first_name") and params.get("last_name"))
    )
    if has_name and any(params.get(key) for key in CONTEXT_INPUTS):
        return
    given = [
        key
        for key, value in params.items()
        if value and key not in ("min_likelihood", "include_if_matched", "required")
    ]
    if has_name:
        missing = "a name needs one of company_name, school or location with it"
    elif params.get("first_name") or params.get("last_name"):
        missing = (
            "give both first_name and last_name (or full_name), plus one of company_name, "
            "school or location"
        )
    else:
        missing = (
            "send one of profile, email, phone_number or the person's id, or a name (full_name, or "
            "first_name and "
            "last_name) with one of company_name, school or location"
        )
    raise ApiError(
        400, f"Not enough to identify a person: {missing}. Got: {', '.join(given) or 'nothing'}."
    )


def vendor_params(params: dict) -> dict:
    """The validated inputs as vendors take them: the id under `id`, the seed's names for the
    rest."""
    values = {k: v for k, v in params.items() if k not in ID_FIELDS}
    person_id = next((params[k] for k in ID_FIELDS if params.get(k)), None)
    if person_id:
        values["id"] = person_id
    return values


def enrich_answer(match: Match, params: dict, *, contact: bool) -> dict:
    minimum = params.get("min_likelihood") or DEFAULT_MIN_LIKELIHOOD
    if suppression.is_suppressed(match.record):
        raise NoMatch()
    if match.likelihood < minimum:
        raise NoMatch(
            f"The best match has likelihood {match.likelihood}, below min_likelihood {minimum}."
        )
    record = match.record if contact else without_contact_details(match.record)
    requirement = compile_required(params.get("required"))
    if requirement is not None and not requirement(record):
        raise NoMatch(f"The match lacks what `required` asks for ({params['required']}).")
    answer = {
        "status": 200,
        "likelihood": match.likelihood,
        "data": record,
        "dataset_version": match.dataset_version or match.record.get("dataset_version"),
    }
    if params.get("include_if_matched"):
        id_name = next((k for k in ID_FIELDS if k in params), "id")
        answer["matched"] = [id_name if name == "id" else name for name in match.matched]
    return answer


def people_pdl_bulk(
    params: dict, *, contact: bool = True, sandbox: bool = False, version: str = "v2"
) -> list[dict]:
    """PDL's /person/bulk: the bulk enrichment's items as a bare JSON array in request order,
    metadata echoed."""
    return people_bulk_enrich(params, contact=contact, sandbox=sandbox, version=version)["data"]


def person_retrieve(person_id: str, *, contact: bool = True, sandbox: bool = False) -> dict:
    """PDL's /person/retrieve/{id}: {status, data, billed} for one dataset record; 404 when no
    record has the id."""
    found = sources(sandbox).backend().get_by_ids([person_id]).get(person_id)
    if found is None or suppression.is_suppressed(found):
        raise NoMatch(f"No person has id {person_id!r}.")
    return {
        "status": 200,
        "data": found if contact else without_contact_details(found),
        "billed": False,
    }


IDENTIFY_MATCHES = 20


def people_identify(params: dict, *, contact: bool = True, sandbox: bool = False) -> dict:
    """PDL's /person/identify: up to 20 candidates from the enrich matcher, strongest first, each
    {data, match_score, matched_on}.

    match_score is the candidate's likelihood x 10; min_likelihood (default 1 here) and `required`
    leave candidates out. No candidate left is 404."""
    require_identifying_inputs(params)
    requirement = compile_required(params.get("required"))
    minimum = params.get("min_likelihood") or 1
    candidates = sources(sandbox).vendor().identify(vendor_params(params), limit=IDENTIFY_MATCHES)
    allowed = {
        id(record) for record in suppression.unsuppressed([match.record for match in candidates])
    }
    found = []
    for match in (match for match in candidates if id(match.record) in allowed):
        record = match.record if contact else without_contact_details(match.record)
        if match.likelihood >= minimum and (requirement is None or requirement(record)):
            found.append(
                {
                    "data": record,
                    "match_score": match.likelihood * 10,
                    "matched_on": list(match.matched),
                }
            )
    if not found:
        raise NoMatch()
    return {"status": 200, "matches": found}


def without_contact_details(record: dict) -> dict:
    return {key: value for key, value in record.items() if key not in profile_fields.CONTACT_FIELDS}
