"""Person request and response bodies (SPEC 2.9-2.11): shared by the REST routes and the MCP sourcing tools."""

from __future__ import annotations

import marshmallow as ma
import orjson

from app.errors import ApiError
from app.fields import BoundedInteger, StrictBoolean, StrictSchema
from plugins.person.backends import MAX_RESULT_WINDOW

ENRICH_ALIASES = {"name": "full_name", "phone": "phone_number", "company": "company_name"}  # PDL's names -> the seed's
LIKELIHOOD_DOC = ("likelihood is 1-10: the sum of the weights of the inputs that agree with the profile, capped at 10 — "
                  "id 10, email 6, profile URL 6, phone number 5, name 3, current company 2 (past company 1), school 1, "
                  "location 1, job title 1; a given name that disagrees subtracts 3.")


class JsonValue(ma.fields.Field):
    """A JSON value in a body, or the same value as a JSON string in a query parameter (GET)."""

    default_error_messages = {"invalid": "Not valid JSON.", "type": "Must be a JSON {type}."}

    def __init__(self, expected: type, **kwargs):
        super().__init__(**kwargs)
        self.expected = expected

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, str):
            try:
                value = orjson.loads(value)
            except orjson.JSONDecodeError:
                if self.expected is list and value.strip():
                    value = [part.strip() for part in value.split(",") if part.strip()]  # sort=years:desc,id
                else:
                    raise self.make_error("invalid") from None
        if not isinstance(value, self.expected):
            raise self.make_error("type", type="object" if self.expected is dict else "array")
        return value


def _sort_field():
    return JsonValue(list, metadata={"description": "[{\"field\": \"asc\"|\"desc\"}, ...]: up to 10 keys in priority order (\"_score\" "
                                                    "for relevance); ties on one key are broken by the next, then by index order (equal scores "
                                                    "under a relevance-only sort: the engine's document order, which is index order for a "
                                                    "dataset loaded in one go and the same from page to page). "
                                                    "Default relevance (score descending). Lists sort by their smallest value "
                                                    "ascending and largest descending; missing values sort last. Text fields and "
                                                    "fields inside object arrays cannot be sorted on.",
                                     "example": [{"inferred_years_experience": "desc"}, {"last_name": "asc"}]})


def _query_field():
    return JsonValue(dict, required=True, metadata={
        "description": "Elasticsearch-style DSL: bool (must, filter, should, must_not, minimum_should_match), term, terms, "
                       "match, match_phrase, exists, range, prefix, wildcard, match_all. On GET, the query as a JSON string.",
        "example": {"bool": {"filter": [{"term": {"location_country": "united states"}}],
                             "must": [{"match": {"job_title": "software engineer"}}]}}})


class _RejectsSql:
    @ma.pre_load
    def refuse_unsupported(self, data, **kwargs):
        if isinstance(data, dict):
            if "sql" in data:
                raise ApiError(400, "sql: SQL queries are not supported; send the query as Elasticsearch DSL in `query`.")
            if "aggs" in data or "aggregations" in data:
                raise ApiError(400, "aggs: aggregations are not supported.")
        return data


class PersonSearchSchema(_RejectsSql, StrictSchema):
    """Scroll form (SPEC 2.9): size 1-100 (default 10), from >= 0 (from + size <= 10000), or scroll_token to continue."""

    query = _query_field()
    size = BoundedInteger(1, 100, load_default=10)
    from_ = BoundedInteger(0, MAX_RESULT_WINDOW, data_key="from", attribute="from",
                           metadata={"description": "Offset (default 0); not with scroll_token; from + size <= 10000"})
    scroll_token = ma.fields.String(validate=ma.validate.Length(min=1),
                                    metadata={"description": "From the previous page; resend the same query and sort"})
    sort = _sort_field()


class PersonSearchPageSchema(_RejectsSql, StrictSchema):
    """Page form (SPEC 2.9): page is 1-based; page * size <= 10000."""

    query = _query_field()
    size = BoundedInteger(1, 100, load_default=10)
    page = BoundedInteger(1, MAX_RESULT_WINDOW, load_default=1, metadata={"description": "1-based (default 1); page * size <= 10000"})
    sort = _sort_field()


def _url_strings(urls: list) -> None:
    if not all(isinstance(url, str) for url in urls):
        raise ma.ValidationError("Must be a list of URL strings.")


class _EnrichFields(StrictSchema):
    first_name = ma.fields.String()
    last_name = ma.fields.String()
    middle_name = ma.fields.String()
    full_name = ma.fields.String(metadata={"description": "Alias: name"})
    email = ma.fields.String()
    phone_number = ma.fields.String(metadata={"description": "E.164 recommended (other formats are read as US numbers). Alias: phone"})
    job_title = ma.fields.String()
    company_name = ma.fields.String(metadata={"description": "Alias: company"})
    location = ma.fields.String(metadata={"description": "City, region, country, e.g. \"san francisco, california\""})
    school = ma.fields.String()
    profile = JsonValue(list, validate=_url_strings,
                        metadata={"description": "Social profile URLs (a single string is accepted)",
                                  "oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]})
    min_likelihood = BoundedInteger(1, 10, metadata={"description": "1-10, default 2: a weaker best match answers 404"})
    include_if_matched = StrictBoolean(metadata={"description": "Add `matched`: the inputs that agreed with the profile"})

    @ma.pre_load
    def accept_pdl_names(self, data, **kwargs):
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for alias, name in {**ENRICH_ALIASES, **self.ID_ALIASES}.items():
            if alias in data:
                value = data.pop(alias)
                data.setdefault(name, value)
        if isinstance(data.get("profile"), str) and not data["profile"].lstrip().startswith("["):
            data["profile"] = [data["profile"]]
        return data

    @ma.post_load
    def drop_blanks(self, data, **kwargs):
        return {k: (v.strip() if isinstance(v, str) else v) for k, v in data.items()
                if not (v is None or (isinstance(v, (str, list)) and not (v.strip() if isinstance(v, str) else v)))}

    ID_ALIASES: dict = {}


class PersonEnrichV1Schema(_EnrichFields):
    """SPEC 2.10 with vendor_id (alias pdl_id)."""

    ID_ALIASES = {"pdl_id": "vendor_id"}
    vendor_id = ma.fields.String(metadata={"description": "The person's id in the dataset; other inputs are then ignored"})


class PersonEnrichV2Schema(_EnrichFields):
    """SPEC 2.10 with servicegraph_id (alias pdl_id)."""

    ID_ALIASES = {"pdl_id": "servicegraph_id"}
    servicegraph_id = ma.fields.String(metadata={"description": "The person's id in the dataset; other inputs are then ignored"})


class PersonBulkEnrichSchema(StrictSchema):
    """1-100 enrich requests, each the enrich body or PDL's {"params": {...}, "metadata": {...}}."""

    requests = ma.fields.List(ma.fields.Dict(), required=True, validate=ma.validate.Length(min=1, max=100))
    min_likelihood = BoundedInteger(1, 10, metadata={"description": "Applies to items that do not set their own"})
    include_if_matched = StrictBoolean(metadata={"description": "Applies to items that do not set their own"})


# ---- responses (documentation and dumping) -----------------------------------

class PersonSearchResultSchema(ma.Schema):
    status = ma.fields.Integer(required=True, metadata={"example": 200})
    total = ma.fields.Integer(required=True)
    scroll_token = ma.fields.String(metadata={"description": "Present only when more results are available"})
    data = ma.fields.List(ma.fields.Dict(), required=True)


class PersonSearchPageResultSchema(ma.Schema):
    data = ma.fields.List(ma.fields.Dict(), required=True)
    total = ma.fields.Integer(required=True)
    page = ma.fields.Integer(required=True)
    size = ma.fields.Integer(required=True)
    total_pages = ma.fields.Integer(required=True, metadata={"description": "ceil(total / size)"})


class PersonEnrichResultSchema(ma.Schema):
    status = ma.fields.Integer(required=True, metadata={"example": 200})
    likelihood = ma.fields.Integer(required=True, metadata={"description": LIKELIHOOD_DOC})
    data = ma.fields.Dict(allow_none=True)
    dataset_version = ma.fields.String(allow_none=True)
    matched = ma.fields.List(ma.fields.String(), metadata={"description": "With include_if_matched: the inputs that agreed"})


class BulkItemErrorSchema(ma.Schema):
    type = ma.fields.String()
    message = ma.fields.String()
    fields = ma.fields.Dict()


class PersonBulkItemSchema(PersonEnrichResultSchema):
    likelihood = ma.fields.Integer(allow_none=True)
    error = ma.fields.Nested(BulkItemErrorSchema)
    metadata = ma.fields.Raw(metadata={"description": "Echoed from the request item"})


class PersonBulkResultSchema(ma.Schema):
    data = ma.fields.List(ma.fields.Nested(PersonBulkItemSchema), required=True)


class PersonMappingSchema(ma.Schema):
    mappings = ma.fields.Dict(required=True)
