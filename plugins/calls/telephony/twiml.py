"""What Twilio and Telnyx (whose TeXML is TwiML-compatible) share: the markup that answers a call
with ConversationRelay or leaves a voicemail, the call statuses their callbacks report, and what a
placed call asks for besides its markup (callbacks, machine detection, recording)."""

from __future__ import annotations

from urllib.parse import urlencode

from twilio.twiml.voice_response import VoiceResponse

from plugins.calls.models import (
    BUSY,
    CANCELED,
    COMPLETED,
    FAILED,
    IN_PROGRESS,
    NO_ANSWER,
    QUEUED,
    RINGING,
)
from plugins.calls.telephony.base import CallScript

# The CallStatus values of Twilio's and TeXML's status callbacks -> ours
STATUS_MAP = {
    "queued": QUEUED,
    "initiated": QUEUED,
    "ringing": RINGING,
    "in-progress": IN_PROGRESS,
    "completed": COMPLETED,
    "busy": BUSY,
    "no-answer": NO_ANSWER,
    "failed": FAILED,
    "canceled": CANCELED,
}
STATUS_EVENTS = ["initiated", "ringing", "answered", "completed"]
MAX_HINTS_CHARACTERS = 500  # the job's terms offered to speech recognition, comma-separated


def callback_url(base_url: str, path: str, call_id: str, **params) -> str:
    """The provider's callback route under the public base URL, naming the call (and the event)."""
    return f"{base_url.rstrip('/')}{path}?{urlencode({'call_id': call_id, **params})}"


def call_options(script: CallScript, callback_base: str, callback_path: str) -> dict:
    """What a ConversationRelay call asks of its provider besides its markup, under the names
    Twilio's Calls API and Telnyx's TeXML Calls API share: status events, asynchronous machine
    detection (waiting for the beep when a voicemail is to be left) and, when the tenant records,
    both channels recorded. Values as Twilio's form takes them: lists for a parameter's several
    values, "true" for AsyncAmd."""
    call_id = script.call_id
    options = {
        "StatusCallback": callback_url(callback_base, callback_path, call_id),
        "StatusCallbackMethod": "POST",
        "StatusCallbackEvent": STATUS_EVENTS,
        "MachineDetection": "DetectMessageEnd" if script.voicemail else "Enable",
        "AsyncAmd": "true",
        "AsyncAmdStatusCallback": callback_url(
            callback_base, callback_path, call_id, event="amd", voicemail=int(script.voicemail)
        ),
        "AsyncAmdStatusCallbackMethod": "POST",
    }
    if script.record:
        options.update(
            Record=True,
            RecordingChannels="dual",
            RecordingStatusCallback=callback_url(
                callback_base, callback_path, call_id, event="recording"
            ),
            RecordingStatusCallbackMethod="POST",
            RecordingStatusCallbackEvent=["completed"],
        )
    return options


def hints_attribute(hints) -> str:
    """The job's terms as ConversationRelay's comma-separated `hints`, bounded."""
    kept, length = [], 0
    for term in dict.fromkeys(" ".join(str(hint).replace(",", " ").split()) for hint in hints):
        if term and length + len(term) + 1 <= MAX_HINTS_CHARACTERS:
            kept.append(term)
            length += len(term) + 1
    return ",".join(kept)


def relay_twiml(script: CallScript, url: str, *, hints: bool = True) -> str:
    """The markup connecting the answered call to the relay: the dialogue speaks first once the
    socket's setup arrives, so the opening is in the transcript with its time like every other turn.
    `hints`: whether the provider's ConversationRelay takes recognition hints (Twilio's does,
    TeXML's does not)."""
    response = VoiceResponse()
    connect = response.connect()
    attributes = {
        "url": url,
        "language": script.language,
        "interruptible": "any",
        "dtmf_detection": "true",
    }
    if script.voice:
        attributes["voice"] = script.voice
    terms = hints_attribute(script.hints) if hints else ""
    if terms:
        attributes["hints"] = terms
    connect.conversation_relay(**attributes)
    return str(response)


def voicemail_twiml(message: str) -> str:
    response = VoiceResponse()
    response.say(message)
    response.hangup()
    return str(response)
