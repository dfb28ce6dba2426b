"""Twilio's status and speech callbacks (verify the signature, record answers, ask the next question, move the status),
and its incoming-message webhook, where a STOP opts the sender out of contact."""

from __future__ import annotations

from flask import current_app
from twilio.request_validator import RequestValidator

from app.data.db import utcnow
from app.errors import ApiError
from app.security.auth import SignedForm
from app.data.records import get_or_404
from plugins.calls import sms_replies
from plugins.calls.lifecycle import advance, questions_for
from plugins.calls.models import FINAL_STATUSES, Call
from plugins.calls.telephony import Progress
from plugins.calls.telephony.twilio import STATUS_MAP, question_twiml
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


def handle(url: str, form: dict, signature: str | None, *, call_id: str, question: str | None, silent: bool) -> str:
    """Apply one callback; answers the TwiML Twilio should run next."""
    verify_signature(url, form, signature)
    call = get_or_404(Call, call_id)
    if question is not None:
        return record_answer(call, question, form.get("SpeechResult"), silent=silent)
    status = STATUS_MAP.get(form.get("CallStatus", ""))
    if status is None:
        raise ApiError(422, f"Unknown CallStatus {form.get('CallStatus')!r}.")
    error = f"Twilio reported {form.get('CallStatus')}" if status in ("failed", "canceled") else None
    advance(call.id, Progress(status, error=error))
    return EMPTY_TWIML


def record_answer(call: Call, question: str, speech: str | None, *, silent: bool) -> str:
    """Add the candidate's answer to the transcript and ask the next question; a call already in a final state
    (completed, failed, canceled, anonymized or not) takes no more content: Twilio is told to hang up."""
    if call.status in FINAL_STATUSES:
        return HANG_UP_TWIML
    try:
        index = int(question)
    except ValueError:
        raise ApiError(422, "question must be an integer.") from None
    questions = questions_for(call)
    if not 0 <= index < len(questions):  # only numbers this service put in its own callback URLs
        raise ApiError(422, f"question must be one of the call's question numbers (0 to {len(questions) - 1}).")
    transcript = list(call.transcript or [])
    if not any(turn.get("question_index") == index and turn.get("speaker") == "agent" for turn in transcript):
        transcript.append({"speaker": "agent", "text": questions[index], "question_index": index})
    if speech and not silent:
        transcript.append({"speaker": "candidate", "text": speech.strip(), "question_index": index})
    following = index + 1
    if following < len(questions):
        transcript.append({"speaker": "agent", "text": questions[following], "question_index": following})
    updated = Call.update(transcript=transcript, updated_at=utcnow()).where(  # news: not stalled
        (Call.id == call.id) & Call.status.not_in(FINAL_STATUSES)).execute()
    if not updated:  # ended (or anonymized) since it was read
        return HANG_UP_TWIML
    return question_twiml(current_app.config["TWILIO_CALLBACK_BASE_URL"], str(call.id), questions, following)


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
