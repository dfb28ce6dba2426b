"""Marshmallow fields shared by the families: non-blank text, ISO 8601 date strings, trimmed
optional strings, bounded integers and the JSON body conventions (blank is absent, exact
scalars)."""

from __future__ import annotations

import datetime as dt

import marshmallow as ma
from marshmallow.utils import missing

BLANK = "Must not be blank."


# The base every project schema names: marshmallow's own, with nothing changed (one name to import
# beside the fields).
Schema = ma.Schema


class Text(ma.fields.String):
    """A string that is trimmed and never blank; max_length bounds what is sent, as OpenAPI
    documents it. A blank value for an optional Text in a body never gets here: the JSON body
    conventions make it absent (see json_conventions)."""

    default_error_messages = {"blank": BLANK}

    def __init__(self, *args, max_length: int | None = None, **kwargs):
        validators = list(kwargs.pop("validate", None) or [])
        # documented (minLength); an optional blank is absent instead
        minimum = 1 if kwargs.get("required") else None
        self.bounds = None
        if minimum is not None or max_length is not None:
            self.bounds = ma.validate.Length(min=minimum, max=max_length)
            validators.append(self.bounds)
        super().__init__(*args, validate=validators, **kwargs)
        self.max_length = max_length

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs)
        if self.max_length is not None and len(text) > self.max_length:
            raise ma.ValidationError(f"Longer than maximum length {self.max_length}.")
        text = text.strip()
        if not text:
            raise self.make_error("blank")
        return text


def optional_text(**kwargs) -> Text:
    return Text(load_default=None, allow_none=True, **kwargs)


# PostgreSQL `integer`, what peewee's IntegerField makes: the narrowest integer column
PG_INTEGER_MAX = 2**31 - 1
# 43,200: the longest delay, interval or notice in minutes a schedule setting takes (30 days)
MINUTES_MAX = 30 * 24 * 60


class BoundedInteger(ma.fields.Integer):
    """An integer with both bounds, each inclusive: every integer a request sends has an upper
    bound, or a value past the database column's range (or datetime's, added as minutes) fails in
    the driver as a 500 instead of a 422. The Range validator is what the OpenAPI document (apispec)
    and the MCP inputSchemas (app.http.jsonschema) read as minimum/maximum, so clients and fuzzers
    see the bound. The maximum must fit a PostgreSQL integer column. A number with a fraction (1.5)
    is refused rather than truncated, as JSON Schema's "integer" means."""

    def __init__(self, minimum: int, maximum: int, **kwargs):
        if not minimum <= maximum <= PG_INTEGER_MAX:
            raise ValueError(
                f"bounds {minimum}..{maximum} must be ordered and fit a PostgreSQL integer ("
                f"{PG_INTEGER_MAX})"
            )
        validators = kwargs.pop("validate", None) or []
        validators = [validators] if callable(validators) else list(validators)
        super().__init__(
            validate=[ma.validate.Range(min=minimum, max=maximum), *validators], **kwargs
        )
        self.minimum, self.maximum = minimum, maximum

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, float) and not value.is_integer():
            raise self.make_error("invalid", input=value)
        return super()._deserialize(value, attr, data, **kwargs)


class StrictBoolean(ma.fields.Boolean):
    """true or false (and "true"/"false", as a query string sends them): marshmallow's Boolean also
    takes 0, 1, "yes", "on" and the like, which a JSON body declaring a boolean should refuse (422)
    rather than guess at."""

    def _deserialize(self, value, attr, data, **kwargs):
        if value is True or value is False:
            return value
        if isinstance(value, str) and value in ("true", "false"):
            return value == "true"
        raise self.make_error("invalid", input=value)


class IsoDateString(ma.fields.String):
    """An ISO 8601 date or timestamp (a job's start_date, end_date, posting_date), kept as the
    client sent it."""

    default_error_messages = {
        "invalid_iso": "Not a valid ISO 8601 date or timestamp (e.g. 2026-01-31 or "
        "2026-01-31T09:00:00Z)."
    }

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


def json_conventions(schema: ma.Schema, data: dict) -> tuple[dict, dict]:
    """A JSON object's values as the schema should read them, and what breaks the conventions of
    every JSON body: a blank string ("" or spaces) on an optional string field is absent (null where
    the field takes null: ATS payloads send "" for an empty field) and on a required one "Must not
    be blank."; a number or boolean field takes only a JSON number or boolean (not "3", not 2.7 for
    an integer, not "yes" or 1 for a boolean). Query strings and forms are text and keep their text
    forms: only JSON objects come here."""
    cleaned, problems = dict(data), {}
    fields_by_key = _fields_by_key(schema)
    for key, value in data.items():  # only a value sent can break a convention
        # not a field: the unknown-field check names it
        field, text, scalar = fields_by_key.get(key, NOT_A_FIELD)
        if text:
            if isinstance(value, str) and not value.strip():
                if field.required:
                    problems[key] = [BLANK]
                elif field.allow_none:
                    cleaned[key] = None
                elif isinstance(field, Text):
                    del cleaned[key]
        elif scalar:
            problem = json_scalar_problem(field, value)
            if problem:
                problems[key] = problem
    return cleaned, problems


NOT_A_FIELD = (None, False, False)
# what json_scalar_problem looks at
SCALAR_FIELDS = (ma.fields.Boolean, ma.fields.Number, ma.fields.List)


def _fields_by_key(schema: ma.Schema) -> dict[str, tuple[ma.fields.Field, bool, bool]]:
    """The schema's load fields by the key a body sends them under, each with whether it is a string
    field and whether json_scalar_problem applies to it; built once per schema instance."""
    by_key = schema.__dict__.get("_hirekit_fields_by_key")
    if by_key is None:
        by_key = {
            (field.data_key if field.data_key is not None else name): (
                field,
                isinstance(field, ma.fields.String),
                isinstance(field, SCALAR_FIELDS),
            )
            for name, field in schema.load_fields.items()
        }
        schema.__dict__["_hirekit_fields_by_key"] = by_key
    return by_key


def json_scalar_problem(field: ma.fields.Field, value) -> list[str] | dict | None:
    """Why a JSON value does not fit a number or boolean field (also inside a list), or None; null
    is the field's call."""
    if value is None or value is missing:
        return None
    if isinstance(field, ma.fields.Boolean):
        return None if isinstance(value, bool) else ["Not a valid boolean: send true or false."]
    if isinstance(field, ma.fields.Number):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return [
                f"Not a valid {'integer' if isinstance(field, ma.fields.Integer) else 'number'}: "
                "send a JSON number, not a string."
            ]
        if (
            isinstance(field, ma.fields.Integer)
            and isinstance(value, float)
            and not value.is_integer()
        ):
            return ["Not a valid integer: send a whole number."]
        return None
    if isinstance(field, ma.fields.List) and isinstance(value, list):
        items = {
            index: problem
            for index, item in enumerate(value)
            if (problem := json_scalar_problem(field.inner, item))
        }
        return items or None
    return None


def load_json(schema: ma.Schema, data, load=None, **kwargs):
    """`schema.load(data)` of a JSON object under json_conventions; their problems join the schema's
    own in one 422."""
    load = load or schema.load
    if not isinstance(data, dict):
        return load(data, **kwargs)
    cleaned, problems = json_conventions(schema, data)
    try:
        loaded = load(cleaned, **kwargs)
    except ma.ValidationError as error:
        if problems and isinstance(error.messages, dict):
            raise ma.ValidationError({**error.messages, **problems}) from None
        raise
    if problems:
        raise ma.ValidationError(problems)
    return loaded


class StrictSchema(Schema):
    """Request bodies are exact: unknown fields are rejected (422 naming them), and a JSON object
    follows json_conventions. webargs hands a query string or form over as its MultiDictProxy, not a
    dict: that keeps its text forms ("3", "true")."""

    class Meta:
        unknown = ma.RAISE

    def load(self, data, *, many=None, partial=None, unknown=None):
        if many or (many is None and self.many):
            return super().load(data, many=many, partial=partial, unknown=unknown)
        return load_json(self, data, super().load, partial=partial, unknown=unknown)


class OnlySentFields(ma.Schema):
    """PATCH bodies: keep only the fields the client sent, so the others are left alone."""

    @ma.post_load(pass_original=True)
    def only_sent(self, data, original_data, **kwargs):
        sent = set(original_data) if isinstance(original_data, dict) else set()
        attributes = {
            (field.attribute or name)
            for name, field in self.fields.items()
            if (field.data_key or name) in sent
        }
        return {key: value for key, value in data.items() if key in attributes}
