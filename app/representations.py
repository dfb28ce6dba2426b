"""GET-by-id answers built once per distinct row: the row is read on every request, its JSON body is reused.

A record's JSON is a pure function of its row and its schema, so the body dumped for a row can be answered again for
an identical row read later: any change to the row changes the key. Nothing is served that the database did not
return for this request. What is skipped is building the model instance, the marshmallow dump and the JSON encoding,
and on PostgreSQL the decoding of typed columns, since the row is read as one text value there
(`app.records.get_owned_version`). Integrations poll the same jobs and candidates over and over, which is the read
this serves; a row not seen before costs one more query on PostgreSQL and what it did without the cache elsewhere.
"""

from __future__ import annotations

from functools import lru_cache

from flask import Response, current_app

from app.json import dumps_bytes
from app.records import TenantRecord, get_owned_version, get_owned_versioned_row, instance_from_row

MAX_BODIES = 2048  # per process; at a few KiB each, a few MiB at most

_bodies: dict[tuple, bytes] = {}


def owned_record_response(model: type[TenantRecord], schema_class: type, tenant_id: str, record_id) -> Response:
    """200 with the tenant's record dumped by `schema_class` (a 404 as `get_owned` answers it)."""
    version, row = get_owned_version(model, tenant_id, record_id)
    key = (schema_class, version)
    try:
        body = _bodies.get(key)
    except TypeError:  # a column the driver returns as a list or dict: not hashable, so not kept
        key, body = None, None
    if body is None:
        if row is None:  # the version alone was read: read it again with the row, consistently
            version, row = get_owned_versioned_row(model, tenant_id, record_id)
            key = (schema_class, version)
        body = dumps_bytes(_schema(schema_class).dump(instance_from_row(model, row)))
        if key is not None:
            if len(_bodies) >= MAX_BODIES:
                _bodies.clear()
            _bodies[key] = body
    return current_app.response_class(body, mimetype=current_app.json.mimetype)


@lru_cache(maxsize=None)
def _schema(schema_class):
    return schema_class()
