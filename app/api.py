"""Project-wide flask-smorest pieces: the Api, a Blueprint that knows its auth scheme, shared schemas and page bodies."""

from __future__ import annotations

import http
import math

import marshmallow as ma
from flask_smorest import Api as SmorestApi
from flask_smorest import Blueprint as SmorestBlueprint

from app import api_docs, errors
from app.fields import BoundedInteger, Schema
from app.auth import BEARER, SECURITY_SCHEMES


class ErrorDetailSchema(ma.Schema):
    type = ma.fields.String(required=True, metadata={"example": "validation_error"})
    message = ma.fields.String(required=True, metadata={"example": "title: Missing data for required field."})
    fields = ma.fields.Dict(keys=ma.fields.String(), values=ma.fields.List(ma.fields.String()),
                            metadata={"description": "Per-field messages (422)"})
    existing_id = ma.fields.String(metadata={"description": "Id of the record that already exists (409)"})


class ErrorSchema(ma.Schema):
    """The one error body of every failure."""

    status = ma.fields.Integer(required=True, metadata={"example": 422})
    error = ma.fields.Nested(ErrorDetailSchema, required=True)


class Api(SmorestApi):
    ERROR_SCHEMA = ErrorSchema

    def handle_http_exception(self, error):
        return errors.handle_http_exception(error)

    def _register_error_handlers(self):
        """app.errors registers the handlers; keep flask-smorest from installing its own body."""


class Blueprint(SmorestBlueprint):
    """A smorest Blueprint that documents its auth scheme and the errors every protected route can answer."""

    def __init__(self, *args, auth: str | None = BEARER, **kwargs):
        super().__init__(*args, **kwargs)
        self.auth = auth
        self._prepare_doc_cbks.append(self._prepare_auth_doc)

    def _prepare_auth_doc(self, doc, doc_info, **kwargs):
        responses = doc.setdefault("responses", {})
        responses.setdefault(429, "TOO_MANY_REQUESTS")
        if self.auth:
            doc["security"] = [{SECURITY_SCHEMES[self.auth][0]: []}]
            responses.setdefault(401, "UNAUTHORIZED")
        return doc

    def arguments(self, schema, **kwargs):
        """flask-smorest's arguments, with a schema class instantiated once: given a class, webargs builds a new
        instance on every request (about 0.2 ms). marshmallow 4 schemas keep no per-load state, so one serves all."""
        return super().arguments(schema() if isinstance(schema, type) else schema, **kwargs)

    def errors(self, *status_codes: int):
        """Document the error statuses a route can answer besides 401/422/429."""

        def decorator(func):
            for code in status_codes:
                func = self.alt_response(code, response=http.HTTPStatus(code).name)(func)
            return func

        return decorator


def init_api(app) -> Api:
    app.config.setdefault("API_TITLE", "Hirekit")
    app.config.setdefault("API_VERSION", "1.0.0")
    app.config.setdefault("OPENAPI_VERSION", "3.0.3")
    app.config.setdefault("OPENAPI_URL_PREFIX", "/")
    app.config.setdefault("OPENAPI_JSON_PATH", "openapi.json")
    app.config.setdefault("API_SPEC_OPTIONS", {
        "info": {"description": "Recruitment integration, person search and enrichment, and MCP servers for AI agents. "
                                "Every failure answers {status, error: {type, message, fields?}}."},
    })
    api = Api(app)
    api_docs.init_app(app)  # /docs: Swagger UI from the packaged copy, not a CDN
    for name, scheme in SECURITY_SCHEMES.values():
        api.spec.components.security_scheme(name, scheme)
    return api


# ---- shared schemas -------------------------------------------------------

class UtcDateTime(ma.fields.DateTime):
    """ISO 8601 in UTC with a Z: how every timestamp is answered."""

    def _serialize(self, value, attr, obj, **kwargs):
        if value is None:
            return None
        return value.replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


class RecordSchema(Schema):
    """Fields every stored /v1 record answers."""

    id = ma.fields.UUID(dump_only=True)
    created_at = UtcDateTime(dump_only=True)
    updated_at = UtcDateTime(dump_only=True)


MAX_PAGE = 1_000_000_000  # far past any real list, and keeps (page - 1) * size inside a 64-bit OFFSET


class PageArgsSchema(ma.Schema):
    """page and size are required on every /v1 list (SPEC 4.1)."""

    page = BoundedInteger(1, MAX_PAGE, required=True, metadata={"description": f"1-based page (at most {MAX_PAGE:,})"})
    size = BoundedInteger(1, 100, required=True, metadata={"description": "1-100"})


class PageMetaSchema(Schema):
    page = ma.fields.Integer(required=True)
    size = ma.fields.Integer(required=True)
    total = ma.fields.Integer(required=True)
    total_pages = ma.fields.Integer(required=True)


_page_schemas: dict[type, type] = {}


def page_schema(item_schema: type[ma.Schema]) -> type[ma.Schema]:
    """{"data": [item], page, size, total, total_pages} for an item schema (one class per item, for OpenAPI)."""
    if item_schema not in _page_schemas:
        name = item_schema.__name__.removesuffix("Schema") + "PageSchema"
        _page_schemas[item_schema] = type(name, (PageMetaSchema,), {"data": ma.fields.List(ma.fields.Nested(item_schema), required=True)})
    return _page_schemas[item_schema]


def paginate(query, *, page: int, size: int, order_by=None) -> dict:
    """A page of a peewee query in stable order (created_at, then id unless given), with its totals."""
    total = query.count()
    items = list(page_query(query, page=page, size=size, order_by=order_by))
    return page_body(items, page=page, size=size, total=total)


def page_query(query, *, page: int, size: int, order_by=None):
    """The query of one page, in stable order (created_at, then id unless given)."""
    if order_by is None:
        order_by = (query.model.created_at, query.model.id)
    return query.order_by(*order_by).paginate(page, size)


def page_body(items: list, *, page: int, size: int, total: int) -> dict:
    return {"data": items, "page": page, "size": size, "total": total, "total_pages": math.ceil(total / size) if size else 0}
