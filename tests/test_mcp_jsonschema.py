"""app.http.jsonschema: marshmallow schemas become JSON Schemas that accept and refuse what
marshmallow does."""

from __future__ import annotations

import jsonschema
import marshmallow as ma
import pytest

from app.http.api import RecordSchema
from app.http.fields import StrictSchema, Text
from app.http.jsonschema import DUMP, LOAD, schema_to_json_schema


class AddressSchema(ma.Schema):
    city = ma.fields.String(required=True)
    zip = ma.fields.String(allow_none=True, validate=ma.validate.Regexp(r"^\d{5}$"))


class SampleSchema(StrictSchema):
    """A sample body."""

    name = Text(required=True, max_length=20, metadata={"description": "Who", "example": "Ada"})
    age = ma.fields.Integer(validate=ma.validate.Range(min=0, max=130, max_inclusive=False))
    score = ma.fields.Float(allow_none=True, validate=ma.validate.Range(min=0, min_inclusive=False))
    stage = ma.fields.String(
        validate=ma.validate.OneOf(["ACTIVE", "PASSIVE"]), load_default="ACTIVE"
    )
    tags = ma.fields.List(ma.fields.String(), validate=ma.validate.Length(min=1, max=3))
    home = ma.fields.Nested(AddressSchema)
    past = ma.fields.Nested(AddressSchema, many=True)
    extra = ma.fields.Dict(keys=ma.fields.String(), values=ma.fields.Integer())
    email = ma.fields.Email(data_key="email_address")
    when = ma.fields.DateTime()
    anything = ma.fields.Raw()
    secret = ma.fields.String(load_only=True)
    created = ma.fields.String(dump_only=True)


@pytest.fixture(scope="module")
def load_schema():
    schema = schema_to_json_schema(SampleSchema, mode=LOAD)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def test_load_side_lists_required_fields_and_refuses_unknown_ones(load_schema):
    assert load_schema["required"] == ["name"]
    assert load_schema["additionalProperties"] is False
    assert load_schema["description"] == "A sample body."
    assert "created" not in load_schema["properties"] and "secret" in load_schema["properties"]
    assert "email_address" in load_schema["properties"] and "email" not in load_schema["properties"]


def test_validators_become_bounds(load_schema):
    props = load_schema["properties"]
    assert props["name"] == {
        "type": "string",
        "minLength": 1,
        "maxLength": 20,
        "description": "Who",
        "examples": ["Ada"],
    }
    assert props["age"] == {"type": "integer", "minimum": 0, "exclusiveMaximum": 130}
    assert props["score"] == {"type": ["number", "null"], "exclusiveMinimum": 0}
    assert props["stage"] == {"type": "string", "enum": ["ACTIVE", "PASSIVE"], "default": "ACTIVE"}
    assert props["tags"] == {
        "type": "array",
        "items": {"type": "string"},
        "minItems": 1,
        "maxItems": 3,
    }
    assert (
        props["home"]["required"] == ["city"]
        and props["home"]["properties"]["zip"]["pattern"] == r"^\d{5}$"
    )
    assert props["past"]["type"] == "array" and props["past"]["items"]["type"] == "object"
    assert props["extra"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert props["when"]["format"] == "date-time" and props["anything"] == {}


@pytest.mark.parametrize(
    "body",
    [
        {"name": "Ada"},
        {
            "name": "Ada",
            "age": 36,
            "score": None,
            "stage": "PASSIVE",
            "tags": ["x"],
            "home": {"city": "London", "zip": "12345"},
            "past": [{"city": "Paris"}],
            "extra": {"a": 1},
            "email_address": "ada@example.com",
            "anything": [1, "two"],
        },
    ],
)
def test_bodies_marshmallow_accepts_validate(load_schema, body):
    SampleSchema().load(body)
    jsonschema.validate(body, load_schema)


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"name": ""},
        {"name": "Ada", "age": 130},
        {"name": "Ada", "score": 0},
        {"name": "Ada", "stage": "active"},
        {"name": "Ada", "tags": []},
        {"name": "Ada", "home": {"zip": "12345"}},
        {"name": "Ada", "home": {"city": "L", "zip": "1"}},
        {"name": "Ada", "extra": {"a": "one"}},
        {"name": "Ada", "colour": "red"},
        {"name": "Ada", "created": "now"},
    ],
)
def test_bodies_marshmallow_refuses_are_invalid(load_schema, body):
    with pytest.raises(ma.ValidationError):
        SampleSchema().load(body)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(body, load_schema)


class RecordSample(RecordSchema):
    title = ma.fields.String(required=True)
    note = ma.fields.String()
    secret = ma.fields.String(load_only=True)


def test_dump_side_describes_records_with_nullable_optional_fields():
    schema = schema_to_json_schema(RecordSample, mode=DUMP)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert "secret" not in schema["properties"] and "additionalProperties" not in schema
    assert schema["properties"]["id"] == {"type": ["string", "null"], "format": "uuid"}
    assert schema["properties"]["title"] == {"type": "string"}
    jsonschema.validate(
        {
            "id": "6f1c1c1e-0000-4000-8000-000000000000",
            "title": "t",
            "note": None,
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": None,
        },
        schema,
    )


def test_a_recursive_schema_terminates():
    class Node(ma.Schema):
        name = ma.fields.String()
        children = ma.fields.List(ma.fields.Nested(lambda: Node()))

    schema = schema_to_json_schema(Node)
    assert schema["properties"]["children"]["items"] == {"type": "object"}


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError):
        schema_to_json_schema(SampleSchema, mode="sideways")
