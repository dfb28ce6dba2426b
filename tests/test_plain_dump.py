"""Every answer is dumped by app.http.plain_dump's plan of its schema: it must make exactly the body
marshmallow's own dump makes (keys, order, values), for every kind of field and every answer
schema, on records read as model instances and as list rows."""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from types import SimpleNamespace

import marshmallow as ma
import pytest

from app.http.api import FullAnswerSchema, UtcDateTime
from app.http.fields import Text
from tests.factories import create_application, create_candidate, create_job


def marshmallow_dump(schema: ma.Schema, obj, many=None):
    """The body marshmallow's Schema.dump makes, with no plan."""
    return ma.Schema.dump(schema, obj, many=many)


def same_dump(schema: ma.Schema, obj, many=None):
    plain, reference = schema.dump(obj, many=many), marshmallow_dump(schema, obj, many=many)
    assert plain == reference
    items = zip(plain, reference) if many else [(plain, reference)]
    for ours, theirs in items:
        assert list(ours) == list(theirs), "keys in another order"
    return plain


class Shouted(ma.fields.String):
    """A custom field that changes how values are dumped, without a plain_value."""

    def _serialize(self, value, attr, obj, **kwargs):
        return None if value is None else value.upper()


class Whole(ma.fields.Field):
    """A field that reads the whole record (a custom get_value)."""

    def get_value(self, obj, attr, accessor=None, default=ma.missing):
        return obj

    def _serialize(self, value, attr, obj, **kwargs):
        return sorted(vars(value)) if not isinstance(value, dict) else sorted(value)


class Inner(FullAnswerSchema):
    id = ma.fields.UUID()
    label = ma.fields.String(allow_none=True)


class Kinds(FullAnswerSchema):
    text = ma.fields.String()
    narrow = Text()
    email = ma.fields.Email()
    id = ma.fields.UUID()
    count = ma.fields.Integer()
    count_text = ma.fields.Integer(as_string=True)
    ratio = ma.fields.Float()
    price = ma.fields.Decimal(places=2)
    flag = ma.fields.Boolean()
    raw = ma.fields.Raw()
    renamed = ma.fields.String(data_key="desc")
    aliased = ma.fields.String(attribute="source")
    dotted = ma.fields.String(attribute="inner.label")
    when = UtcDateTime()
    default = ma.fields.String(dump_default="fallback")
    default_factory = ma.fields.Integer(dump_default=lambda: 7)
    absent = ma.fields.String()
    shouted = Shouted()
    whole = Whole()
    computed = ma.fields.Function(lambda obj: "computed")
    inner = ma.fields.Nested(Inner)
    inners = ma.fields.Nested(Inner, many=True)
    tags = ma.fields.List(ma.fields.String())
    only_label = ma.fields.Nested(Inner, only=("label",))
    loaded_only = ma.fields.String(load_only=True)


def kinds_values(**changes) -> dict:
    inner = {"id": uuid.uuid4(), "label": "in"}
    values = {
        "text": "plain",
        "narrow": "narrow",
        "email": "a@example.com",
        "id": uuid.uuid4(),
        "count": 4,
        "count_text": 5,
        "ratio": 0.5,
        "price": decimal.Decimal("3.14159"),
        "flag": True,
        "raw": {"any": [1, 2]},
        "renamed": "renamed",
        "source": "aliased",
        "when": dt.datetime(2026, 11, 30, 7, 1, 2, 345678),
        "shouted": "loud",
        "inner": inner,
        "inners": [inner, {"id": str(uuid.uuid4()), "label": None}],
        "tags": ["a", "b"],
        "only_label": inner,
        "loaded_only": "never answered",
    }
    values.update(changes)
    return values


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {name: None for name in kinds_values() if name not in ("inners", "tags")},
        {"count": "12", "ratio": 2, "id": "7f8b43a4-50c5-4a4e-a41a-2bba1c3a8d9b", "text": 42},
    ],
    ids=["values", "nulls", "coerced"],
)
def test_every_kind_of_field_dumps_as_marshmallow_does(changes):
    schema = Kinds()
    values = kinds_values(**changes)
    assert "desc" in same_dump(schema, values)
    record = SimpleNamespace(**values)
    record.inner = SimpleNamespace(**values["inner"]) if values["inner"] else None
    dumped = same_dump(schema, record)
    assert dumped["default"] == "fallback" and dumped["default_factory"] == 7
    assert "absent" not in dumped and "loaded_only" not in dumped
    same_dump(schema, [values, values], many=True)
    same_dump(Kinds(many=True), [values])


class Plain(FullAnswerSchema):
    """Only fields the plan dumps itself: a list row carrying all of them takes one dict display."""

    id = ma.fields.UUID()
    title = ma.fields.String()
    count = ma.fields.Integer()
    flag = ma.fields.Boolean()
    when = UtcDateTime()
    renamed = ma.fields.String(data_key="desc")
    fallback = ma.fields.String(dump_default="fallback")
    inner = ma.fields.Nested(Inner, allow_none=True)


@pytest.mark.parametrize(
    "row",
    [
        {
            "id": uuid.uuid4(),
            "title": "t",
            "count": 2,
            "flag": False,
            "when": dt.datetime.now(),
            "renamed": "r",
            "fallback": None,
            "inner": {"id": uuid.uuid4(), "label": "x"},
        },
        {
            "id": None,
            "title": None,
            "count": None,
            "flag": None,
            "when": None,
            "renamed": None,
            "fallback": "kept",
            "inner": None,
            "extra": "not answered",
        },
        {"id": "7f8b43a4-50c5-4a4e-a41a-2bba1c3a8d9b", "title": 5, "count": "3"},
        {},
    ],
    ids=["whole", "nulls and more", "part", "empty"],
)
def test_rows_with_every_attribute_or_some_dump_as_marshmallow_does(row):
    dumped = same_dump(Plain(), row)
    assert dumped.get("fallback") == row.get("fallback", "fallback")
    assert "extra" not in dumped


def test_a_field_class_that_changes_dumping_is_dumped_by_marshmallow():
    """A new field type needs nothing from the plan to be right: without plain_value, its own
    _serialize runs."""
    dumped = Kinds().dump(kinds_values())
    assert dumped["shouted"] == "LOUD" and dumped["computed"] == "computed"
    assert dumped["only_label"] == {"label": "in"}


def answer_schemas() -> list[type[FullAnswerSchema]]:
    found, pending = [], list(FullAnswerSchema.__subclasses__())
    while pending:
        schema = pending.pop()
        found.append(schema)
        pending += schema.__subclasses__()
    return [schema for schema in found if schema.__module__.startswith(("app.", "plugins."))]


def sample(field: ma.fields.Field, depth: int = 0):
    """A value of the field's type, as a stored record would carry it."""
    if isinstance(field, ma.fields.Nested):
        value = sample_record(type(field.schema), depth + 1) if depth < 3 else None
        return [value] if field.many and value is not None else value
    if isinstance(field, ma.fields.List):
        return [sample(field.inner, depth)]
    if isinstance(field, ma.fields.UUID):
        return uuid.uuid4()
    if isinstance(field, ma.fields.DateTime):
        return dt.datetime(2026, 11, 30, 7, 1, 2, 345678)
    if isinstance(field, ma.fields.Boolean):
        return False
    if isinstance(field, (ma.fields.Integer, ma.fields.Float, ma.fields.Decimal)):
        return 3
    if isinstance(field, ma.fields.Dict):
        return {"key": "value"}
    return "text"


def sample_record(schema_class: type[ma.Schema], depth: int = 0) -> dict:
    schema = schema_class()
    return {
        (field.attribute or name).split(".")[0]: sample(field, depth)
        for name, field in schema.dump_fields.items()
    }


def test_every_answer_schema_dumps_as_marshmallow_does(app):
    schemas = answer_schemas()
    assert len(schemas) >= 10, [schema.__name__ for schema in schemas]
    for schema_class in schemas:
        schema = schema_class()
        record = sample_record(schema_class)
        try:
            reference = marshmallow_dump(schema, record)
        except Exception as error:  # a Function field reading what a sample does not carry
            with pytest.raises(type(error)):
                schema.dump(record)
            continue
        assert schema.dump(record) == reference, schema_class.__name__
        nulls = {name: None for name in record}
        assert schema.dump(nulls) == marshmallow_dump(schema, nulls), schema_class.__name__


def test_stored_records_and_list_rows_dump_as_marshmallow_does(app, client, tenant_a):
    """Model instances (GET by id) and list rows (dicts, with nested summaries) of the record
    families, on the database the suite runs on."""
    from app.data.db import database
    from plugins.applications import services as applications
    from plugins.applications.schemas import ApplicationSchema
    from plugins.candidates import services as candidates
    from plugins.candidates.schemas import CandidateSchema
    from plugins.jobs import services as jobs
    from plugins.jobs.schemas import JobSchema

    application = create_application(client, tenant_a, file="https://ats.example.com/r/1")
    create_job(client, tenant_a, city=None, min_pay_rate=50, max_pay_rate=70)
    create_candidate(client, tenant_a, last_name=None)
    families = [
        (JobSchema, jobs.get_job, jobs.list_jobs),
        (CandidateSchema, candidates.get_candidate, candidates.list_candidates),
        (ApplicationSchema, applications.get_application, applications.list_applications),
    ]
    with app.app_context(), database.connection_context():
        for schema_class, get, list_all in families:
            schema = schema_class()
            for mode in ({"page": 1, "size": 50}, {"size": 50, "cursor": ""}):
                rows = list_all(tenant_a.id, **mode)["data"]
                assert rows
                same_dump(schema, rows, many=True)
                for row in rows:
                    same_dump(schema, get(tenant_a.id, row["id"] if type(row) is dict else row.id))
        stored = applications.get_application(tenant_a.id, application["id"])
        dumped = same_dump(ApplicationSchema(), stored)
        assert dumped["resume"]["reference"] == "https://ats.example.com/r/1"
