"""Twilio's status, machine-detection and recording callbacks (verify the signature, move the status,
leave a voicemail or hang up on a machine, keep the recording's reference), and its incoming-message
webhook, where a STOP opts the sender out of contact."""

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
from plugins.calls.telephony.twilio import STATUS_MAP
from plugins.candidates.services import opt_in_phone_number, opt_out_phone_number

EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response />'
HANG_UP_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>'
# Twilio's default opt-out and opt-in keywords: a message that is one of them, whatever its case and spacing
OPT_OUT_KEYWORDS = frozenset({"STOP", "STOPALL", "STOP ALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "OPTOUT", "REVOKE"})
OPT_IN_KEYWORDS = frozenset({"START", "YES", "UNSTOP"})
NOT_CONFIGURED = "Twilio callbacks are not configured (HIREKIT_TWILIO_AUTH_TOKEN)."
# What Twilio posts, with room to spare: about 40 fields, the longest an SMS body of 1,600 characters (under 15 KB
# percent-encoded at worst); anything larger is refused before it is read, let alone parsed or its signature checked.
TWILIO_FORM_MAX_BYTES = 32 * 1024
TWILIO_FORM_MAX_FIELDS = 100
TWILIO_FORM = SignedForm(max_bytes=TWILIO_FORM_MAX_BYTES, max_fields=TWILIO_FORM_MAX_FIELDS,
                         configured_by="TWILIO_AUTH_TOKEN", not_configured=NOT_CONFIGURED)


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


def handle(url: str, form: dict, signature: str | None, *, call_id: str, event: str | None = None,
           voicemail: bool = False) -> str:
    """Apply one callback (a status change, the machine-detection verdict or a finished recording);
    answers the TwiML Twilio should run next (none: these callbacks do not steer the call)."""
    verify_signature(url, form, signature)
    call = get_or_404(Call, call_id)
    if event == "amd":
        machine.on_verdict(call, form.get("AnsweredBy", ""), voicemail=voicemail)
        return EMPTY_TWIML
    if event == "recording":
        record_recording(call, form)
        return EMPTY_TWIML
    if event:
        raise ApiError(422, f"Unknown callback event {event!r}: amd or recording.")
    status = STATUS_MAP.get(form.get("CallStatus", ""))
    if status is None:
        raise ApiError(422, f"Unknown CallStatus {form.get('CallStatus')!r}.")
    error = f"Twilio reported {form.get('CallStatus')}" if status in ("failed", "canceled") else None
    advance(call.id, Progress(status, error=error))
    return EMPTY_TWIML


def record_recording(call: Call, form: dict) -> None:
    """A finished recording: keep its reference (the audio stays at Twilio, fetched on request)."""
    if form.get("RecordingStatus", "completed") != "completed":
        return
    recording_id = form.get("RecordingSid") or ""
    if not recording_id.startswith("RE") or len(recording_id) > 64:
        raise ApiError(422, "RecordingSid is not a Twilio recording id.",
                       fields={"RecordingSid": ["Not a recording id."]})
    provider = get_provider()
    keep_recording(call, provider="twilio", provider_recording_id=recording_id,
                   media_url=provider.recording_media_url(recording_id),
                   channels=_integer(form.get("RecordingChannels"), default=2),
                   duration_seconds=_integer(form.get("RecordingDuration"), default=None))


def _integer(value, *, default):
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def handle_incoming_message(url: str, form: dict, signature: str | None) -> str:
    """An SMS to the service's number: STOP (or another opt-out keyword, or Twilio's OptOutType=STOP) opts out every
    candidate with the sender's number, START opts them back in (Twilio itself answers those keywords, so the TwiML
    is empty); any other text is a reply about the sender's pending call (plugins.calls.sms_replies), answered in
    the TwiML when there is one."""
    verify_signature(url, form, signature)
    sender = (form.get("From") or "").strip()
    if not sender:
        raise ApiError(422, "From is required: the number the message came from.", fields={"From": ["Missing data for required field."]})
    keyword = " ".join((form.get("OptOutType") or form.get("Body") or "").split()).upper()
    if keyword in OPT_OUT_KEYWORDS:
        opt_out_phone_number(sender)
    elif keyword in OPT_IN_KEYWORDS:
        opt_in_phone_number(sender)
    else:
        return sms_replies.answer(sender, form.get("Body") or "").twiml()
    return EMPTY_TWIML
