"""app.http.fields.Schema's direct dump path answers exactly what marshmallow's own dump answers."""

import datetime as dt
import uuid
from types import SimpleNamespace

import marshmallow as ma
import pytest

from app.http.api import RecordSchema, page_schema
from app.http.fields import Schema


class Inner(Schema):
    name = ma.fields.String()


class WholeObject(ma.fields.Field):
    """A field that reads the whole object, as app.files.fields.ResumeField does."""

    def get_value(self, obj, attr, accessor=None, default=ma.missing):
        return obj

    def _serialize(self, value, attr, obj, **kwargs):
        return "whole" if value is not None else None


class Sample(RecordSchema):
    title = ma.fields.String()
    count = ma.fields.Integer()
    ratio = ma.fields.Float(allow_none=True)
    renamed = ma.fields.String(data_key="desc", attribute="description")
    dotted = ma.fields.String(attribute="owner.name")
    defaulted = ma.fields.String(dump_default="fallback")
    computed = ma.fields.Method("shout")
    function = ma.fields.Function(lambda obj: "f")
    nested = ma.fields.Nested(Inner, allow_none=True)
    items = ma.fields.List(ma.fields.Nested(Inner))
    whole = WholeObject()

    def shout(self, obj):
        value = obj["title"] if isinstance(obj, dict) else obj.title
        return value.upper()


def _reference(schema, obj, many):
    """marshmallow's own serialization of every level (the nested schemas too)."""
    original = Schema._serialize
    try:
        Schema._serialize = ma.Schema._serialize
        return schema.dump(obj, many=many)
    finally:
        Schema._serialize = original


RECORD = {
    "id": uuid.UUID("29a82abf-688f-4977-a22a-45dafae0cd8e"),
    "created_at": dt.datetime(2026, 1, 2, 3, 4, 5),
    "updated_at": dt.datetime(2026, 1, 2, 3, 4, 6, 789),
    "title": "Nurse",
    "count": 3,
    "ratio": None,
    "description": "ICU",
    "owner": {"name": "Rita"},
    "nested": {"name": "n"},
    "items": [{"name": "a"}, {"name": "b"}],
}


@pytest.mark.parametrize("obj", [
    RECORD,
    {"title": "sparse", "items": []},  # missing keys are left out, dump_default fills its field
    SimpleNamespace(**{**RECORD, "owner": SimpleNamespace(name="Rita"), "nested": None}),
    SimpleNamespace(title="only a title"),
], ids=["dict", "sparse dict", "object", "sparse object"])
def test_dump_matches_marshmallow(obj):
    schema = Sample()
    assert schema.dump(obj) == _reference(schema, obj, False)
    assert schema.dump(obj)["whole"] == "whole"


def test_many_and_only_and_page_wrappers_match_marshmallow():
    records = [RECORD, {**RECORD, "title": "Second"}]
    assert Sample(many=True).dump(records) == _reference(Sample(many=True), records, True)
    assert Sample(only=("title", "count")).dump(RECORD) == {"title": "Nurse", "count": 3}
    page = {"data": records, "page": 1, "size": 2, "total": 2, "total_pages": 1}
    assert page_schema(Sample)().dump(page) == _reference(page_schema(Sample)(), page, False)


def test_a_stored_job_dumps_the_same_either_way(app, make_tenant):
    from app.data.db import database
    from plugins.jobs.models import Job
    from plugins.jobs.schemas import JobSchema
    from tests.factories import job_body

    tenant = make_tenant("dumper")
    job_id = app.test_client().post("/v1/jobs", json=job_body(), headers=tenant.headers).json["id"]
    with app.app_context(), database.connection_context():
        job = Job.get_by_id(job_id)
        fast = JobSchema().dump(job)
        assert fast == _reference(JobSchema(), job, False)
        assert fast["desc"] and fast["id"] == job_id and fast["created_at"].endswith("Z")
