"""The routes every record family answers the same way (list, read, create, update), registered from its model and schema.

A family's routes module names its model, schema, bodies and service functions; the route, its answer statuses and
its operationId (list_jobs, get_job, create_job, update_job) are made here, once, with the upsert of app.http.upserts.
Every route calls the family's service and answers what it returns dumped by the schema: the same service and
dump the family's MCP tools answer.
"""

from __future__ import annotations

import re
from typing import Callable

import marshmallow as ma

from app.http.api import Blueprint, page_schema
from app.security.auth import current_tenant_id
from app.data.records import TenantRecord


def add_list_route(blp: Blueprint, model: type[TenantRecord], schema_class: type[ma.Schema], *, rule: str = "",
                   args_schema: type[ma.Schema], list_records: Callable, list_name: str, summary: str) -> None:
    """`GET <prefix><rule>`, named `list_<list_name>` in /openapi.json: what the family's service
    `list_records(tenant_id, **args)` answers (app.http.listing.answer: page or cursor mode), dumped by
    `schema_class`'s page schema, the dump the MCP list tools answer too."""

    def get(self, args):
        return list_records(current_tenant_id(), **args)

    get.__doc__ = summary
    get = blp.arguments(args_schema, location="query")(get)
    get = blp.response(200, page_schema(schema_class))(get)
    blp.add_view(rule, f"{model.__name__}List", get=blp.doc(operationId=f"list_{list_name}")(get))


def add_read_route(blp: Blueprint, rule: str, model: type[TenantRecord], schema_class: type[ma.Schema], *,
                   summary: str, read: Callable) -> None:
    """`GET <prefix><rule>`, named `get_<label>` in /openapi.json: what the family's service
    `read(tenant_id, record_id)` answers for the id in the rule's one variable (404 for another tenant's, a missing
    or a malformed id), dumped by `schema_class`."""
    _names_one_record(blp, rule)

    def get(self, **path):
        (record_id,) = path.values()
        return read(current_tenant_id(), record_id)

    get.__doc__ = summary
    get = blp.response(200, schema_class)(get)
    blp.add_view(rule, f"{model.__name__}Read", get=blp.doc(operationId=_operation_id("get", model))(get))


def add_create_route(blp: Blueprint, model: type[TenantRecord], schema_class: type[ma.Schema], *, body,
                     create: Callable, summary: str) -> None:
    """`POST <prefix>`: `create(tenant_id, values)` answered 201, 409 for a source_id the tenant already used. `body`
    loads the request: blp.arguments(schema), or app.files.json_or_multipart for a body that can carry a file."""

    def post(self, values):
        return create(current_tenant_id(), values)

    post.__doc__ = summary
    post = blp.errors(409)(blp.response(201, schema_class)(body(post)))
    blp.add_view("", f"{model.__name__}Create", post=blp.doc(operationId=_operation_id("create", model))(post))


def add_update_route(blp: Blueprint, rule: str, model: type[TenantRecord], schema_class: type[ma.Schema], *, body,
                     update: Callable, summary: str, errors: tuple[int, ...] = ()) -> None:
    """`PATCH <prefix><rule>`: `update(tenant_id, record_id, values)` answered 200, with `errors` besides 404 and what
    the body documents. `body` as for add_create_route."""
    _names_one_record(blp, rule)

    def patch(self, values, **path):
        (record_id,) = path.values()
        return update(current_tenant_id(), record_id, values)

    patch.__doc__ = summary
    patch = blp.errors(*errors)(blp.response(200, schema_class)(body(patch)))
    blp.add_view(rule, f"{model.__name__}Update", patch=blp.doc(operationId=_operation_id("update", model))(patch))


def _operation_id(verb: str, model: type[TenantRecord]) -> str:
    return f"{verb}_{model.label.replace(' ', '_')}"


def _names_one_record(blp: Blueprint, rule: str) -> None:
    """A read or update route takes the record's id from the one variable of its whole rule (prefix included)."""
    variables = re.findall(r"<[^>]+>", f"{blp.url_prefix or ''}{rule}")
    if len(variables) != 1:
        raise ValueError(f"{blp.name}: {rule!r} must name one record, with one path variable (found {variables})")
