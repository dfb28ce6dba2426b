"""What an answering machine gets: with the job's voicemail on, a short message after the beep (who
called, for which company and role, how to reach the recruiter), then the call ends with the attempt
counted; otherwise the provider hangs up and the schedule tries again. Fed by the provider's
asynchronous machine-detection verdict."""

from __future__ import annotations

import logging

from app.data.db import utcnow

from plugins.calls.lifecycle import advance
from plugins.calls.models import FINAL_STATUSES, NO_ANSWER, Call
from plugins.calls.placing import script_for
from plugins.calls.telephony import Progress, get_provider
from plugins.calls.telephony.base import voicemail_message

log = logging.getLogger("hirekit.calls")

HUMAN_VERDICTS = (
    "human",
    "unknown",
    "",
)  # unknown: Twilio could not tell; the conversation goes on
MESSAGE_ENDED = (
    "machine_end_beep",
    "machine_end_silence",
    "machine_end_other",
)  # the time to speak


def on_verdict(call: Call, answered_by: str, *, voicemail: bool) -> None:
    """Act on the provider's AnsweredBy for a call still going; a late or repeated verdict does
    nothing."""
    if call.status in FINAL_STATUSES or answered_by in HUMAN_VERDICTS:
        return
    if voicemail and answered_by == "machine_start":
        return  # the verdict at the end of the greeting follows: the message is left after the beep
    provider = get_provider()
    if voicemail and answered_by in MESSAGE_ENDED:
        message = voicemail_message(script_for(call), getattr(provider, "from_number", ""))
        provider.leave_voicemail(call.provider_call_id, message)
        at_ms = int((utcnow() - call.started_at).total_seconds() * 1000) if call.started_at else 0
        transcript = [
            *(call.transcript or []),
            {"speaker": "agent", "text": message, "at_ms": at_ms, "question_index": None},
        ]
        advance(call.id, Progress(NO_ANSWER, transcript=transcript, voicemail_left=True))
        log.info("call %s: voicemail left after %s", call.id, answered_by)
        return
    provider.hang_up(call.provider_call_id)
    advance(
        call.id,
        Progress(NO_ANSWER, error=f"answered by a machine ({answered_by[:32]}): no message left"),
    )
    log.info("call %s: hung up on %s", call.id, answered_by)
