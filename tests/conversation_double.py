"""A scripted dialogue for the relay's tests: it keeps to the Conversation contract (greet, hear,
interrupted, keypress, silence, close), asks the call's questions in order and writes each turn to
the call's transcript, so the transport can be tested on its own against the record a client reads.
"""

from __future__ import annotations

from app.data.db import utcnow
from plugins.calls.conversation.contract import ConversationRefused
from plugins.calls.lifecycle import questions_for
from plugins.calls.models import FINAL_STATUSES, Call

CLOSED: dict[str, str] = {}  # call id -> the end reason close() was given, for the tests to read
OPENING = "Hello, this is the screening assistant. Is now a good time?"
CLOSING = "Thank you, goodbye."


class ScriptedConversation:
    def __init__(self, call: Call):
        self.call_id = str(call.id)
        self.questions = questions_for(call)
        self.index = -1
        self.transcript: list[dict] = []
        self.finished = False

    def _save(self) -> None:
        Call.update(transcript=self.transcript, updated_at=utcnow()).where(
            Call.id == self.call_id
        ).execute()

    def _say(self, text: str, at_ms: int):
        self.transcript.append(
            {
                "speaker": "agent",
                "text": text,
                "at_ms": at_ms,
                "question_index": self.index if self.index >= 0 else None,
            }
        )
        self._save()
        words = text.split(" ")
        for n, word in enumerate(words):
            yield {
                "type": "text",
                "token": word if n == 0 else " " + word,
                "last": n == len(words) - 1,
                "interruptible": True,
            }

    def _next(self, at_ms: int):
        self.index += 1
        if self.index < len(self.questions):
            yield from self._say(self.questions[self.index], at_ms)
        else:
            yield from self._say(CLOSING, at_ms)
            self.finished = True
            CLOSED[self.call_id] = "completed"
            yield {"type": "end", "handoffData": '{"reason": "completed"}'}

    def greet(self, *, at_ms: int):
        yield from self._say(OPENING, at_ms)

    def hear(self, text: str, *, at_ms: int, lang: str | None = None):
        self.transcript.append(
            {
                "speaker": "candidate",
                "text": text,
                "at_ms": at_ms,
                "question_index": self.index if self.index >= 0 else None,
            }
        )
        self._save()
        yield from self._next(at_ms)

    def interrupted(self, spoken: str, *, at_ms: int, duration_ms: int) -> None:
        last = next(turn for turn in reversed(self.transcript) if turn["speaker"] == "agent")
        last.update(text=spoken, interrupted=True)
        self._save()

    def keypress(self, digit: str, *, at_ms: int):
        yield from self.hear({"1": "yes", "2": "no"}.get(digit, digit), at_ms=at_ms)

    def silence(self, *, at_ms: int):
        yield from self._say(
            "Are you still there? " + (self.questions[self.index] if self.index >= 0 else OPENING),
            at_ms,
        )

    def close(self, end_reason: str, *, at_ms: int) -> None:
        if not self.finished:
            self.finished = True
            CLOSED[self.call_id] = end_reason


def open_scripted(
    call_id: str, *, language: str | None = None, record_writer=None
) -> ScriptedConversation:
    call = Call.get_or_none(Call.id == call_id)
    if call is None or call.status in FINAL_STATUSES:
        raise ConversationRefused(f"call {call_id} is not being placed")
    return ScriptedConversation(call)
