"""ConversationRelay's WebSocket messages from the provider: the types it sends, the bound the relay
holds each frame to, and the check that turns one frame into one message or says why it is refused.
"""

from __future__ import annotations

import json

# The largest frame the relay reads. A prompt is one utterance and a setup a few call fields: both
# are well under a
# kilobyte. A larger frame closes the socket (WebSocket close code 1009) and the call ends as a
# dropped relay.
MAX_MESSAGE_BYTES = 16 * 1024
MESSAGE_TYPES = ("setup", "prompt", "interrupt", "dtmf", "error")
DTMF_DIGITS = frozenset("0123456789*#ABCD")


class ProtocolError(ValueError):
    """A frame the relay ignores: not JSON, not an object, an unknown type, or a field of the wrong
    kind."""


def parse(frame: str | bytes) -> dict:
    """One provider frame as a checked message (`type` one of MESSAGE_TYPES, its fields of the
    documented kinds)."""
    if isinstance(frame, (bytes, bytearray)):
        raise ProtocolError("a binary frame: ConversationRelay sends JSON text frames")
    if len(frame) > MAX_MESSAGE_BYTES:
        raise ProtocolError(
            f"a frame of {len(frame)} characters, over the {MAX_MESSAGE_BYTES} the relay reads"
        )
    try:
        message = json.loads(frame)
    except ValueError:
        raise ProtocolError(f"not JSON: {frame[:80]!r}") from None
    if not isinstance(message, dict):
        raise ProtocolError("not a JSON object")
    kind = message.get("type")
    if kind not in MESSAGE_TYPES:
        raise ProtocolError(f"unknown message type {str(kind)[:40]!r}")
    _check_fields(kind, message)
    return message


def _check_fields(kind: str, message: dict) -> None:
    if kind == "setup":
        if not isinstance(message.get("callSid"), str) or not message["callSid"]:
            raise ProtocolError("setup without a callSid")
    elif kind == "prompt":
        if not isinstance(message.get("voicePrompt"), str):
            raise ProtocolError("prompt without a voicePrompt string")
        if not isinstance(message.get("last", True), bool):
            raise ProtocolError("prompt whose last is not a boolean")
    elif kind == "interrupt":
        if not isinstance(message.get("utteranceUntilInterrupt", ""), str):
            raise ProtocolError("interrupt whose utteranceUntilInterrupt is not a string")
        message["durationUntilInterruptMs"] = _milliseconds(
            message.get("durationUntilInterruptMs", 0)
        )
    elif kind == "dtmf":
        digit = message.get("digit")
        if not isinstance(digit, str) or len(digit) != 1 or digit not in DTMF_DIGITS:
            raise ProtocolError(f"dtmf with a digit that is not a key: {str(digit)[:10]!r}")


def _milliseconds(value) -> int:
    """Twilio documents the duration as a number and shows it as a string of digits in one sample:
    both are read."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ProtocolError("interrupt whose durationUntilInterruptMs is not a number")
    try:
        number = int(float(value))
    except ValueError:
        raise ProtocolError("interrupt whose durationUntilInterruptMs is not a number") from None
    if number < 0:
        raise ProtocolError("interrupt with a negative durationUntilInterruptMs")
    return number
