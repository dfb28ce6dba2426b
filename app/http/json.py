"""orjson behind Flask's JSON provider: the serializer is the hot path of every answer, and request
bodies are read within app.http.request_json's bounds."""

from __future__ import annotations

import decimal

import orjson
from flask import current_app
from flask.json.provider import DefaultJSONProvider

from app.http.request_json import loads_request


def _default(value):
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (set, frozenset)):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def dumps_bytes(obj) -> bytes:
    """What every JSON answer's body is: orjson, with Decimal and set support."""
    return orjson.dumps(obj, default=_default, option=orjson.OPT_NON_STR_KEYS)


class OrjsonProvider(DefaultJSONProvider):
    def dumps(self, obj, **kwargs) -> str:
        return dumps_bytes(obj).decode()

    def loads(self, s, **kwargs):
        """`request.get_json()`: too deep, an out-of-range number or a lone surrogate is the
        ApiError naming it (even with silent=True: the body is refused whoever reads it first);
        other invalid JSON stays a ValueError."""
        return loads_request(s)

    def response(self, *args, **kwargs):
        """`jsonify(...)`: one value as it is, several positional values as a list, keywords as an
        object."""
        if args and kwargs:
            raise TypeError("jsonify() takes either positional values or keywords, not both")
        obj = (args[0] if len(args) == 1 else list(args)) if args else (kwargs or None)
        return current_app.response_class(dumps_bytes(obj), mimetype=self.mimetype)
