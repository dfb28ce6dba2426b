"""The Twilio provider: places the call with the twilio client, answered by TwiML that connects it
to the relay process over ConversationRelay (<Connect><ConversationRelay>), with asynchronous
answering-machine detection and, when the tenant records its calls, a dual-channel recording. Twilio
reports status, machine detection and recordings to POST /v1/calls/callbacks/twilio
(signature-checked). Reminders go as SMS through Twilio's Messaging API."""

from __future__ import annotations

import hmac
from urllib.parse import urlencode

import requests
from twilio.base.exceptions import TwilioRestException
from twilio.http.http_client import TwilioHttpClient
from twilio.request_validator import RequestValidator
from twilio.rest import Client
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
from plugins.calls.telephony.base import CallScript, ConversationRelayProvider, Reporter, SmsRefused

CALLBACK_PATH = "/v1/calls/callbacks/twilio"
# Twilio's CallStatus values -> ours
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
API_TIMEOUT_SECONDS = (
    10  # one request to Twilio's REST API; the twilio client waits forever without one
)
UNSUBSCRIBED_RECIPIENT = 21610  # Twilio's error: the number replied STOP to this sender
MAX_HINTS_CHARACTERS = 500  # the job's terms offered to speech recognition, comma-separated


def callback_url(base_url: str, call_id: str, **params) -> str:
    return f"{base_url.rstrip('/')}{CALLBACK_PATH}?{urlencode({'call_id': call_id, **params})}"


def hints_attribute(hints) -> str:
    """The job's terms as ConversationRelay's comma-separated `hints`, bounded."""
    kept, length = [], 0
    for term in dict.fromkeys(" ".join(str(hint).replace(",", " ").split()) for hint in hints):
        if term and length + len(term) + 1 <= MAX_HINTS_CHARACTERS:
            kept.append(term)
            length += len(term) + 1
    return ",".join(kept)


def relay_twiml(script: CallScript, url: str) -> str:
    """TwiML connecting the answered call to the relay: the dialogue speaks first once the socket's
    setup arrives, so the opening is in the transcript with its time like every other turn."""
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
    hints = hints_attribute(script.hints)
    if hints:
        attributes["hints"] = hints
    connect.conversation_relay(**attributes)
    return str(response)


def voicemail_twiml(message: str) -> str:
    response = VoiceResponse()
    response.say(message)
    response.hangup()
    return str(response)


class TwilioProvider(ConversationRelayProvider):
    name = "twilio"

    def __init__(
        self,
        *,
        account_sid: str,
        auth_token: str,
        from_number: str,
        callback_base_url: str,
        api_base_url: str = "",
        http_client=None,
    ):
        missing = [
            name
            for name, value in (
                ("TWILIO_ACCOUNT_SID", account_sid),
                ("TWILIO_AUTH_TOKEN", auth_token),
                ("TWILIO_FROM_NUMBER", from_number),
                ("TWILIO_CALLBACK_BASE_URL", callback_base_url),
            )
            if not value
        ]
        if missing:
            raise ValueError(
                f"HIREKIT_TELEPHONY=twilio needs {', '.join('HIREKIT_' + m for m in missing)}"
            )
        self.client = Client(
            account_sid,
            auth_token,
            http_client=http_client or TwilioHttpClient(timeout=API_TIMEOUT_SECONDS),
        )
        self.api_base_url = (api_base_url or "https://api.twilio.com").rstrip("/")
        if api_base_url:
            self.client.api.base_url = (
                self.api_base_url
            )  # the Api domain's root, https://api.twilio.com
        self.account_sid, self.auth_token = account_sid, auth_token
        self.from_number = from_number
        self.callback_base_url = callback_base_url

    def place(self, script: CallScript, report: Reporter) -> str | None:
        """POST .../Calls.json: the relay TwiML, status events, asynchronous machine detection
        (waiting for the beep when a voicemail is to be left) and, when the tenant records, both
        channels recorded."""
        base, call_id = self.callback_base_url, script.call_id
        params = dict(
            to=script.phone_no,
            from_=self.from_number,
            twiml=relay_twiml(script, self.relay_url(call_id)),
            status_callback=callback_url(base, call_id),
            status_callback_method="POST",
            status_callback_event=STATUS_EVENTS,
            machine_detection="DetectMessageEnd" if script.voicemail else "Enable",
            async_amd="true",
            async_amd_status_callback=callback_url(
                base, call_id, event="amd", voicemail=int(script.voicemail)
            ),
            async_amd_status_callback_method="POST",
        )
        if script.record:
            params.update(
                record=True,
                recording_channels="dual",
                recording_status_callback=callback_url(base, call_id, event="recording"),
                recording_status_callback_method="POST",
                recording_status_callback_event=["completed"],
            )
        return self.client.calls.create(**params).sid

    def handshake_valid(self, url: str, headers) -> bool:
        """Twilio signs the handshake as any webhook: HMAC-SHA1 of the URL it connected to, with no
        parameters."""
        signature = headers.get("X-Twilio-Signature")
        return bool(signature) and RequestValidator(self.auth_token).validate(url, {}, signature)

    def hang_up(self, provider_call_id: str) -> None:
        self.client.calls(provider_call_id).update(status="completed")

    def leave_voicemail(self, provider_call_id: str, message: str) -> None:
        """Replace the call's TwiML: say the message after the beep, then hang up."""
        self.client.calls(provider_call_id).update(twiml=voicemail_twiml(message))

    def recording_media_url(self, provider_recording_id: str) -> str:
        account = f"{self.api_base_url}/2010-04-01/Accounts/{self.account_sid}"
        return f"{account}/Recordings/{provider_recording_id}"

    def delete_recording(self, provider_recording_id: str) -> None:
        try:
            self.client.recordings(provider_recording_id).delete()
        except TwilioRestException as exc:
            if exc.status != 404:  # already gone there
                raise

    def open_recording(self, provider_recording_id: str):
        """GET the recording's audio as MP3 with the account's credentials, streamed."""
        response = requests.get(
            self.recording_media_url(provider_recording_id) + ".mp3",
            stream=True,
            auth=(self.account_sid, self.auth_token),
            timeout=API_TIMEOUT_SECONDS,
        )
        response.raise_for_status()
        return response

    def same_account(self, account_sid: str) -> bool:
        return hmac.compare_digest(account_sid or "", self.account_sid)

    def send_sms(self, to: str, body: str) -> str:
        """POST /2010-04-01/Accounts/{sid}/Messages.json (To, From, Body); Twilio's 4xx refusals
        (but 429) are final."""
        try:
            message = self.client.messages.create(to=to, from_=self.from_number, body=body)
        except TwilioRestException as exc:
            if 400 <= exc.status < 500 and exc.status != 429:
                raise SmsRefused(
                    f"Twilio refused the message ({exc.code}): {exc.msg}",
                    unsubscribed=exc.code == UNSUBSCRIBED_RECIPIENT,
                ) from exc
            raise
        return message.sid
