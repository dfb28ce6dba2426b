"""Marshmallow fields shared by the families: non-blank text, ISO 8601 date strings, trimmed optional strings."""

from __future__ import annotations

import datetime as dt

import marshmallow as ma


class Text(ma.fields.String):
    """A string that is trimmed and, when given, not blank; max_length bounds what is sent, as OpenAPI documents it."""

    def __init__(self, *args, max_length: int | None = None, **kwargs):
        validators = list(kwargs.pop("validate", None) or [])
        validators.append(ma.validate.Length(min=1, max=max_length, error="Must not be blank." if max_length is None else None))
        super().__init__(*args, validate=validators, **kwargs)
        self.max_length = max_length

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs)
        if self.max_length is not None and len(text) > self.max_length:
            raise ma.ValidationError(f"Longer than maximum length {self.max_length}.")
        return text.strip()


def optional_text(**kwargs) -> Text:
    return Text(load_default=None, allow_none=True, **kwargs)


class IsoDateString(ma.fields.String):
    """An ISO 8601 date or timestamp kept as the client sent it (SPEC: samples use ISO 8601 UTC)."""

    default_error_messages = {"invalid_iso": "Not a valid ISO 8601 date or timestamp (e.g. 2026-01-31 or 2026-01-31T09:00:00Z)."}

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs).strip()
        try:
            if len(text) <= 10:
                dt.date.fromisoformat(text)
            else:
                dt.datetime.fromisoformat(text.replace("z", "Z"))
        except ValueError:
            raise self.make_error("invalid_iso") from None
        return text


class StrictSchema(ma.Schema):
    """Unknown fields are rejected (422 naming them): request bodies are exact."""

    class Meta:
        unknown = ma.RAISE
