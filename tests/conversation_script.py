"""Scripted candidates for screening conversations: a call being placed, driven in-process through
the relay's Conversation contract exactly as the relay drives it (greet, then each prompt, key,
silence or barge-in)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

from app.data.db import database, utcnow
from plugins.applications.models import Application
from plugins.calls.conversation.contract import open_conversation
from plugins.calls.lifecycle import new_call
from plugins.calls.models import INSTANT, RINGING, Call
from tests.call_factories import create_application, create_candidate, create_job_with_questions

SILENCE = "<silence>"
GAP_MS = 2500  # the script's pause between turns, as a person's


def key(digit: str) -> str:
    return f"<key:{digit}>"


def barge(spoken: str) -> tuple[str, str]:
    """The candidate cuts the agent off after it said `spoken`."""
    return ("<barge>", spoken)


@dataclass
class Conversation:
    """What one scripted call produced: the agent's lines in order and the messages the relay would
    send."""

    call_id: str
    lines: list[str] = field(default_factory=list)
    messages: list[dict] = field(default_factory=list)
    finished: bool = False

    @property
    def said(self) -> str:
        return " ".join(self.lines)


def application_for_call(
    client,
    tenant,
    *,
    job: dict | None = None,
    phone_no: str = "+14155550100",
    first_name: str = "Jane",
    **job_overrides,
) -> dict:
    job = job or create_job_with_questions(client, tenant, **job_overrides)
    candidate = create_candidate(client, tenant, phone_no=phone_no, first_name=first_name)
    return create_application(client, tenant, job, candidate, stage="PASSIVE")


def placed_call(app, application: dict) -> str:
    """A call for the application as the placing job leaves it when the provider connects: claimed
    and ringing."""
    with app.app_context(), database.connection_context():
        call = new_call(Application.get_by_id(application["id"]), trigger=INSTANT)
        Call.update(status=RINGING, dialled_at=utcnow()).where(Call.id == call.id).execute()
    return str(call.id)


def converse(
    app, call_id: str, script, *, hang_up: bool = True, language: str | None = None
) -> Conversation:
    """Run the script against the call's conversation; the candidate hangs up after it unless the
    agent ended."""
    result = Conversation(call_id)
    at_ms = 0
    with app.app_context(), database.connection_context():
        conversation = open_conversation(call_id, language=language)

        def take(outgoing):
            text = []
            for message in outgoing:
                result.messages.append(message)
                if message["type"] == "text":
                    text.append(message["token"])
                    if message.get("last"):
                        result.lines.append("".join(text).strip())
                        text = []
            if text:
                result.lines.append("".join(text).strip())

        take(conversation.greet(at_ms=at_ms))
        for step in script:
            at_ms += GAP_MS
            if isinstance(step, tuple):
                conversation.interrupted(step[1], at_ms=at_ms, duration_ms=800)
            elif step == SILENCE:
                take(conversation.silence(at_ms=at_ms))
            elif step.startswith("<key:"):
                take(conversation.keypress(step[5:-1], at_ms=at_ms))
            else:
                take(conversation.hear(step, at_ms=at_ms, lang=language))
        if hang_up and not conversation.finished:
            conversation.close("hung_up", at_ms=at_ms + 1000)
        result.finished = conversation.finished
    return result


def read_call(client, tenant, call_id: str) -> dict:
    response = client.get(f"/v1/calls/{call_id}", headers=tenant.headers)
    assert response.status_code == 200, response.json
    return response.json


GOOD = [
    "Yes, speaking.",
    "Sure, now is fine.",
    "I have six years in the ICU.",
    "Yes, I do.",
    "A patient crashed on a night shift and I coordinated the team calmly until the doctor "
    "arrived.",
    "No, that's all, thank you.",
]


def open_every_day(client, tenant, job: dict) -> None:
    """A window of 08:00-20:00 on every day, so a callback tomorrow is allowed whatever today is."""
    setting = client.put(
        f"/v1/jobs/{job['id']}/schedule-setting",
        headers=tenant.headers,
        json={
            "window_start_time": "08:00:00",
            "window_end_time": "20:00:00",
            "days_of_week": [1, 2, 3, 4, 5, 6, 7],
        },
    )
    assert setting.status_code == 200, setting.json


def queued_callbacks(client, tenant, application: dict) -> list[dict]:
    calls = client.get(
        "/v1/calls",
        headers=tenant.headers,
        query_string={
            "page": 1,
            "size": 20,
            "application_id": application["id"],
            "status": "queued",
        },
    )
    assert calls.status_code == 200, calls.json
    return calls.json["data"]


def local(iso_utc: str, zone: str = "America/Los_Angeles") -> dt.datetime:
    return dt.datetime.fromisoformat(iso_utc.replace("Z", "+00:00")).astimezone(ZoneInfo(zone))
