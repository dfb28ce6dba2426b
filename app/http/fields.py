"""Marshmallow fields shared by the families: non-blank text, ISO 8601 date strings, trimmed optional strings, bounded
integers, the JSON body conventions (blank is absent, exact scalars), and the base Schema whose dump skips
marshmallow's per-field accessor chain."""

from __future__ import annotations

import datetime as dt

import marshmallow as ma
from marshmallow.utils import missing

BLANK = "Must not be blank."


class Schema(ma.Schema):
    """marshmallow's Schema with a direct dump path: for a plain field (no dump_default, no dotted attribute, no custom
    `serialize` or `get_value`) of a dict or an attribute object it reads the value itself and calls the field's `_serialize`, which
    is what `Field.serialize` ends up doing after three layers of generic lookups (a third of a record's dump time).
    Anything else takes marshmallow's own path; the output is the same (tests/test_fast_dump.py)."""

    def _dump_plan(self) -> list[tuple[str, str, str, ma.fields.Field, bool]]:
        plan = self.__dict__.get("_hirekit_dump_plan")
        if plan is None:
            plain_accessor = type(self).get_attribute is ma.Schema.get_attribute
            plan = []
            for attr_name, field in self.dump_fields.items():
                attribute = field.attribute or attr_name
                direct = (plain_accessor and field._CHECK_ATTRIBUTE and field.dump_default is missing
                          and "." not in attribute and type(field).serialize is ma.fields.Field.serialize
                          and type(field).get_value is ma.fields.Field.get_value)
                key = field.data_key if field.data_key is not None else attr_name
                plan.append((attr_name, attribute, key, field, direct))
            self.__dict__["_hirekit_dump_plan"] = plan
        return plan

    def _serialize(self, obj, *, many: bool = False):
        if many and obj is not None:
            return [self._serialize(item) for item in obj]
        if type(obj) is dict:
            def read(name, default, _obj=obj):  # marshmallow falls back to getattr for a missing key (dict.items...)
                value = _obj.get(name, default)
                return getattr(_obj, name, default) if value is default else value
        elif obj is not None and not hasattr(obj, "__getitem__"):  # as marshmallow decides between obj[key] and getattr
            def read(name, default, _obj=obj):
                return getattr(_obj, name, default)
        else:
            return super()._serialize(obj)
        result = self.dict_class()
        accessor = self.get_attribute
        for attr_name, attribute, key, field, direct in self._dump_plan():
            if direct:
                value = read(attribute, missing)
                if value is missing:
                    continue
                result[key] = field._serialize(value, attr_name, obj)
            else:
                value = field.serialize(attr_name, obj, accessor=accessor)
                if value is not missing:
                    result[key] = value
        return result


class Text(ma.fields.String):
    """A string that is trimmed and never blank; max_length bounds what is sent, as OpenAPI documents it. A blank value
    for an optional Text in a body never gets here: the JSON body conventions make it absent (see json_conventions)."""

    default_error_messages = {"blank": BLANK}

    def __init__(self, *args, max_length: int | None = None, **kwargs):
        validators = list(kwargs.pop("validate", None) or [])
        minimum = 1 if kwargs.get("required") else None  # documented (minLength); an optional blank is absent instead
        self.bounds = None
        if minimum is not None or max_length is not None:
            self.bounds = ma.validate.Length(min=minimum, max=max_length)
            validators.append(self.bounds)
        super().__init__(*args, validate=validators, **kwargs)
        self.max_length = max_length

    def _validate(self, value):
        """The Length validator documents what _deserialize already enforced (trimmed, not blank, within max_length),
        so a Text with no other validator has nothing left to check."""
        if self.validators == [self.bounds]:
            return
        super()._validate(value)

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


PG_INTEGER_MAX = 2**31 - 1  # PostgreSQL `integer`, what peewee's IntegerField makes: the narrowest integer column
MINUTES_MAX = 30 * 24 * 60  # 43,200: the longest delay, interval or notice in minutes a schedule setting takes (30 days)


class BoundedInteger(ma.fields.Integer):
    """An integer with both bounds, each inclusive: every integer a request sends has an upper bound, or a value past
    the database column's range (or datetime's, added as minutes) fails in the driver as a 500 instead of a 422.
    The Range validator is what the OpenAPI document (apispec) and the MCP inputSchemas (app.http.jsonschema) read as
    minimum/maximum, so clients and fuzzers see the bound. The maximum must fit a PostgreSQL integer column.
    A number with a fraction (1.5) is refused rather than truncated, as JSON Schema's "integer" means."""

    def __init__(self, minimum: int, maximum: int, **kwargs):
        if not minimum <= maximum <= PG_INTEGER_MAX:
            raise ValueError(f"bounds {minimum}..{maximum} must be ordered and fit a PostgreSQL integer ({PG_INTEGER_MAX})")
        validators = kwargs.pop("validate", None) or []
        validators = [validators] if callable(validators) else list(validators)
        super().__init__(validate=[ma.validate.Range(min=minimum, max=maximum), *validators], **kwargs)
        self.minimum, self.maximum = minimum, maximum

    def _validated(self, value) -> int:
        if isinstance(value, float) and not value.is_integer():
            raise self.make_error("invalid", input=value)
        return super()._validated(value)


class StrictBoolean(ma.fields.Boolean):
    """true or false (and "true"/"false", as a query string sends them): marshmallow's Boolean also takes 0, 1, "yes",
    "on" and the like, which a JSON body declaring a boolean should refuse (422) rather than guess at."""

    def _deserialize(self, value, attr, data, **kwargs):
        if value is True or value is False:
            return value
        if isinstance(value, str) and value in ("true", "false"):
            return value == "true"
        raise self.make_error("invalid", input=value)


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


def json_conventions(schema: ma.Schema, data: dict) -> tuple[dict, dict]:
    """A JSON object's values as the schema should read them, and what breaks the conventions of every JSON body:
    a blank string ("" or spaces) on an optional string field is absent (null where the field takes null: ATS payloads
    send "" for an empty field) and on a required one "Must not be blank."; a number or boolean field takes only a JSON
    number or boolean (not "3", not 2.7 for an integer, not "yes" or 1 for a boolean). Query strings and forms are text
    and keep their text forms: only JSON objects come here."""
    cleaned, problems = dict(data), {}
    fields_by_key = _fields_by_key(schema)
    for key, value in data.items():  # only a value sent can break a convention
        field, text, scalar = fields_by_key.get(key, NOT_A_FIELD)  # not a field: the unknown-field check names it
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
SCALAR_FIELDS = (ma.fields.Boolean, ma.fields.Number, ma.fields.List)  # what json_scalar_problem looks at


def _fields_by_key(schema: ma.Schema) -> dict[str, tuple[ma.fields.Field, bool, bool]]:
    """The schema's load fields by the key a body sends them under, each with whether it is a string field and
    whether json_scalar_problem applies to it; built once per schema instance."""
    by_key = schema.__dict__.get("_hirekit_fields_by_key")
    if by_key is None:
        by_key = {(field.data_key if field.data_key is not None else name):
                  (field, isinstance(field, ma.fields.String), isinstance(field, SCALAR_FIELDS))
                  for name, field in schema.load_fields.items()}
        schema.__dict__["_hirekit_fields_by_key"] = by_key
    return by_key


def json_scalar_problem(field: ma.fields.Field, value) -> list[str] | dict | None:
    """Why a JSON value does not fit a number or boolean field (also inside a list), or None; null is the field's call."""
    if value is None or value is missing:
        return None
    if isinstance(field, ma.fields.Boolean):
        return None if isinstance(value, bool) else ["Not a valid boolean: send true or false."]
    if isinstance(field, ma.fields.Number):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return [f"Not a valid {'integer' if isinstance(field, ma.fields.Integer) else 'number'}: send a JSON number, not a string."]
        if isinstance(field, ma.fields.Integer) and isinstance(value, float) and not value.is_integer():
            return ["Not a valid integer: send a whole number."]
        return None
    if isinstance(field, ma.fields.List) and isinstance(value, list):
        items = {index: problem for index, item in enumerate(value) if (problem := json_scalar_problem(field.inner, item))}
        return items or None
    return None


def load_json(schema: ma.Schema, data, load=None, **kwargs):
    """`schema.load(data)` of a JSON object under json_conventions; their problems join the schema's own in one 422."""
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
    """Request bodies are exact: unknown fields are rejected (422 naming them), and a JSON object follows
    json_conventions. webargs hands a query string or form over as its MultiDictProxy, not a dict: that keeps its
    text forms ("3", "true")."""

    class Meta:
        unknown = ma.RAISE

    def load(self, data, *, many=None, partial=None, unknown=None):
        if many or (many is None and self.many):
            return super().load(data, many=many, partial=partial, unknown=unknown)
        return load_json(self, data, super().load, partial=partial, unknown=unknown)

    def _deserialize(self, data, *, error_store, many=False, partial=None, unknown=ma.RAISE, index=None):
        """marshmallow's field loop, shortened for a whole, valid object (a create body, a batch's item): each field's
        `deserialize` called directly, without the loop's per-field closure and error bookkeeping. Anything else (a
        partial load, another unknown policy, an unknown key, a dotted attribute, any field failing) takes
        marshmallow's own loop, which then collects every field's messages: the result and the errors are the same."""
        plan = None if (many or partial is not None or unknown != ma.RAISE or type(data) is not dict) else self._load_plan()
        if plan is None or not plan[1].issuperset(data):
            return super()._deserialize(data, error_store=error_store, many=many, partial=partial, unknown=unknown,
                                        index=index)
        loaded = self.dict_class()
        try:
            for key, attribute, deserialize, default in plan[0]:
                value = data.get(key, missing)
                value = default if value is missing and default is not NO_DEFAULT else deserialize(value, key, data)
                if value is not missing:
                    loaded[attribute] = value
        except ma.ValidationError:
            return super()._deserialize(data, error_store=error_store, many=many, partial=partial, unknown=unknown,
                                        index=index)
        return loaded

    def _load_plan(self):
        """(key, attribute, the field's deserialize, what it loads when the key is absent) per load field and the set
        of keys, once per instance; None when an attribute is dotted (marshmallow nests those). The absent value is
        the field's load_default when that is a constant of an optional field (what `deserialize(missing)` answers),
        else NO_DEFAULT: the field's own deserialize decides."""
        if "_hirekit_load_plan" not in self.__dict__:
            entries = [(field.data_key if field.data_key is not None else name, field.attribute or name, field.deserialize,
                        NO_DEFAULT if field.required or callable(field.load_default) else field.load_default)
                       for name, field in self.load_fields.items()]
            plan = None if any("." in entry[1] for entry in entries) else (entries, {entry[0] for entry in entries})
            self.__dict__["_hirekit_load_plan"] = plan
        return self.__dict__["_hirekit_load_plan"]


NO_DEFAULT = object()


class OnlySentFields(ma.Schema):
    """PATCH bodies: keep only the fields the client sent, so the others are left alone."""

    @ma.post_load(pass_original=True)
    def only_sent(self, data, original_data, **kwargs):
        sent = set(original_data) if isinstance(original_data, dict) else set()
        attributes = {(field.attribute or name) for name, field in self.fields.items() if (field.data_key or name) in sent}
        return {key: value for key, value in data.items() if key in attributes}
