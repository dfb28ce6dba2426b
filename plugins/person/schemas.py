"""Person request and response bodies (search, enrich, bulk enrich): shared by the REST routes and
the MCP sourcing tools. docs/integrating.md (Person search and enrichment) describes them to
clients."""

from __future__ import annotations

from collections.abc import Mapping

import marshmallow as ma
import orjson

from app.errors import ApiError
from app.http.fields import BoundedInteger, StrictBoolean, StrictSchema
from plugins.person.backends import MAX_RESULT_WINDOW
from plugins.person.query_budget import BUDGET_DOC, MAX_SQL_LENGTH, MAX_TEXT_LENGTH

TEXT_BOUND = ma.validate.Length(
    max=MAX_TEXT_LENGTH, error=f"At most {MAX_TEXT_LENGTH:,} characters (query budget)."
)
# PDL's names -> the seed's
ENRICH_ALIASES = {"name": "full_name", "phone": "phone_number", "company": "company_name"}
LIKELIHOOD_DOC = (
    "likelihood is 1-10: the sum of the weights of the inputs that agree with the profile, capped "
    "at 10 — "
    "id 10, email 6, profile URL 6, phone number 5, name 3, current company 2 (past company 1), "
    "school 1, "
    "location 1, job title 1; a given name that disagrees subtracts 3."
)


class JsonValue(ma.fields.Field):
    """A JSON value in a body, or the same value as a JSON string in a query parameter (GET)."""

    default_error_messages = {"invalid": "Not valid JSON.", "type": "Must be a JSON {type}."}

    def __init__(self, expected: type, **kwargs):
        typed = (
            {"type": "object"}
            if expected is dict
            else {"type": "array", "items": {"oneOf": [{"type": "string"}, {"type": "object"}]}}
        )
        # OpenAPI and MCP types
        super().__init__(**{**kwargs, "metadata": {**typed, **kwargs.get("metadata", {})}})
        self.expected = expected

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, str):
            try:
                value = orjson.loads(value)
            except orjson.JSONDecodeError:
                if self.expected is list and value.strip():
                    # sort=years:desc,id
                    value = [part.strip() for part in value.split(",") if part.strip()]
                else:
                    raise self.make_error("invalid") from None
        if not isinstance(value, self.expected):
            raise self.make_error("type", type="object" if self.expected is dict else "array")
        return value


def _sort_field():
    return JsonValue(
        list,
        metadata={
            "description": "Sort items, each {\"field\": \"x\", \"order\": \"asc\"|\"desc\"} or "
            "one of "
            "Elasticsearch's shapes {\"x\": \"asc\"|\"desc\"}, {\"x\": {\"order\": ...}}, \"x\": "
            "up to 10 keys in priority order (\"_score\" "
            "for relevance); ties on one key are broken by the next, then by index order (equal "
            "scores "
            "under a relevance-only sort: the engine's document order, which is index order for a "
            "dataset loaded in one go and the same from page to page). "
            "Default relevance (score descending). Lists sort by their smallest value "
            "ascending and largest descending; missing values sort last. Text fields and "
            "fields inside object arrays cannot be sorted on.",
            "example": [{"inferred_years_experience": "desc"}, {"last_name": "asc"}],
        },
    )


def _query_field():
    return JsonValue(
        dict,
        metadata={
            "description": "Elasticsearch-style DSL: bool (must, filter, should, must_not, "
            "minimum_should_match), term, terms, "
            "match, match_phrase, exists, range, prefix, wildcard, match_all. On GET, the query as "
            "a JSON string. "
            f"Send query or sql, not both. {BUDGET_DOC}",
            "example": {
                "bool": {
                    "filter": [{"term": {"location_country": "united states"}}],
                    "must": [{"match": {"job_title": "software engineer"}}],
                }
            },
        },
    )


class _QueryOrSql:
    """Exactly one of query (DSL) or sql (PDL's SQL, translated to the same DSL by
    plugins/person/sql.py)."""

    sql = ma.fields.String(
        validate=ma.validate.Length(min=1),
        metadata={
            "description": "PDL's SQL instead of query: SELECT * FROM person WHERE ... with =, !=, "
            "<, <=, >, >=, LIKE ('%' wildcard), "
            "IN (...), IS [NOT] NULL, AND, OR, NOT, parentheses, single-quoted strings and dotted "
            "fields "
            "(experience.title.name). No LIMIT (use size), ORDER BY (use sort), joins or other "
            "columns than *. "
            f"At most {MAX_SQL_LENGTH:,} characters; the query it means keeps to the query's "
            "budget.",
            "example": "SELECT * FROM person WHERE location_country = 'united states' AND "
            "job_title LIKE 'software%'",
        },
    )

    @ma.pre_load
    def refuse_unsupported(self, data, **kwargs):
        if isinstance(data, dict):
            if "sql" in data and "query" in data:
                raise ApiError(
                    400,
                    "query and sql: send one of them, not both.",
                    fields={"sql": ["Not allowed with query."]},
                )
            if "aggs" in data or "aggregations" in data:
                raise ApiError(400, "aggs: aggregations are not supported.")
        return data

    @ma.validates_schema(skip_on_field_errors=False)
    def query_or_sql(self, data, **kwargs):
        if "query" not in data and "sql" not in data:
            raise ma.ValidationError(
                "Missing data for required field (send query, or sql).", "query"
            )


class PersonSearchSchema(_QueryOrSql, StrictSchema):
    """Scroll-form search: size 1-100 (default 10), from >= 0 (from + size <= 10000), or
    scroll_token to continue."""

    query = _query_field()
    size = BoundedInteger(1, 100, load_default=10)
    from_ = BoundedInteger(
        0,
        MAX_RESULT_WINDOW,
        data_key="from",
        attribute="from",
        metadata={"description": "Offset (default 0); not with scroll_token; from + size <= 10000"},
    )
    scroll_token = ma.fields.String(
        validate=ma.validate.Length(min=1),
        metadata={"description": "From the previous page; resend the same query and sort"},
    )
    sort = _sort_field()


class PersonSearchPageSchema(_QueryOrSql, StrictSchema):
    """Page-form search: page is 1-based; page * size <= 10000."""

    query = _query_field()
    size = BoundedInteger(1, 100, load_default=10)
    page = BoundedInteger(
        1,
        MAX_RESULT_WINDOW,
        load_default=1,
        metadata={"description": "1-based (default 1); page * size <= 10000"},
    )
    sort = _sort_field()


class PdlBoolean(StrictBoolean):
    """true or false; in a query string also True/False, as PDL's Python SDK sends booleans
    (str(True))."""

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        return super()._deserialize(value, attr, data, **kwargs)


class InputValues(ma.fields.Field):
    """An enrich input as PDL takes it: a string or a list of strings (GET: the parameter repeated,
    or a JSON array).

    A list of one is that string. `several=False` inputs (names, job title) refuse more than one
    value. Each value is at most MAX_TEXT_LENGTH characters: the matcher searches with it (the query
    budget's text bound)."""

    is_multiple = True  # webargs reads every value of a repeated query parameter
    default_error_messages = {
        "type": "Must be a string or a list of strings.",
        "one": "Give one value, not a list of several.",
        "long": f"Each value is at most {MAX_TEXT_LENGTH:,} characters (query budget).",
    }

    def __init__(self, *, several: bool = True, **kwargs):
        kwargs.setdefault("metadata", {})
        text = {"type": "string", "maxLength": MAX_TEXT_LENGTH}
        kwargs["metadata"] = (
            {
                "oneOf": [text, {"type": "array", "items": text, "maxItems": 100}],
                **kwargs["metadata"],
            }
            if several
            else {**text, **kwargs["metadata"]}
        )
        super().__init__(**kwargs)
        self.several = several

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, str) and value.lstrip().startswith("["):
            try:
                value = orjson.loads(value)
            except orjson.JSONDecodeError:
                raise self.make_error("type") from None
        values = value if isinstance(value, list) else [value]
        if not values or len(values) > 100 or not all(isinstance(v, str) for v in values):
            raise self.make_error("type")
        if any(len(v) > MAX_TEXT_LENGTH for v in values):
            raise self.make_error("long")
        values = [v.strip() for v in values if v.strip()]
        if len(values) > 1 and not self.several:
            raise self.make_error("one")
        if not values:
            return ""
        return values[0] if len(values) == 1 else values


class _EnrichFields(StrictSchema):
    first_name = InputValues(several=False)
    last_name = InputValues(several=False)
    middle_name = InputValues(several=False)
    full_name = InputValues(several=False, metadata={"description": "Alias: name"})
    email = InputValues(metadata={"description": "One address or a list (any of them may match)"})
    phone_number = InputValues(
        metadata={
            "description": "E.164 recommended (other formats are read as US numbers). Alias: phone"
        }
    )
    job_title = InputValues(several=False)
    company_name = InputValues(
        metadata={"description": "Alias: company. A list: any of them may match"}
    )
    location = InputValues(
        metadata={"description": "City, region, country, e.g. \"san francisco, california\""}
    )
    school = InputValues()
    profile = InputValues(
        metadata={"description": "Social profile URLs (a single string is accepted)"}
    )
    required = ma.fields.String(
        validate=TEXT_BOUND,
        metadata={
            "description": "PDL's boolean expression over fields the match must have, e.g. "
            "\"emails AND (profiles OR phone_numbers)\" or \"profiles.network:linkedin\"; a match "
            "lacking them is 404"
        },
    )
    min_likelihood = BoundedInteger(
        1, 10, metadata={"description": "1-10, default 2: a weaker best match answers 404"}
    )
    include_if_matched = PdlBoolean(
        metadata={"description": "Add `matched`: the inputs that agreed with the profile"}
    )

    @ma.pre_load
    def accept_pdl_names(self, data, **kwargs):
        if not isinstance(data, Mapping):  # a JSON object, or webargs' view of a query string
            return data
        # webargs' view of a query string: an alias's repeated values are not read
        query = getattr(data, "data", None)
        data = dict(data)
        for alias, name in {**ENRICH_ALIASES, **self.ID_ALIASES}.items():
            if alias in data:
                value = data.pop(alias)
                if hasattr(query, "getlist") and len(query.getlist(alias)) > 1:
                    value = query.getlist(alias)
                data.setdefault(name, value)
        return data

    @ma.post_load
    def drop_blanks(self, data, **kwargs):
        return {
            k: (v.strip() if isinstance(v, str) else v)
            for k, v in data.items()
            if k == "data_include"
            or not (
                v is None
                or (isinstance(v, (str, list)) and not (v.strip() if isinstance(v, str) else v))
            )
        }

    ID_ALIASES: dict = {}


class PersonEnrichV1Schema(_EnrichFields):
    """v1's enrich body: the id is vendor_id (alias pdl_id)."""

    ID_ALIASES = {"pdl_id": "vendor_id"}
    vendor_id = ma.fields.String(
        metadata={"description": "The person's id in the dataset; other inputs are then ignored"}
    )


class PersonEnrichV2Schema(_EnrichFields):
    """v2's enrich body: the id is servicegraph_id (alias pdl_id)."""

    ID_ALIASES = {"pdl_id": "servicegraph_id"}
    servicegraph_id = ma.fields.String(
        metadata={"description": "The person's id in the dataset; other inputs are then ignored"}
    )


class PersonBulkEnrichSchema(StrictSchema):
    """1-100 enrich requests, each the enrich body or PDL's {"params": {...}, "metadata": {...}}."""

    requests = ma.fields.List(
        ma.fields.Dict(), required=True, validate=ma.validate.Length(min=1, max=100)
    )
    min_likelihood = BoundedInteger(
        1, 10, metadata={"description": "Applies to items that do not set their own"}
    )
    include_if_matched = PdlBoolean(
        metadata={"description": "Applies to items that do not set their own"}
    )
    required = ma.fields.String(
        validate=TEXT_BOUND,
        metadata={"description": "Applies to items that do not set their own (see enrich)"},
    )


# ---- what PDL's clients send besides the inputs (REST only) ---------------------


class _PdlOptions:
    """The output options of every PDL person call, and the API key PDL's SDKs send as a parameter
    (app.security.auth reads it; it is dropped here so it is never an unknown field, echoed or
    stored)."""

    data_include = ma.fields.String(
        metadata={
            "description": "Comma-separated dotted fields to keep (experience.title.name); "
            "begin with - to drop them instead; \"\" answers records as {}"
        }
    )
    titlecase = PdlBoolean(
        metadata={
            "description": "Names, titles, companies, schools and places in title case (stored "
            "lowercase)"
        }
    )
    pretty = PdlBoolean(metadata={"description": "Indent the JSON answer"})

    @ma.pre_load
    def drop_api_key(self, data, **kwargs):
        if isinstance(data, Mapping) and "api_key" in data:
            # data[k] on webargs' query view: a list for list fields
            data = {k: data[k] for k in data if k != "api_key"}
        return data


class PdlPersonSearchSchema(_PdlOptions, PersonSearchSchema):
    """The scroll-form search, plus PDL's output options; `from_` (what PDL's Python SDK sends for
    from) is read as from."""

    @ma.pre_load
    def accept_sdk_from(self, data, **kwargs):
        if isinstance(data, dict) and "from_" in data and "from" not in data:
            data = {("from" if k == "from_" else k): v for k, v in data.items()}
        return data


class PdlPersonSearchPageSchema(_PdlOptions, PersonSearchPageSchema):
    """The page-form search, plus PDL's output options."""


class PdlPersonEnrichV1Schema(_PdlOptions, PersonEnrichV1Schema):
    """v1's enrich (vendor_id, alias pdl_id), plus PDL's output options."""


class PdlPersonEnrichV2Schema(_PdlOptions, PersonEnrichV2Schema):
    """v2's enrich (servicegraph_id, alias pdl_id), plus PDL's output options."""


class PdlPersonBulkEnrichSchema(_PdlOptions, PersonBulkEnrichSchema):
    """1-100 enrich requests (each the enrich body or {"params", "metadata"}); top-level options
    apply to every item."""


class PersonRetrieveArgsSchema(_PdlOptions, StrictSchema):
    """GET /person/retrieve/{id}: only the output options."""


# ---- responses (documentation and dumping) -----------------------------------


class Profiles(ma.fields.List):
    """A list of profile objects; a profile given as its stored JSON (orjson.Fragment) is dumped as
    it is, unparsed."""

    def __init__(self, **kwargs):
        super().__init__(ma.fields.Dict(), **kwargs)

    def _serialize(self, value, attr, obj, **kwargs):
        if value is None:
            return None
        return [
            hit
            if isinstance(hit, orjson.Fragment)
            else self.inner._serialize(hit, attr, obj, **kwargs)
            for hit in value
        ]


class PersonSearchResultSchema(ma.Schema):
    status = ma.fields.Integer(required=True, metadata={"example": 200})
    total = ma.fields.Integer(required=True)
    scroll_token = ma.fields.String(
        metadata={"description": "Present only when more results are available"}
    )
    data = Profiles(required=True)


class PersonSearchPageResultSchema(ma.Schema):
    data = Profiles(required=True)
    total = ma.fields.Integer(required=True)
    page = ma.fields.Integer(required=True)
    size = ma.fields.Integer(required=True)
    total_pages = ma.fields.Integer(required=True, metadata={"description": "ceil(total / size)"})


class PersonEnrichResultSchema(ma.Schema):
    status = ma.fields.Integer(required=True, metadata={"example": 200})
    likelihood = ma.fields.Integer(required=True, metadata={"description": LIKELIHOOD_DOC})
    data = ma.fields.Dict(allow_none=True)
    dataset_version = ma.fields.String(allow_none=True)
    matched = ma.fields.List(
        ma.fields.String(),
        metadata={"description": "With include_if_matched: the inputs that agreed"},
    )


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


class PersonRetrieveResultSchema(ma.Schema):
    status = ma.fields.Integer(required=True, metadata={"example": 200})
    data = ma.fields.Dict(required=True)
    billed = ma.fields.Boolean(
        metadata={"description": "Always false: Hirekit does not meter credits"}
    )


class PersonIdentifyMatchSchema(ma.Schema):
    data = ma.fields.Dict(required=True)
    match_score = ma.fields.Integer(
        required=True,
        metadata={"description": "likelihood x 10 (10-100); the list is strongest first"},
    )
    matched_on = ma.fields.List(
        ma.fields.String(), required=True, metadata={"description": "The inputs that agreed"}
    )


class PersonIdentifyResultSchema(ma.Schema):
    status = ma.fields.Integer(required=True, metadata={"example": 200})
    matches = ma.fields.List(
        ma.fields.Nested(PersonIdentifyMatchSchema),
        required=True,
        metadata={"description": "Up to 20 candidates"},
    )


class PersonPdlBulkResultSchema(PersonBulkItemSchema):
    """One item of PDL's bulk answer, a JSON array in request order (the array is the whole
    body)."""


class PersonMappingSchema(ma.Schema):
    mappings = ma.fields.Dict(required=True)
