"""One call's relay session, independent of its transport: provider frames in (checked, in order),
the dialogue's turns run, ConversationRelay messages out, and the silence timer. The relay process
drives it over a WebSocket; the simulated provider drives it in-process with a scripted candidate.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from plugins.calls.conversation.contract import Conversation, ConversationRefused, Outgoing
from plugins.calls.relay.protocol import ProtocolError, parse

log = logging.getLogger("hirekit.calls.relay")

AWAITING_SETUP, LIVE, ENDED = "awaiting_setup", "live", "ended"


def conversation_factory(app) -> Callable[..., Conversation]:
    """The dialogue a relay session holds: the dialogue package's, put on the app by the calls
    family (a test's scripted double in its place)."""
    return app.extensions["hirekit_conversation_factory"]


@dataclass(frozen=True)
class Turn:
    """One thing for the dialogue to answer: `greet`, `hear`, `interrupted`, `keypress` or
    `silence`."""

    kind: str
    text: str = ""
    digit: str = ""
    duration_ms: int = 0
    lang: str | None = None
    received_at: float = 0.0  # the session clock when the frame that made it arrived


class RelaySession:
    """Feed it frames with accept(); run each turn it returns with run() (one at a time, on any
    thread); close() once the transport is gone. `refused` is set when the socket must be closed
    without a conversation: a setup for another call, or a call the dialogue will not hold."""

    def __init__(
        self,
        call_id: str,
        open_conversation: Callable[..., Conversation],
        *,
        silence_seconds: float,
        expected_call_sid: str | None = None,
        language: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.call_id = call_id
        self._open = open_conversation
        self.silence_seconds = silence_seconds
        self.expected_call_sid = expected_call_sid
        self.language = language
        self.clock = clock
        self.state = AWAITING_SETUP
        self.conversation: Conversation | None = None
        self.refused: str | None = None
        self.setup: dict | None = None
        self.answered_at: float | None = None
        self.silence_due: float | None = (
            None  # the clock time at which the candidate's silence becomes a turn
        )
        self.silences = 0  # silence turns in a row (a prompt or key resets it)
        self._stop_stream = threading.Event()

    # -- frames in (the transport's thread) -------------------------------------------------------

    def accept(self, frame: str | bytes) -> Turn | None:
        """The turn a frame asks for, or None when it is ignored (one log line says why)."""
        now = self.clock()
        try:
            message = parse(frame)
        except ProtocolError as exc:
            log.warning("relay for call %s ignored a frame: %s", self.call_id, exc)
            return None
        kind = message["type"]
        if self.state == ENDED:
            log.warning(
                "relay for call %s ignored a %s after the conversation ended", self.call_id, kind
            )
            return None
        if kind == "error":
            log.warning(
                "relay for call %s: the provider reported an error: %s",
                self.call_id,
                str(message.get("description", ""))[:300],
            )
            return None
        if kind == "setup":
            return self._setup(message, now)
        if self.state == AWAITING_SETUP:
            log.warning("relay for call %s ignored a %s before setup", self.call_id, kind)
            return None
        if kind == "prompt":
            if not message.get("last", True):
                return None  # a partial transcript: the complete utterance follows with last: true
            self.silence_due, self.silences = None, 0
            return Turn(
                "hear", text=message["voicePrompt"], lang=message.get("lang"), received_at=now
            )
        if kind == "interrupt":
            # the candidate barged in: what is still streaming is not spoken
            self._stop_stream.set()
            self.silence_due = None
            return Turn(
                "interrupted",
                text=message.get("utteranceUntilInterrupt", ""),
                duration_ms=message["durationUntilInterruptMs"],
                received_at=now,
            )
        self.silence_due, self.silences = None, 0
        return Turn("keypress", digit=message["digit"], received_at=now)

    def _setup(self, message: dict, now: float) -> Turn | None:
        if self.state != AWAITING_SETUP:
            log.warning("relay for call %s ignored a second setup", self.call_id)
            return None
        if self.expected_call_sid and message["callSid"] != self.expected_call_sid:
            self.refuse(
                f"setup names call {message['callSid'][:64]!r}, not {self.expected_call_sid!r}"
            )
            return None
        self.setup, self.state, self.answered_at = message, LIVE, now
        return Turn("greet", received_at=now)

    def silence_turn(self) -> Turn | None:
        """The silence turn once its time has come (the transport waits until `silence_due`)."""
        if self.state != LIVE or self.silence_due is None or self.clock() < self.silence_due:
            return None
        self.silence_due = None
        self.silences += 1
        return Turn("silence", received_at=self.clock())

    def refuse(self, reason: str) -> None:
        self.refused = reason
        self.state = ENDED
        log.warning("relay for call %s refused: %s", self.call_id, reason)

    @property
    def ended(self) -> bool:
        return self.state == ENDED

    # -- turns (a worker thread: the dialogue is synchronous and writes to the database) ----------

    def at_ms(self) -> int:
        if self.answered_at is None:
            return 0
        return int((self.clock() - self.answered_at) * 1000)

    def run(self, turn: Turn) -> Iterator[Outgoing]:
        """The dialogue's messages for the turn, as each is ready; stops early when the candidate
        barges in."""
        if self.state == ENDED:
            return
        if turn.kind == "greet":
            try:
                self.conversation = self._open(self.call_id, language=self.language)
            except ConversationRefused as exc:
                self.refuse(f"the dialogue refused the call: {exc}")
                return
        conversation = self.conversation
        if conversation is None:
            return
        at_ms = self.at_ms()
        if turn.kind == "interrupted":
            conversation.interrupted(turn.text, at_ms=at_ms, duration_ms=turn.duration_ms)
            return
        self._stop_stream.clear()
        messages = {
            "greet": lambda: conversation.greet(at_ms=at_ms),
            "hear": lambda: conversation.hear(turn.text, at_ms=at_ms, lang=turn.lang),
            "keypress": lambda: conversation.keypress(turn.digit, at_ms=at_ms),
            "silence": lambda: conversation.silence(at_ms=at_ms),
        }[turn.kind]()
        try:
            for message in messages:
                if self._stop_stream.is_set():
                    break
                yield message
                if message.get("type") == "end":
                    self.state = ENDED
                    break
                if message.get("type") == "text" and message.get("last"):
                    self.silence_due = self.clock() + self.silence_seconds
        finally:
            close = getattr(messages, "close", None)
            if close is not None:
                close()
        if conversation.finished:
            self.state = ENDED

    def close(self, end_reason: str) -> None:
        """The transport is gone: the conversation, if it has not ended, ends with `end_reason`."""
        self.state = ENDED
        if self.conversation is not None and not self.conversation.finished:
            self.conversation.close(end_reason, at_ms=self.at_ms())
