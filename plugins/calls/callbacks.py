"""Twilio's and Telnyx's status, machine-detection and recording callbacks (verify the provider's
signature, move the status, leave a voicemail or hang up on a machine, keep the recording's
reference), and both providers' incoming-message webhooks, where a STOP opts the sender out of
contact and any other text is a reply about the sender's pending call."""

from __future__ import annotations

import logging

import orjson
from flask import current_app
from twilio.request_validator import RequestValidator

from app.errors import ApiError
from app.http.request_json import loads_request
from app.security.auth import SignedForm
from app.data.records import get_or_404
from plugins.calls import machine, sms_replies
from plugins.calls.lifecycle import advance
from plugins.calls.models import COMPLETED, Call
from plugins.calls.recordings import keep_recording
from plugins.calls.relay.claims import RELAY_PROVIDERS, line_closed
from plugins.calls.telephony import Progress, get_provider
from plugins.calls.telephony.telnyx import signature_valid
from plugins.calls.telephony.twiml import STATUS_MAP
from plugins.candidates.services import opt_in_phone_number, opt_out_phone_number

log = logging.getLogger("hirekit.calls")

EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response />'
HANG_UP_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>'
# Twilio's default opt-out and opt-in keywords: a message that is one of them, whatever its case and
# spacing
OPT_OUT_KEYWORDS = frozenset(
    {"STOP", "STOPALL", "STOP ALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "OPTOUT", "REVOKE"}
)
OPT_IN_KEYWORDS = frozenset({"START", "YES", "UNSTOP"})
# Telnyx's: what its messaging profile blocks and unblocks the sender for by default
TELNYX_OPT_OUT_KEYWORDS = frozenset(
    {"STOP", "STOPALL", "STOP ALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT"}
)
TELNYX_OPT_IN_KEYWORDS = frozenset({"START", "UNSTOP"})
MESSAGE_RECEIVED = "message.received"  # Telnyx's event for a text to the number
NOT_CONFIGURED = "Twilio callbacks are not configured (HIREKIT_TWILIO_AUTH_TOKEN)."
# What Twilio posts (and Telnyx's TeXML, the same fields), with room to spare: about 40 fields, the
# longest an SMS body of 1,600 characters (under 15 KB percent-encoded at worst); Telnyx's JSON
# message events are smaller (the text under 20 KB \u-escaped at worst); anything larger is
# refused before it is read, let alone parsed or its signature checked.
CALLBACK_FORM_MAX_BYTES = 32 * 1024
CALLBACK_FORM_MAX_FIELDS = 100
TWILIO_FORM = SignedForm(
    max_bytes=CALLBACK_FORM_MAX_BYTES,
    max_fields=CALLBACK_FORM_MAX_FIELDS,
    configured_by="TWILIO_AUTH_TOKEN",
    not_configured=NOT_CONFIGURED,
)
TELNYX_FORM = SignedForm(
    max_bytes=CALLBACK_FORM_MAX_BYTES,
    max_fields=CALLBACK_FORM_MAX_FIELDS,
    configured_by="TELNYX_PUBLIC_KEY",
    not_configured="Telnyx callbacks are not configured (HIREKIT_TELNYX_PUBLIC_KEY).",
)


def public_url(path_with_query: str, request_url: str) -> str:
    """The URL Twilio signed: the configured public base plus the path, else the URL this request
    arrived at."""
    base = current_app.config["TWILIO_CALLBACK_BASE_URL"]
    return base.rstrip("/") + path_with_query if base else request_url


def verify_signature(url: str, form: dict, signature: str | None) -> None:
    token = current_app.config["TWILIO_AUTH_TOKEN"]
    if not token:
        raise ApiError(404, NOT_CONFIGURED)
    if not signature or not RequestValidator(token).validate(url, form, signature):
        raise ApiError(403, "The X-Twilio-Signature header does not match this request.")


def handle(
    url: str,
    form: dict,
    signature: str | None,
    *,
    call_id: str,
    event: str | None = None,
    voicemail: bool = False,
) -> str:
    """Apply one Twilio callback (a status change, the machine-detection verdict or a finished
    recording); answers the TwiML Twilio should run next (none: these callbacks do not steer the
    call)."""
    verify_signature(url, form, signature)
    apply_callback(
        get_or_404(Call, call_id), form, event=event, voicemail=voicemail, reporter="Twilio"
    )
    return EMPTY_TWIML


def handle_telnyx(
    body: bytes,
    form: dict,
    headers,
    *,
    call_id: str,
    event: str | None = None,
    voicemail: bool = False,
) -> str:
    """Apply one Telnyx TeXML callback once its Ed25519 signature over `timestamp|body` holds;
    answers empty TeXML. The call's Telnyx id is kept from the first callback naming it when
    placing the call did not answer one."""
    verify_telnyx_signature(body, headers)
    call = get_or_404(Call, call_id)
    call_sid = (form.get("CallSid") or "")[:64]
    if call_sid and call.provider_call_id is None:
        Call.update(provider_call_id=call_sid).where(
            (Call.id == call.id) & Call.provider_call_id.is_null()
        ).execute()
        call.provider_call_id = call_sid
    apply_callback(call, form, event=event, voicemail=voicemail, reporter="Telnyx")
    return EMPTY_TWIML


def verify_telnyx_signature(body: bytes, headers) -> None:
    """403 unless the body carries Telnyx's Ed25519 signature over `timestamp|body`, made within
    5 minutes of now (the route is 404 before this while no public key is configured)."""
    signature, timestamp = headers.get("telnyx-signature-ed25519"), headers.get("telnyx-timestamp")
    if not signature_valid(current_app.config["TELNYX_PUBLIC_KEY"], body, signature, timestamp):
        raise ApiError(
            403,
            "The telnyx-signature-ed25519 header does not match this request and "
            "its telnyx-timestamp, or the timestamp is too far from now.",
        )


def apply_callback(
    call: Call, form: dict, *, event: str | None, voicemail: bool, reporter: str
) -> None:
    """A TwiML-dialect callback's effect, whoever sent it: its CallStatus moves the call, an `amd`
    event's AnsweredBy leaves a voicemail or hangs up, a `recording` event keeps the recording."""
    if event == "amd":
        machine.on_verdict(call, form.get("AnsweredBy", ""), voicemail=voicemail)
        return
    if event == "recording":
        record_recording(call, form)
        return
    if event:
        raise ApiError(422, f"Unknown callback event {event!r}: amd or recording.")
    status = STATUS_MAP.get(form.get("CallStatus", ""))
    if status is None:
        raise ApiError(422, f"Unknown CallStatus {form.get('CallStatus')!r}.")
    if status == COMPLETED and call.provider in RELAY_PROVIDERS:
        line_closed(call.id)  # the line, not the screening: the conversation's record decides
        return
    reported = form.get("CallStatus")
    error = f"{reporter} reported {reported}" if status in ("failed", "canceled") else None
    advance(call.id, Progress(status, error=error))


def record_recording(call: Call, form: dict) -> None:
    """A finished recording: keep its reference (the audio stays at the provider, fetched on
    request)."""
    if form.get("RecordingStatus", "completed") != "completed":
        return
    recording_id = form.get("RecordingSid") or ""
    provider = get_provider()
    if not provider.recording_id_valid(recording_id):
        raise ApiError(
            422,
            f"RecordingSid is not a {provider.name} recording id.",
            fields={"RecordingSid": ["Not a recording id."]},
        )
    keep_recording(
        call,
        provider=provider.name,
        provider_recording_id=recording_id,
        media_url=provider.recording_media_url(recording_id),
        channels=_integer(form.get("RecordingChannels"), default=2),
        duration_seconds=_integer(form.get("RecordingDuration"), default=None),
    )


def _integer(value, *, default):
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def handle_incoming_message(url: str, form: dict, signature: str | None) -> str:
    """Twilio's incoming message (act_on_message; OptOutType=STOP or START is Twilio's Advanced
    Opt-Out naming the keyword): the answer, when one may go now, is the TwiML's Message (Twilio
    answers its keywords itself, so the TwiML is empty for those)."""
    verify_signature(url, form, signature)
    sender = required_sender(form.get("From"), "From")
    reply = act_on_message(sender, form.get("Body") or "", form.get("OptOutType"))
    return reply.twiml()


def handle_telnyx_message(body: bytes, headers) -> None:
    """Telnyx's message webhook once its signature holds: a `message.received` event is a text to
    the number; its answer, when one may go now, is sent as a message of its own (Telnyx's webhook
    answer carries none). Other events (an outbound message's status) are taken and ignored."""
    verify_telnyx_signature(body, headers)
    try:
        event = loads_request(body)
    except orjson.JSONDecodeError:
        raise ApiError(
            400, "The body is not JSON: Telnyx's message webhook sends a JSON event."
        ) from None
    data = event.get("data") if isinstance(event, dict) else None
    if not isinstance(data, dict) or not isinstance(data.get("payload"), dict):
        raise ApiError(
            422,
            "data.payload is required: Telnyx's event and its message.",
            fields={"data.payload": ["Missing data for required field."]},
        )
    if data.get("event_type") != MESSAGE_RECEIVED:
        return
    message = data["payload"]
    origin = message.get("from")
    sender = required_sender(
        origin.get("phone_number") if isinstance(origin, dict) else None,
        "data.payload.from.phone_number",
    )
    text = message.get("text") if isinstance(message.get("text"), str) else ""
    reply = act_on_message(
        sender, text, opt_out=TELNYX_OPT_OUT_KEYWORDS, opt_in=TELNYX_OPT_IN_KEYWORDS
    )
    if reply.text:
        try:
            get_provider().send_sms(sender, reply.text)
        except Exception as error:  # noqa: BLE001 - the text was acted on; only its answer is lost
            log.warning("the answer to a text from %s was not sent: %s", sender, error)


def required_sender(number, field: str) -> str:
    """The number a message came from, or 422 naming the field."""
    sender = number.strip() if isinstance(number, str) else ""
    if not sender:
        raise ApiError(
            422,
            f"{field} is required: the number the message came from.",
            fields={field: ["Missing data for required field."]},
        )
    return sender


def act_on_message(
    sender: str,
    text: str,
    keyword: str | None = None,
    *,
    opt_out: frozenset = OPT_OUT_KEYWORDS,
    opt_in: frozenset = OPT_IN_KEYWORDS,
) -> sms_replies.Reply:
    """A text to the service's number, whichever provider brought it: one of the provider's opt-out
    keywords (or `keyword`, the provider naming it) opts out every candidate with the sender's
    number, an opt-in keyword opts them back in (the provider answers those itself: nothing to
    say); any other text is a reply about the sender's pending call (plugins.calls.sms_replies),
    whose answer goes now, or waits for the candidate's calling hours."""
    word = " ".join((keyword or text or "").split()).upper()
    if word in opt_out:
        opt_out_phone_number(sender)
    elif word in opt_in:
        opt_in_phone_number(sender)
    else:
        return sms_replies.reply_to(sender, text)
    return sms_replies.Reply(None)
