"""GET-by-id answers and lists of the record routes (app.http.record_routes): the tenant's rows
dumped by their schema."""

from __future__ import annotations

from functools import lru_cache

from flask import Response, current_app

from app.data.records import TenantRecord, get_owned
from app.http import listing
from app.http.api import page_schema
from app.http.json import dumps_bytes
from app.http.listing import ListWindow
from app.security.auth import current_tenant_id


def owned_record_response(
    model: type[TenantRecord], schema_class: type, tenant_id: str, record_id
) -> Response:
    """200 with the tenant's record dumped by `schema_class` (a 404 as `get_owned` answers it)."""
    return _json_response(
        dumps_bytes(_schema(schema_class).dump(get_owned(model, tenant_id, record_id)))
    )


def tenant_list_response(args: dict, query_for, schema_class: type, *, list_name: str) -> Response:
    """A family's list route: the caller's tenant's rows of `query_for(tenant_id, **filters)` in
    either list mode."""
    window, filters = listing.split_window(args)
    tenant_id = current_tenant_id()
    return owned_list_response(
        query_for(tenant_id, **filters),
        schema_class,
        window,
        tenant_id=tenant_id,
        list_name=list_name,
        filters=filters,
    )


def owned_list_response(
    query, schema_class: type, window: ListWindow, *, tenant_id: str, list_name: str, filters: dict
) -> Response:
    """200 with a list in either mode (app.http.listing)."""
    body = listing.answer(query, window, tenant_id=tenant_id, list_name=list_name, filters=filters)
    return _json_response(dumps_bytes(_schema(page_schema(schema_class)).dump(body)))


def _json_response(body: bytes) -> Response:
    app = current_app._get_current_object()
    return app.response_class(body, mimetype=app.json.mimetype)


@lru_cache(maxsize=None)
def _schema(schema_class):
    return schema_class()
