"""The Twilio provider: places the call with the twilio client, answered by TwiML that connects it
to the relay process over ConversationRelay (<Connect><ConversationRelay>), with asynchronous
answering-machine detection and, when the tenant records its calls, a dual-channel recording. Twilio
reports status, machine detection and recordings to POST /v1/calls/callbacks/twilio
(signature-checked). Reminders go as SMS through Twilio's Messaging API."""

from __future__ import annotations

import hmac
import re

import requests
from twilio.base.exceptions import TwilioRestException
from twilio.http.http_client import TwilioHttpClient
from twilio.request_validator import RequestValidator
from twilio.rest import Client

from plugins.calls.telephony.base import CallScript, ConversationRelayProvider, Reporter, SmsRefused
from plugins.calls.telephony.base import require_settings
from plugins.calls.telephony.twiml import call_options, relay_twiml, voicemail_twiml

CALLBACK_PATH = "/v1/calls/callbacks/twilio"
API_TIMEOUT_SECONDS = (
    10  # one request to Twilio's REST API; the twilio client waits forever without one
)
UNSUBSCRIBED_RECIPIENT = 21610  # Twilio's error: the number replied STOP to this sender


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
        require_settings(
            "twilio",
            {
                "TWILIO_ACCOUNT_SID": account_sid,
                "TWILIO_AUTH_TOKEN": auth_token,
                "TWILIO_FROM_NUMBER": from_number,
                "TWILIO_CALLBACK_BASE_URL": callback_base_url,
            },
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
        options = call_options(script, self.callback_base_url, CALLBACK_PATH)
        params = {
            re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name).lower(): value
            for name, value in options.items()
        }  # the twilio client's names: async_amd, ...
        params.update(
            to=script.phone_no,
            from_=self.from_number,
            twiml=relay_twiml(script, self.relay_url(script.call_id)),
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

    def recording_id_valid(self, provider_recording_id: str) -> bool:
        return provider_recording_id.startswith("RE") and super().recording_id_valid(
            provider_recording_id
        )

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
