"""orjson behind Flask's JSON provider: the serializer is the hot path of every answer."""

from __future__ import annotations

import decimal

import orjson
from flask.json.provider import DefaultJSONProvider


def _default(value):
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (set, frozenset)):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


class OrjsonProvider(DefaultJSONProvider):
    def dumps(self, obj, **kwargs) -> str:
        return orjson.dumps(obj, default=_default, option=orjson.OPT_NON_STR_KEYS).decode()

    def loads(self, s, **kwargs):
        return orjson.loads(s)

    def response(self, *args, **kwargs):
        obj = self._prepare_response_obj(args, kwargs)
        return self._app.response_class(
            orjson.dumps(obj, default=_default, option=orjson.OPT_NON_STR_KEYS), mimetype=self.mimetype
        )
