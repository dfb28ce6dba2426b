"""The records helpers that write their SQL from a model's names (app.data.records: select_rows,
first_row, inserted) read and write what peewee's query builder would, on both databases."""

from __future__ import annotations


from app.data.db import database
from app.data.events import Event
from app.data.records import first_row, inserted, select_rows
from plugins.candidates.models import Candidate
from plugins.jobs.models import Job


def test_an_inserted_record_reads_back_as_model_create_writes_it(app, tenant_a):
    with app.app_context(), database.connection_context():
        ours = inserted(
            Job, tenant=tenant_a.id, number=901, source_id="ours", title="Nurse", min_pay_rate=50
        )
        theirs = Job.create(
            tenant=tenant_a.id, number=902, source_id="theirs", title="Nurse", min_pay_rate=50
        )
        stored = {job.source_id: job for job in Job.select().where(Job.tenant == tenant_a.id)}
        skip = {"id", "number", "source_id", "created_at", "updated_at"}
        for field in Job._meta.sorted_fields:
            if field.name not in skip:
                assert getattr(stored["ours"], field.name) == getattr(stored["theirs"], field.name)
        assert stored["ours"].id == ours.id and stored["theirs"].id == theirs.id
        assert stored["ours"].created_at == ours.created_at


def test_a_key_the_database_assigns_is_left_to_it(app, tenant_a):
    with app.app_context(), database.connection_context():
        first = inserted(Event, tenant=tenant_a.id, type="job_created", payload={"n": 1})
        second = inserted(Event, tenant=tenant_a.id, type="job_created", payload={"n": 2})
        assert first.sequence is None
        stored = list(Event.select().where(Event.tenant == tenant_a.id).order_by(Event.sequence))
        assert [event.event_id for event in stored] == [first.event_id, second.event_id]
        assert stored[0].sequence < stored[1].sequence and stored[1].payload == {"n": 2}


def test_rows_are_selected_by_every_equality_with_the_columns_asked(app, tenant_a, tenant_b):
    with app.app_context(), database.connection_context():
        for tenant in (tenant_a, tenant_b):
            for number, status in ((1, "open"), (2, "closed")):
                inserted(
                    Job,
                    tenant=tenant.id,
                    number=number,
                    source_id=f"j{number}",
                    title="T",
                    status=status,
                )
        rows = list(select_rows(Job, {Job.tenant: tenant_a.id, Job.status: "open"}, (Job.number,)))
        assert [row.number for row in rows] == [1]
        assert rows[0].title is None  # not selected
        assert first_row(Job, {Job.tenant: tenant_b.id, Job.number: 2}).source_id == "j2"
        assert first_row(Job, {Job.tenant: tenant_b.id, Job.number: 3}) is None
        lock = " FOR SHARE" if database.for_update else ""
        with database.atomic():
            held = first_row(Candidate, {Candidate.tenant: tenant_a.id}, (Candidate.id,), lock=lock)
        assert held is None
