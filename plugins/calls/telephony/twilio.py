"""The Twilio provider: places the call with the twilio client; TwiML asks each question with a speech <Gather>,
and Twilio reports status and answers to POST /v1/calls/callbacks/twilio (signature-checked). Reminders go as SMS
through Twilio's Messaging API with the same client, from the same number."""

from __future__ import annotations

from urllib.parse import urlencode

from twilio.base.exceptions import TwilioRestException
from twilio.http.http_client import TwilioHttpClient
from twilio.rest import Client
from twilio.twiml.voice_response import VoiceResponse

from plugins.calls.models import BUSY, CANCELED, COMPLETED, FAILED, IN_PROGRESS, NO_ANSWER, QUEUED, RINGING
from plugins.calls.telephony.base import CLOSING, CallScript, Reporter, SmsRefused, TelephonyProvider, introduction

CALLBACK_PATH = "/v1/calls/callbacks/twilio"
# Twilio's CallStatus values -> ours
STATUS_MAP = {"queued": QUEUED, "initiated": QUEUED, "ringing": RINGING, "in-progress": IN_PROGRESS,
              "completed": COMPLETED, "busy": BUSY, "no-answer": NO_ANSWER, "failed": FAILED, "canceled": CANCELED}
STATUS_EVENTS = ["initiated", "ringing", "answered", "completed"]
SPEECH_TIMEOUT_SECONDS = 5
API_TIMEOUT_SECONDS = 10  # one request to Twilio's REST API; the twilio client waits forever without one
UNSUBSCRIBED_RECIPIENT = 21610  # Twilio's error: the number replied STOP to this sender


def callback_url(base_url: str, call_id: str, **params) -> str:
    return f"{base_url.rstrip('/')}{CALLBACK_PATH}?{urlencode({'call_id': call_id, **params})}"


def question_twiml(base_url: str, call_id: str, questions: list[str], index: int, *, opening: str | None = None) -> str:
    """TwiML that asks question `index` and posts the spoken answer back; after the last one it says goodbye."""
    response = VoiceResponse()
    if opening:
        response.say(opening)
    if index < len(questions):
        gather = response.gather(input="speech", action=callback_url(base_url, call_id, question=index), method="POST",
                                 speech_timeout="auto", timeout=SPEECH_TIMEOUT_SECONDS)
        gather.say(questions[index])
        # No speech: move on to the next question instead of hanging up
        response.redirect(callback_url(base_url, call_id, question=index, silent=1), method="POST")
    else:
        response.say(CLOSING)
        response.hangup()
    return str(response)


class TwilioProvider(TelephonyProvider):
    name = "twilio"

    def __init__(self, *, account_sid: str, auth_token: str, from_number: str, callback_base_url: str,
                 api_base_url: str = "", http_client=None):
        missing = [name for name, value in (("TWILIO_ACCOUNT_SID", account_sid), ("TWILIO_AUTH_TOKEN", auth_token),
                                            ("TWILIO_FROM_NUMBER", from_number),
                                            ("TWILIO_CALLBACK_BASE_URL", callback_base_url)) if not value]
        if missing:
            raise ValueError(f"HIREKIT_TELEPHONY=twilio needs {', '.join('HIREKIT_' + m for m in missing)}")
        self.client = Client(account_sid, auth_token,
                             http_client=http_client or TwilioHttpClient(timeout=API_TIMEOUT_SECONDS))
        if api_base_url:
            self.client.api.base_url = api_base_url.rstrip("/")  # the Api domain's root, https://api.twilio.com
        self.from_number = from_number
        self.callback_base_url = callback_base_url

    def place(self, script: CallScript, report: Reporter) -> str | None:
        twiml = question_twiml(self.callback_base_url, script.call_id, script.questions, 0, opening=introduction(script))
        call = self.client.calls.create(
            to=script.phone_no, from_=self.from_number, twiml=twiml,
            status_callback=callback_url(self.callback_base_url, script.call_id), status_callback_method="POST",
            status_callback_event=STATUS_EVENTS)
        return call.sid

    def send_sms(self, to: str, body: str) -> str:
        """POST /2010-04-01/Accounts/{sid}/Messages.json (To, From, Body); Twilio's 4xx refusals (but 429) are final."""
        try:
            message = self.client.messages.create(to=to, from_=self.from_number, body=body)
        except TwilioRestException as exc:
            if 400 <= exc.status < 500 and exc.status != 429:
                raise SmsRefused(f"Twilio refused the message ({exc.code}): {exc.msg}",
                                 unsubscribed=exc.code == UNSUBSCRIBED_RECIPIENT) from exc
            raise
        return message.sid
