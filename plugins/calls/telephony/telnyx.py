"""The Telnyx provider: the same ConversationRelay call as Twilio's, placed through Telnyx's TeXML
REST API (TwiML-compatible) and answered by the same markup, so the relay and the dialogue are the
ones every call uses. Telnyx posts status, machine-detection and recording callbacks to POST
/v1/calls/callbacks/telnyx, signed with Ed25519 (telnyx-signature-ed25519 over
`telnyx-timestamp|body`). Telnyx does not sign the ConversationRelay WebSocket handshake, so the
relay URL it is given carries a token of ours: signed with the server secret, bound to the call,
expiring. Reminders go as SMS through Telnyx's Messaging API (POST /v2/messages); texts to the
number come from the messaging profile's webhook, POST /v1/calls/callbacks/telnyx/sms, signed the
same way (plugins.calls.callbacks)."""

from __future__ import annotations

import base64
import binascii
import time
from urllib.parse import parse_qs, quote, urlsplit

import requests
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from app.security import tokens
from plugins.calls.telephony.base import (
    CallScript,
    ConversationRelayProvider,
    Reporter,
    SmsRefused,
    require_settings,
)
from plugins.calls.telephony.twiml import call_options, relay_twiml, voicemail_twiml

CALLBACK_PATH = "/v1/calls/callbacks/telnyx"
DEFAULT_API_BASE_URL = "https://api.telnyx.com"
API_TIMEOUT_SECONDS = 10  # one request to Telnyx's REST API
UNSUBSCRIBED_RECIPIENT = "40300"  # Telnyx's error: the number replied STOP to this sender
SIGNATURE_TOLERANCE_SECONDS = 300  # a signed callback older (or newer) than this is refused
RELAY_TOKEN_KIND = "telnyx-relay"
# The relay URL's token verifies this long after the call is placed: ringing, answering and
# machine detection take well under it; the call's one socket is taken at the first handshake.
RELAY_TOKEN_SECONDS = 900
RELAY_TOKEN_PARAMETER = "token"


class TelnyxApiError(Exception):
    """Telnyx answered an error: its HTTP status and the codes of its `errors` list."""

    def __init__(self, status: int, codes: list[str], message: str):
        super().__init__(f"Telnyx answered {status}: {message}")
        self.status, self.codes = status, codes


def signature_valid(
    public_key: str,
    body: bytes,
    signature: str | None,
    timestamp: str | None,
    *,
    now: float | None = None,
) -> bool:
    """Telnyx's webhook signature: Ed25519 over `timestamp|body` with the account's public key
    (base64), the timestamp (Unix seconds) within SIGNATURE_TOLERANCE_SECONDS of now."""
    if not signature or not timestamp:
        return False
    try:
        sent_at = int(timestamp)
        key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key, validate=True))
        signed = base64.b64decode(signature, validate=True)
    except (ValueError, binascii.Error):
        return False
    if abs((time.time() if now is None else now) - sent_at) > SIGNATURE_TOLERANCE_SECONDS:
        return False
    try:
        key.verify(signed, timestamp.encode() + b"|" + body)
    except InvalidSignature:
        return False
    return True


class TelnyxProvider(ConversationRelayProvider):
    name = "telnyx"

    def __init__(
        self,
        *,
        api_key: str,
        account_sid: str,
        connection_id: str,
        from_number: str,
        callback_base_url: str,
        api_base_url: str = "",
        session: requests.Session | None = None,
    ):
        require_settings(
            "telnyx",
            {
                "TELNYX_API_KEY": api_key,
                "TELNYX_ACCOUNT_SID": account_sid,
                "TELNYX_CONNECTION_ID": connection_id,
                "TELNYX_FROM_NUMBER": from_number,
                "TELNYX_CALLBACK_BASE_URL": callback_base_url,
            },
        )
        self.api_base_url = (api_base_url or DEFAULT_API_BASE_URL).rstrip("/")
        self.account_sid, self.connection_id = account_sid, connection_id
        self.from_number = from_number
        self.callback_base_url = callback_base_url
        self.session = session or requests.Session()
        self.session.headers["Authorization"] = f"Bearer {api_key}"

    # -- Telnyx's REST API ------------------------------------------------------------------------

    def account_url(self, path: str) -> str:
        return f"{self.api_base_url}/v2/texml/Accounts/{quote(self.account_sid, safe='')}{path}"

    def request(self, method: str, url: str, **options) -> requests.Response:
        """One request with the API key and the timeout; an error answer raises TelnyxApiError."""
        response = self.session.request(method, url, timeout=API_TIMEOUT_SECONDS, **options)
        if response.status_code >= 400:
            raise api_error(response)
        return response

    def call_url(self, provider_call_id: str) -> str:
        return self.account_url(f"/Calls/{quote(provider_call_id, safe=':')}")

    # -- calls ------------------------------------------------------------------------------------

    def relay_url(self, call_id: str) -> str:
        """The relay URL with this call's token: Telnyx opens the socket on it as given."""
        token = tokens.sign(RELAY_TOKEN_KIND, call_id)
        return f"{super().relay_url(call_id)}?{RELAY_TOKEN_PARAMETER}={token}"

    def handshake_valid(self, url: str, headers) -> bool:
        """The socket reached the relay URL of the call its token was issued for, in time."""
        parts = urlsplit(url)
        call_id = parts.path.rsplit("/", 1)[-1]
        presented = parse_qs(parts.query).get(RELAY_TOKEN_PARAMETER, [])
        if len(presented) != 1:
            return False
        try:
            bound_to = tokens.verify(RELAY_TOKEN_KIND, presented[0], max_age=RELAY_TOKEN_SECONDS)
        except tokens.InvalidToken:
            return False
        return bound_to == call_id

    def place(self, script: CallScript, report: Reporter) -> str | None:
        """POST /v2/texml/Accounts/{account}/Calls: the relay TeXML inline, status events,
        asynchronous machine detection (waiting for the beep when a voicemail is to be left) and,
        when the tenant records, both channels recorded. Answers Telnyx's call id, or None when
        its answer names none (the first status callback's CallSid is kept then)."""
        body = {
            "ApplicationSid": self.connection_id,
            "To": script.phone_no,
            "From": self.from_number,
            "Texml": relay_twiml(script, self.relay_url(script.call_id), hints=False),
        }
        for name, value in call_options(script, self.callback_base_url, CALLBACK_PATH).items():
            body[name] = json_value(value)
        answer = self.request("POST", self.account_url("/Calls"), json=body).json()
        resource = answer.get("data", answer) if isinstance(answer, dict) else None
        if not isinstance(resource, dict):
            return None
        sid = resource.get("sid") or resource.get("call_sid")
        return str(sid)[:64] if sid else None

    def hang_up(self, provider_call_id: str) -> None:
        self.request("POST", self.call_url(provider_call_id), data={"Status": "completed"})

    def leave_voicemail(self, provider_call_id: str, message: str) -> None:
        """Replace the call's TeXML: say the message after the beep, then hang up."""
        self.request(
            "POST", self.call_url(provider_call_id), data={"Texml": voicemail_twiml(message)}
        )

    # -- recordings -------------------------------------------------------------------------------

    def recording_media_url(self, provider_recording_id: str) -> str:
        """The recording resource; its `media_url` is where the audio is fetched."""
        return self.account_url(f"/Recordings/{quote(provider_recording_id, safe='')}.json")

    def open_recording(self, provider_recording_id: str):
        """The recording resource's media_url (a short-lived link Telnyx signs), streamed."""
        resource = self.request("GET", self.recording_media_url(provider_recording_id)).json()
        media_url = resource.get("media_url") if isinstance(resource, dict) else None
        if not media_url:
            raise TelnyxApiError(502, [], f"recording {provider_recording_id} has no media_url")
        response = requests.get(media_url, stream=True, timeout=API_TIMEOUT_SECONDS)
        response.raise_for_status()
        return response

    def delete_recording(self, provider_recording_id: str) -> None:
        try:
            self.request("DELETE", self.recording_media_url(provider_recording_id))
        except TelnyxApiError as exc:
            if exc.status != 404:  # already gone there
                raise

    # -- text messages ----------------------------------------------------------------------------

    def send_sms(self, to: str, body: str) -> str:
        """POST /v2/messages (from, to, text); Telnyx's 4xx refusals (but 429) are final."""
        try:
            answer = self.request(
                "POST",
                f"{self.api_base_url}/v2/messages",
                json={"from": self.from_number, "to": to, "text": body},
            ).json()
        except TelnyxApiError as exc:
            if 400 <= exc.status < 500 and exc.status != 429:
                raise SmsRefused(
                    f"Telnyx refused the message: {exc}",
                    unsubscribed=UNSUBSCRIBED_RECIPIENT in exc.codes,
                ) from exc
            raise
        return str((answer.get("data") or {}).get("id") or "")


def json_value(value):
    """A Calls API parameter as TeXML's JSON body takes it: several values space-separated, a
    boolean as JSON's."""
    if isinstance(value, list):
        return " ".join(value)
    return True if value == "true" else value


def api_error(response: requests.Response) -> TelnyxApiError:
    """Telnyx's error answer ({"errors": [{"code", "title", "detail"}]}) as an exception."""
    try:
        errors = response.json().get("errors") or []
    except (ValueError, AttributeError):
        errors = []
    errors = [error for error in errors if isinstance(error, dict)]
    codes = [str(error.get("code", "")) for error in errors]
    message = (
        "; ".join(
            f"{error.get('code', '')} {error.get('detail') or error.get('title') or ''}".strip()
            for error in errors
        )
        or response.reason
        or "no detail"
    )
    return TelnyxApiError(response.status_code, codes, message[:300])
