"""The default provider: no network; walks queued -> ringing -> in_progress -> completed and answers every question,
and keeps the text messages it is asked to send (in `messages`, and in the log) instead of sending them.

The outcome is chosen by the phone number's last digit so tests and demos can reach each one:
0-6 completed, 7 no_answer, 8 busy, 9 failed.
"""

from __future__ import annotations

import hashlib
import logging
import re
import uuid
from collections import deque

from plugins.calls.models import BUSY, COMPLETED, FAILED, IN_PROGRESS, NO_ANSWER, RINGING
from plugins.calls.telephony.base import CLOSING, CallScript, Progress, Reporter, TelephonyProvider, introduction, voicemail_message

log = logging.getLogger("hirekit.calls")

KEPT_MESSAGES = 1000  # a long-running embedded server keeps the last ones, not every one
OUTCOME_BY_LAST_DIGIT = {"7": NO_ANSWER, "8": BUSY, "9": FAILED}
YES_NO_OPENERS = ("do ", "does ", "are ", "is ", "have ", "has ", "can ", "could ", "will ", "would ", "did ", "were ")


def outcome_for(phone_no: str) -> str:
    return OUTCOME_BY_LAST_DIGIT.get(phone_no.strip()[-1:], COMPLETED)


def _seed(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("|".join(parts).encode()).digest()[:4], "big")


def simulated_answer(phone_no: str, question: str) -> str:
    """A deterministic, plausible answer: years for 'how many years', yes/no for closed questions, prose otherwise."""
    seed = _seed(phone_no, question)
    text = question.strip().lower()
    if re.search(r"how many years|years of", text):
        return f"I have {1 + seed % 8} years of experience with that."
    if text.startswith(YES_NO_OPENERS):
        return "Yes, I do, and I can share details with the recruiter." if seed % 5 else "No, not at the moment."
    return "In my last role that was a large part of my work, and I would be glad to go into detail with the team."


class SimulatedProvider(TelephonyProvider):
    name = "simulated"

    def __init__(self):
        self.messages: deque[dict] = deque(maxlen=KEPT_MESSAGES)  # the SMS "sent" last: {"sid", "to", "body"}

    def send_sms(self, to: str, body: str) -> str:
        sid = "SMsimulated" + uuid.uuid4().hex
        self.messages.append({"sid": sid, "to": to, "body": body})
        log.info("simulated sms %s to %s: %s", sid, to, body)
        return sid

    def place(self, script: CallScript, report: Reporter) -> str | None:
        outcome = outcome_for(script.phone_no)
        if outcome == FAILED:
            report(Progress(FAILED, error="the number could not be reached (simulated carrier failure)"))
            return None
        report(Progress(RINGING))
        if outcome in (NO_ANSWER, BUSY):
            left = script.voicemail and outcome == NO_ANSWER
            transcript = [{"speaker": "agent", "text": voicemail_message(script), "question_index": None}] if left else []
            report(Progress(outcome, transcript=transcript, voicemail_left=left))
            return None
        report(Progress(IN_PROGRESS))
        transcript = [{"speaker": "agent", "text": introduction(script), "question_index": None}]
        for index, question in enumerate(script.questions):
            transcript.append({"speaker": "agent", "text": question, "question_index": index})
            transcript.append({"speaker": "candidate", "text": simulated_answer(script.phone_no, question),
                               "question_index": index})
        transcript.append({"speaker": "agent", "text": CLOSING, "question_index": None})
        report(Progress(COMPLETED, transcript=transcript))
        return None
