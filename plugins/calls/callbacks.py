"""Twilio's and Telnyx's status, machine-detection and recording callbacks (verify the provider's
signature, move the status, leave a voicemail or hang up on a machine, keep the recording's
reference), and Twilio's incoming-message webhook, where a STOP opts the sender out of contact."""

from __future__ import annotations

from flask import current_app
from twilio.request_validator import RequestValidator

from app.errors import ApiError
from app.security.auth import SignedForm
from app.data.records import get_or_404
from plugins.calls import machine, sms_replies
from plugins.calls.lifecycle import advance
from plugins.calls.models import Call
from plugins.calls.recordings import keep_recording
from plugins.calls.telephony import Progress, get_provider
from plugins.calls.telephony.telnyx import signature_valid
from plugins.calls.telephony.twiml import STATUS_MAP
from plugins.candidates.services import opt_in_phone_number, opt_out_phone_number

EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response />'
HANG_UP_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>'
# Twilio's default opt-out and opt-in keywords: a message that is one of them, whatever its case and spacing
OPT_OUT_KEYWORDS = frozenset(
    {"STOP", "STOPALL", "STOP ALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "OPTOUT", "REVOKE"}
)
OPT_IN_KEYWORDS = frozenset({"START", "YES", "UNSTOP"})
NOT_CONFIGURED = "Twilio callbacks are not configured (HIREKIT_TWILIO_AUTH_TOKEN)."
# What Twilio posts (and Telnyx's TeXML, the same fields), with room to spare: about 40 fields, the longest an SMS body of 1,600 characters (under 15 KB
# percent-encoded at worst); anything larger is refused before it is read, let alone parsed or its signature checked.
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
    """The URL Twilio signed: the configured public base plus the path, else the URL this request arrived at."""
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
    signature, timestamp = headers.get("telnyx-signature-ed25519"), headers.get("telnyx-timestamp")
    if not signature_valid(current_app.config["TELNYX_PUBLIC_KEY"], body, signature, timestamp):
        raise ApiError(
            403,
            "The telnyx-signature-ed25519 header does not match this request and "
            "its telnyx-timestamp, or the timestamp is too far from now.",
        )
    call = get_or_404(Call, call_id)
    call_sid = (form.get("CallSid") or "")[:64]
    if call_sid and call.provider_call_id is None:
        Call.update(provider_call_id=call_sid).where(
            (Call.id == call.id) & Call.provider_call_id.is_null()
        ).execute()
        call.provider_call_id = call_sid
    apply_callback(call, form, event=event, voicemail=voicemail, reporter="Telnyx")
    return EMPTY_TWIML


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
    """An SMS to the service's number: STOP (or another opt-out keyword, or Twilio's
    OptOutType=STOP) opts out every candidate with the sender's number, START opts them back in
    (Twilio itself answers those keywords, so the TwiML is empty); any other text is a reply about
    the sender's pending call (plugins.calls.sms_replies), answered in the TwiML when there is an
    answer that may go now (in the candidate's quiet hours it waits for their calling hours)."""
    verify_signature(url, form, signature)
    sender = (form.get("From") or "").strip()
    if not sender:
        raise ApiError(
            422,
            "From is required: the number the message came from.",
            fields={"From": ["Missing data for required field."]},
        )
    keyword = " ".join((form.get("OptOutType") or form.get("Body") or "").split()).upper()
    if keyword in OPT_OUT_KEYWORDS:
        opt_out_phone_number(sender)
    elif keyword in OPT_IN_KEYWORDS:
        opt_in_phone_number(sender)
    else:
        return sms_replies.reply_to(sender, form.get("Body") or "").twiml()
    return EMPTY_TWIML
