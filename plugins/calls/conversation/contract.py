"""The seam between a call's transport (the ConversationRelay socket) and its dialogue: what the
relay feeds a conversation and what a conversation answers, so the transport never knows how the
dialogue decides."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol, TypedDict

# Why a conversation ended: the call record's `end_reason`.
END_REASONS = (
    "completed",
    "callback_booked",
    "voicemail_left",
    "no_answer",
    "busy",
    "hung_up",
    "opted_out",
    "wrong_person",
    "failed",
)


class Outgoing(TypedDict, total=False):
    """One message for the relay to send to the provider, in ConversationRelay's own shape:
    `{"type": "text", "token": ..., "last": bool, "interruptible": bool}`, `{"type": "sendDigits",
    "digits": ...}`, `{"type": "language", "ttsLanguage": ..., "transcriptionLanguage": ...}` or
    `{"type": "end", "handoffData": ...}`."""

    type: str
    token: str
    last: bool
    interruptible: bool
    digits: str
    handoffData: str


class Conversation(Protocol):
    """One live call's dialogue. The relay calls these in the order events arrive on the call's
    socket; each answering method yields the messages to send, as soon as each is ready (a model's
    tokens stream out one by one). Times are milliseconds since the call was answered. Every method
    persists what it learns before it returns."""

    # true once the conversation has ended (an `end` was yielded, or close() was called)
    finished: bool

    def greet(self, *, at_ms: int) -> Iterator[Outgoing]:
        """The opening, after the provider's `setup`."""

    def hear(self, text: str, *, at_ms: int, lang: str | None = None) -> Iterator[Outgoing]:
        """A complete utterance of the candidate (`prompt` with `last: true`)."""

    def interrupted(self, spoken: str, *, at_ms: int, duration_ms: int) -> None:
        """The candidate barged in: only `spoken` (the provider's `utteranceUntilInterrupt`) of the
        agent's turn was heard; the transcript keeps just that."""

    def keypress(self, digit: str, *, at_ms: int) -> Iterator[Outgoing]:
        """A DTMF key (`dtmf`): 1 is yes, 2 is no where a yes/no answer is awaited."""

    def silence(self, *, at_ms: int) -> Iterator[Outgoing]:
        """The candidate said nothing for the relay's silence timeout after the agent's last
        turn."""

    def close(self, end_reason: str, *, at_ms: int) -> None:
        """The call is over (hung up, socket gone, provider error): persist the end once; later
        calls do nothing."""


class ConversationRefused(Exception):
    """The call may not converse (unknown, not the call being placed, already finished): the relay
    refuses the socket and records nothing."""


def open_conversation(call_id: str, *, language: str | None = None) -> Conversation:
    """The dialogue for a call being placed; raises ConversationRefused. The calls family puts the
    dialogue package's implementation on the app (app.extensions["hirekit_conversation_factory"]),
    so this seam imports no implementation (and a test may put a scripted one there instead)."""
    from flask import current_app

    return current_app.extensions["hirekit_conversation_factory"](call_id, language=language)
