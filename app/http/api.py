"""Project-wide flask-smorest pieces: the Api, a Blueprint that knows its auth scheme, shared
schemas and page bodies."""

from __future__ import annotations

import http
import re

import marshmallow as ma
from apispec import BasePlugin
from apispec.ext.marshmallow import MarshmallowPlugin
from flask_smorest import Api as SmorestApi
from flask_smorest import Blueprint as SmorestBlueprint

from app.http import api_docs, idempotency, plain_dump
from app import errors
from app.server import server_refusals
from app.http.path_params import BOUNDS_DESCRIPTION as PATH_BOUNDS
from app.http.request_json import BOUNDS_DESCRIPTION as JSON_BOUNDS, BoundedJsonParser
from app.http.fields import BoundedInteger, Schema
from app.http.listing import SyncArgsSchema, cursor_mode_excludes_page, shown_instant
from app.security.auth import BEARER, SECURITY_SCHEMES


class MomentSchema(ma.Schema):
    utc = ma.fields.String(required=True, metadata={"example": "2026-12-01T14:00:00Z"})
    local = ma.fields.String(
        required=True,
        metadata={
            "description": "In the zone named, with its offset",
            "example": "2026-12-01T08:00:00-06:00",
        },
    )
    timezone = ma.fields.String(required=True, metadata={"example": "America/Chicago"})


class ErrorDetailSchema(ma.Schema):
    type = ma.fields.String(required=True, metadata={"example": "validation_error"})
    message = ma.fields.String(
        required=True, metadata={"example": "title: Missing data for required field."}
    )
    fields = ma.fields.Dict(
        keys=ma.fields.String(),
        values=ma.fields.List(ma.fields.String()),
        metadata={"description": "Per-field messages (422)"},
    )
    existing_id = ma.fields.String(
        metadata={"description": "Id of the record that already exists (409)"}
    )
    next_allowed = ma.fields.Nested(
        MomentSchema,
        allow_none=True,
        metadata={
            "description": "A time the candidate may not be called at: the next moment they may "
            "be, in their zone and "
            "UTC (null: none in the next two weeks)"
        },
    )


class ErrorSchema(ma.Schema):
    """The one error body of every failure."""

    status = ma.fields.Integer(required=True, metadata={"example": 422})
    error = ma.fields.Nested(ErrorDetailSchema, required=True)


class Api(SmorestApi):
    """flask-smorest's Api, answering its HTTP errors in the one error body (app.errors)."""

    ERROR_SCHEMA = ErrorSchema

    def handle_http_exception(self, error):
        return errors.handle_http_exception(error)


class Blueprint(SmorestBlueprint):
    """A smorest Blueprint that documents its auth scheme and the errors every protected route can
    answer.

    `reads_raw_body=True` declares that the blueprint's routes parse their own request body and
    answer a malformed one in their own protocol (MCP's JSON-RPC errors), so app.http.nul_guard
    leaves their bodies and query strings alone.

    `read_only=True` declares that its routes change no state, POSTs included (person queries sent
    as bodies), so app.http.idempotency ignores an Idempotency-Key on them (nothing is stored or
    replayed) and does not document it."""

    ARGUMENTS_PARSER = BoundedJsonParser()  # JSON bodies read within app.http.request_json's bounds

    def __init__(
        self,
        *args,
        auth: str | None = BEARER,
        reads_raw_body: bool = False,
        read_only: bool = False,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.auth = auth
        self.reads_raw_body = reads_raw_body
        self.read_only = read_only
        # endpoints whose rule names what they create (no 404 documented)
        self.creates_missing: set[str] = set()

    def document_operation(self, endpoint: str, path_variables: bool, operation: dict) -> None:
        """What every operation of the blueprint can answer besides its own statuses: 429, what
        gunicorn refuses before any route (400, 414, 431), 401 and its security scheme when it takes
        a key, 404 when its path names a record (ClientFriendlyDocument calls this as the document
        is built)."""
        responses = operation.setdefault("responses", {})
        responses.setdefault(429, "TOO_MANY_REQUESTS")
        server_refusals.document_operation(responses)
        if self.auth:
            operation["security"] = [{SECURITY_SCHEMES[self.auth][0]: []}]
            responses.setdefault(401, "UNAUTHORIZED")
        if path_variables and endpoint not in self.creates_missing:
            responses.setdefault(404, "NOT_FOUND")

    def arguments(self, schema, **kwargs):
        """flask-smorest's arguments, with a schema class instantiated once: given a class, webargs
        builds a new instance on every request (about 0.2 ms). marshmallow 4 schemas keep no
        per-load state, so one serves all."""
        return super().arguments(schema() if isinstance(schema, type) else schema, **kwargs)

    def route(self, rule, *, creates_missing: bool = False, **options):
        """flask-smorest's route. A rule with a variable (its own or the blueprint's prefix) names
        something that may not be there, so its operations document 404 without each one saying so;
        `creates_missing` is for a route that creates what its path names instead (an upsert)."""
        register = super().route(rule, **options)

        def decorator(view):
            if creates_missing:
                self.creates_missing.add(options.get("endpoint") or view.__name__)
            return register(view)

        return decorator

    def errors(self, *status_codes: int):
        """Document the error statuses a route can answer besides 401/422/429 (and 404, which route
        documents)."""

        def decorator(func):
            for code in status_codes:
                func = self.alt_response(code, response=http.HTTPStatus(code).name)(func)
            return func

        return decorator


ITEM_VERBS = {"get": "get", "patch": "update", "put": "set", "delete": "delete", "post": "create"}


def snake_case(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def operation_id(endpoint: str, method: str, methods: set[str]) -> str:
    """A stable operationId a person would write, what a generated client names its functions after:
    list_jobs and create_job for a collection view (Jobs), get_job and update_job for an item view
    (JobItem), person_search_v1 and person_search_v1_get (its query-string twin) for a person route.
    A view whose name does not say it names its own with `@blp.doc(operationId=...)`, which this
    never overrides."""
    blueprint, view = endpoint.rsplit(".", 1)
    if view.islower():  # a lower-case endpoint (person): the blueprint says version and dataset
        prefix, *variant = blueprint.split("_")
        name = "_".join([prefix, view, *variant])
        return f"{name}_get" if method == "get" and "post" in methods else name
    words = snake_case(view)
    if words.endswith("_item"):
        return f"{ITEM_VERBS[method]}_{words.removesuffix('_item')}"
    if method == "get" and words.endswith("s"):
        return f"list_{words}"
    if method == "post" and words.endswith("s"):
        return f"create_{words.removesuffix('s')}"
    return f"{ITEM_VERBS[method]}_{words}"


# OpenAPI 3.0.3's schema that null alone satisfies
NULL_ONLY = {"type": "object", "nullable": True, "enum": [None]}


def nullable_ref(converter, field: ma.fields.Field, ret: dict, **kwargs) -> dict:
    """A nullable nested object as anyOf [$ref, null-only schema]: OpenAPI 3.0.3 applies `nullable`
    only beside `type`, so strict validators refused null for allOf [$ref] + nullable, and apispec's
    anyOf [{type: object, nullable}, $ref] lets any object through (generators read it as "any
    object"). apispec binds it to its field converter."""
    any_of = ret.get("anyOf")
    if isinstance(field, ma.fields.Nested) and field.allow_none and any_of and len(any_of) == 2:
        refs = [item for item in any_of if "$ref" in item]
        if len(refs) == 1:
            ret["anyOf"] = [*refs, dict(NULL_ONLY)]
    return {}


def json_text_parameter(parameter: dict) -> None:
    """A query-string parameter holding an object or array of objects (a person search's query,
    sort) is sent as JSON text: documented as the string it is, not as a form-exploded object a
    generated client would send."""
    schema = parameter.get("schema") or {}
    if schema.get("type") == "object" or (
        schema.get("type") == "array" and "oneOf" in schema.get("items", {})
    ):
        parameter["schema"] = {"type": "string"}
        parameter["description"] = " ".join(
            filter(None, [parameter.get("description"), "Sent as JSON text."])
        )


class ClientFriendlyDocument(BasePlugin):
    """What a client generator (openapi-python-client) needs to make typed, usable code: an
    operationId on every operation, the fields every answer carries listed as `required` in record
    schemas, nullable nested objects as references."""

    def __init__(self, app):
        self.app = app  # its blueprints say which operations are read-only

    def init_spec(self, spec):
        for plugin in spec.plugins:
            if isinstance(plugin, MarshmallowPlugin):
                plugin.converter.add_attribute_function(nullable_ref)

    def operation_helper(self, path=None, operations=None, **kwargs):
        rule = kwargs.get("rule")
        if rule is None or not operations:
            return
        methods = set(operations)
        for method, operation in operations.items():
            operation.setdefault("operationId", operation_id(rule.endpoint, method, methods))
            for parameter in operation.get("parameters", ()):
                if isinstance(parameter, dict) and parameter.get("in") == "query":
                    json_text_parameter(parameter)
            blueprint_name, _, endpoint = rule.endpoint.rpartition(".")
            blueprint = self.app.blueprints.get(blueprint_name)
            if isinstance(blueprint, Blueprint):
                blueprint.document_operation(endpoint, bool(rule.arguments), operation)
            idempotency.document_operation(
                path, method, operation, read_only=idempotency.reads_only(self.app, blueprint_name)
            )

    def schema_helper(self, name, definition, **kwargs):
        """A full answer's schema lists every dumped field as required but those it names
        optional."""
        schema = kwargs.get("schema")
        schema = schema() if isinstance(schema, type) else schema
        if not isinstance(schema, FullAnswerSchema):
            return None
        optional = set(schema.OPTIONAL_IN_ANSWERS)
        return {
            "required": [
                field.data_key or field_name
                for field_name, field in schema.fields.items()
                if not field.load_only and field_name not in optional
            ]
        }


def init_api(app) -> Api:
    app.config.setdefault("API_TITLE", "Hirekit")
    app.config.setdefault("API_VERSION", "1.0.0")
    app.config.setdefault("OPENAPI_VERSION", "3.0.3")
    app.config.setdefault("OPENAPI_URL_PREFIX", "/")
    app.config.setdefault("OPENAPI_JSON_PATH", "openapi.json")
    app.config.setdefault(
        "API_SPEC_OPTIONS",
        {
            "info": {
                "description": "Recruitment integration, person search and enrichment, and MCP "
                "servers for AI agents. "
                "Every failure answers {status, error: {type, message, fields?}}. "
                f"{JSON_BOUNDS} {PATH_BOUNDS}"
            },
        },
    )
    api = Api(app, spec_kwargs={"extra_plugins": [ClientFriendlyDocument(app)]})
    api_docs.init_app(app)  # /docs: Swagger UI from the packaged copy, not a CDN
    for name, scheme in SECURITY_SCHEMES.values():
        api.spec.components.security_scheme(name, scheme)
    server_refusals.document(api.spec, ErrorSchema)
    return api


# ---- shared schemas -------------------------------------------------------


class UtcDateTime(ma.fields.DateTime):
    """ISO 8601 in UTC with milliseconds and a Z (2026-11-26T18:13:09.123Z): how every timestamp is
    answered, at the precision app.http.listing's updated_after/updated_before compare at."""

    def _serialize(self, value, attr, obj, **kwargs):
        return None if value is None else shown_instant(value)

    # what _serialize answers for a value that is not None (app.http.plain_dump)
    plain_value = staticmethod(shown_instant)


class FullAnswerSchema(Schema):
    """An answer that carries each of its dumped fields (null when empty), so OpenAPI lists them as
    required and a generated client types them as always set; a subclass names those only some
    answers carry in OPTIONAL_IN_ANSWERS."""

    OPTIONAL_IN_ANSWERS: tuple[str, ...] = ()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.plain_plan = None

    def get_attribute(self, obj, attr, default):
        """A list row read as a dict (app.data.list_rows) by key, a record by attribute:
        marshmallow's own lookup tries both, and dotted paths, for every field of every row."""
        if type(obj) is dict:
            return obj.get(attr, default)
        return getattr(obj, attr, default)

    def dump(self, obj, *, many=None):
        """The same body as marshmallow's dump, made by app.http.plain_dump's plan of this schema:
        every record a route or an MCP tool answers goes through here."""
        plan = self.plain_plan or self.plain()
        if self.many if many is None else many:
            return [plan(each) for each in obj]
        return plan(obj)

    def plain(self):
        """app.http.plain_dump's function dumping one record with this schema (built on first
        use)."""
        if self.plain_plan is None:
            self.plain_plan = plain_dump.plan_for(self)
        return self.plain_plan


class RecordSchema(FullAnswerSchema):
    """Fields every stored /v1 record answers."""

    id = ma.fields.UUID(dump_only=True)
    created_at = UtcDateTime(dump_only=True)
    updated_at = UtcDateTime(dump_only=True)


class TombstoneSchema(Schema):
    """An erased record in a cursor walk (app.data.tombstones): its id, when it went, and nothing
    else."""

    id = ma.fields.UUID(required=True, attribute="record_id")
    deleted = ma.fields.Boolean(
        required=True, metadata={"description": "Always true: the record was erased"}
    )
    deleted_at = UtcDateTime(required=True)
    updated_at = UtcDateTime(required=True, metadata={"description": "The same as deleted_at"})


class ListItem(ma.fields.Nested):
    """A list's item: a record dumped by its schema, or a tombstone of an erased one (cursor walks
    of lists whose records can be erased: candidates, applications)."""

    def _serialize(self, nested_obj, attr, obj, **kwargs):
        if (
            type(nested_obj) is not dict
            and getattr(nested_obj, "deleted", False) is True
            and hasattr(nested_obj, "record_id")
        ):
            return _tombstone_schema.dump(nested_obj)
        return self.schema.dump(nested_obj)


# far past any real list, and keeps (page - 1) * size inside a 64-bit OFFSET
MAX_PAGE = 1_000_000_000


class PageArgsSchema(SyncArgsSchema):
    """page and size are required on every /v1 list (docs/integrating.md, Jobs), page unless it is
    walked by cursor."""

    page = BoundedInteger(
        1,
        MAX_PAGE,
        metadata={
            "description": f"1-based page (at most {MAX_PAGE:,}); required in page "
            "mode, refused together with cursor"
        },
    )
    size = BoundedInteger(1, 100, required=True, metadata={"description": "1-100"})

    @ma.validates_schema(pass_original=True)
    def one_mode(self, data, original_data, **kwargs):
        cursor_mode_excludes_page(data, original_data)


class PageMetaSchema(Schema):
    """Page mode answers page, size, total and total_pages; cursor mode answers size and next_cursor
    (absent on the last page), never totals."""

    page = ma.fields.Integer(metadata={"description": "Page mode only"})
    size = ma.fields.Integer(required=True)
    total = ma.fields.Integer(metadata={"description": "Page mode only: exact"})
    total_pages = ma.fields.Integer(metadata={"description": "Page mode only"})
    next_cursor = ma.fields.String(
        metadata={
            "description": "Cursor mode only: the cursor of the next page, absent on the last one"
        }
    )


class WholeListMetaSchema(Schema):
    """A list without pages answers data; walked by cursor, also size and next_cursor (absent on the
    last page)."""

    size = ma.fields.Integer(metadata={"description": "Cursor mode only"})
    next_cursor = ma.fields.String(
        metadata={
            "description": "Cursor mode only: the cursor of the next page, absent on the last one"
        }
    )


_page_schemas: dict[type, type] = {}


_tombstone_schema = TombstoneSchema()


def page_schema(item_schema: type[ma.Schema]) -> type[ma.Schema]:
    """{"data": [item], page, size, total, total_pages} for an item schema (one class per item, for
    OpenAPI)."""
    if item_schema not in _page_schemas:
        name = item_schema.__name__.removesuffix("Schema") + "PageSchema"
        _page_schemas[item_schema] = type(
            name, (PageMetaSchema,), {"data": ma.fields.List(ListItem(item_schema), required=True)}
        )
    return _page_schemas[item_schema]
