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
        Call.update(
            end_reason="completed", transcript=[{"speaker": "agent", "text": "Goodbye"}]
        ).where(Call.id == call_id).execute()
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


def test_ended_calls_are_handed_on_together_once_their_interval_has_passed(app, call_id):
    """After an idle spell the first end goes at once; ends that follow wait for the interval and go
    in one job, which completes each call (its status, from the end the conversation wrote)."""
    handed = []
    writer = RecordWriter(
        app,
        write=write_live_record,
        interval=NEVER,
        complete=handed.append,
        completion_interval=NEVER,
    )
    writer.complete(call_id, "completed", error=None, voicemail_left=False)
    assert writer.hand_on_ends() == 1 and handed == [[(call_id, "completed", None, False)]]
    writer.complete(
        "second",
        "failed",
        error="the call ended before the screening finished",
        voicemail_left=False,
    )
    writer.complete("third", "completed", error=None, voicemail_left=False)
    assert writer.hand_on_ends() == 0  # within the interval: they wait for company
    writer.stop()  # stopping hands on what waits
    assert [end[0] for end in handed[1]] == ["second", "third"]


def test_ends_are_kept_while_the_queue_refuses_them_and_one_job_completes_them_all(app, call_id):
    from plugins.calls.dispatch import complete_all_soon

    refusing = {"on": True}

    def complete(ends):
        if refusing["on"]:
            raise RuntimeError("Redis went away")
        complete_all_soon(ends)  # inline here: no Redis

    writer = RecordWriter(
        app, write=write_live_record, interval=NEVER, complete=complete, completion_interval=0.0
    )
    with app.app_context(), database.connection_context():
        Call.update(end_reason="completed").where(Call.id == call_id).execute()
    writer.complete(call_id, "completed", error=None, voicemail_left=False)
    assert writer.hand_on_ends() == 0
    refusing["on"] = False
    assert writer.hand_on_ends() == 1
    with app.app_context(), database.connection_context():
        assert Call.get_by_id(call_id).status == "completed"


def test_one_call_that_cannot_be_completed_does_not_stop_the_others(app, call_id, monkeypatch):
    from plugins.calls import lifecycle
    from plugins.calls.tasks import complete_conversations

    advance = lifecycle.advance

    def advance_unless_broken(call, progress):
        if call == "broken":
            raise RuntimeError("the database refused this one")
        return advance(call, progress)

    monkeypatch.setattr(lifecycle, "advance", advance_unless_broken)
    with app.app_context(), database.connection_context():
        Call.update(end_reason="completed").where(Call.id == call_id).execute()
        with pytest.raises(RuntimeError, match="1 of 2 calls failed: broken"):
            complete_conversations(
                [["broken", "completed", None, False], [call_id, "completed", None, False]]
            )
        assert Call.get_by_id(call_id).status == "completed"
