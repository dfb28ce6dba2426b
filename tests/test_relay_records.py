"""The relay's record writer: live calls' records written behind their turns, the latest of each
call in one transaction per interval, never over a call that has ended, kept when the database is
away, and written before the process stops."""

from __future__ import annotations

import pytest

from app.data.db import database
from plugins.calls.conversation.dialogue import write_live_record
from plugins.calls.models import IN_PROGRESS, Call
from plugins.calls.relay.records import RecordWriter
from tests.call_factories import application_for, instant_call
from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

NEVER = 3600.0  # an interval no test waits for: flushes are the test's own


def transcript(*texts: str) -> dict:
    return {Call.transcript: [{"speaker": "agent", "text": text} for text in texts]}


@pytest.fixture
def call_id(app, tenant_a):
    """A call live on the line, its record empty (the simulated provider's conversation undone)."""
    client = app.test_client()
    call = instant_call(client, tenant_a, application_for(client, tenant_a)).json
    with app.app_context(), database.connection_context():
        Call.update(status=IN_PROGRESS, end_reason=None, transcript=[]).where(
            Call.id == call["id"]
        ).execute()
    return call["id"]


def stored(app, call_id) -> list[str]:
    with app.app_context(), database.connection_context():
        return [turn["text"] for turn in Call.get_by_id(call_id).transcript]


def test_the_latest_record_of_each_call_is_written_once_per_flush(app, call_id):
    writes = []

    def write(call, fields):
        writes.append(call)
        write_live_record(call, fields)

    writer = RecordWriter(app, write=write, interval=NEVER)
    writer.save(call_id, transcript("Hello"))
    writer.save(call_id, transcript("Hello", "Is now a good time?"))
    assert stored(app, call_id) == []  # nothing is written before the flush
    assert writer.flush() == 1
    assert writes == [call_id]
    assert stored(app, call_id) == ["Hello", "Is now a good time?"]
    assert writer.flush() == 0  # nothing pending: no transaction at all


def test_a_record_written_after_the_call_ended_changes_nothing(app, call_id):
    writer = RecordWriter(app, write=write_live_record, interval=NEVER)
    writer.save(call_id, transcript("Hello", "a turn the end already holds"))
    with app.app_context(), database.connection_context():
        Call.update(end_reason="completed", transcript=[{"speaker": "agent", "text": "Goodbye"}]).where(
            Call.id == call_id
        ).execute()
    writer.flush()
    assert stored(app, call_id) == ["Goodbye"]


def test_records_stay_pending_while_the_database_refuses_them(app, call_id):
    failing = {"on": True}

    def write(call, fields):
        if failing["on"]:
            raise RuntimeError("the database went away")
        write_live_record(call, fields)

    writer = RecordWriter(app, write=write, interval=NEVER)
    writer.save(call_id, transcript("Hello"))
    assert writer.flush() == 0 and writer.pending() == 1
    writer.save(call_id, transcript("Hello", "a newer turn"))  # a newer save replaces the kept one
    failing["on"] = False
    assert writer.flush() == 1 and writer.pending() == 0
    assert stored(app, call_id) == ["Hello", "a newer turn"]


def test_stopping_writes_what_is_pending(app, call_id):
    writer = RecordWriter(app, write=write_live_record, interval=NEVER)
    writer.start()
    writer.save(call_id, transcript("Hello"))
    writer.stop()
    assert stored(app, call_id) == ["Hello"]
