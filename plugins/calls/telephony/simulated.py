"""The default provider: no network. A call walks queued -> ringing -> in_progress -> completed
while a scripted candidate talks with the real dialogue through the same relay session the relay
process runs (in-process, on a virtual clock: the call takes no wall time). Text messages it is
asked to send are kept (in `messages`, and in the log) instead of sent.

The phone number's last digit picks who answers, so tests and demos can reach each behaviour: 0, 1
and 5 answer well; 2 is vague; 3 asks about pay and remote work first; 4 asks to be called back
tomorrow at 10; 6 is an answering machine (a voicemail is left when the job allows it); 7 does not
answer; 8 is busy; 9 fails."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import uuid
from collections import deque

from flask import current_app

from plugins.calls.analysis import YES_NO_OPENERS
from plugins.calls.models import BUSY, COMPLETED, FAILED, IN_PROGRESS, NO_ANSWER, RINGING
from plugins.calls.telephony.base import (
    CallScript,
    Progress,
    Reporter,
    TelephonyProvider,
    voicemail_message,
)

log = logging.getLogger("hirekit.calls")

KEPT_MESSAGES = 1000  # a long-running embedded server keeps the last ones, not every one
MACHINE = "machine"
OUTCOME_BY_LAST_DIGIT = {"6": MACHINE, "7": NO_ANSWER, "8": BUSY, "9": FAILED}
PERSONA_BY_LAST_DIGIT = {"2": "vague", "3": "curious", "4": "callback"}
MAX_TURNS = 60  # a scripted call that has not ended by then is hung up
WORDS_PER_SECOND = 2.5  # how long the agent's words take to say, on the virtual clock
SIMULATED_NUMBER = "the number on your caller ID"


def outcome_for(phone_no: str) -> str:
    return OUTCOME_BY_LAST_DIGIT.get(phone_no.strip()[-1:], COMPLETED)


def persona_for(phone_no: str) -> str:
    return PERSONA_BY_LAST_DIGIT.get(phone_no.strip()[-1:], "good")


def _seed(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("|".join(parts).encode()).digest()[:4], "big")


def simulated_answer(phone_no: str, question: str) -> str:
    """A deterministic, plausible answer: years for 'how many years', yes/no for closed questions,
    prose otherwise."""
    seed = _seed(phone_no, question)
    text = question.strip().lower()
    if re.search(r"how many years|years of", text):
        return f"I have {1 + seed % 8} years of experience with that."
    if text.startswith(YES_NO_OPENERS) or re.search(r"\b(do|does|are|is|have|can) you\b", text):
        return (
            "Yes, I do, and I can share details with the recruiter."
            if seed % 5
            else "No, not at the moment."
        )
    return (
        "In my last role that was a large part of my work, and I would be glad to go into "
        "detail with the team."
    )


class ScriptedCandidate:
    """Who answers a simulated call: a reply to each of the agent's turns, as the persona would give
    it."""

    def __init__(self, persona: str, phone_no: str, first_name: str):
        self.persona, self.phone_no, self.first_name = persona, phone_no, first_name
        self.asked = 0  # the curious candidate's own questions asked so far

    def reply(self, agent_said: str) -> str:
        said = agent_said.strip()
        low = said.lower()
        if "speaking with" in low:
            return f"Yes, this is {self.first_name}."
        if self.persona == "callback":
            if "good time" in low:
                return "Sorry, now is not a good time. Can you call me back tomorrow at 10 am?"
            if "when would" in low or "what time" in low:
                return "Tomorrow at 10 am, please."
            return "Yes, that works. Thank you."
        if "good time" in low:
            return "Yes, now is fine."
        if self.persona == "curious" and self.asked < 2:
            self.asked += 1
            return (
                "Before that, what does this job pay?"
                if self.asked == 1
                else "And is the job remote?"
            )
        if "questions about the role" in low or "anything else" in low:
            return "No, that's all. Thank you."
        if self.persona == "vague":
            return "Hmm, it depends really. I'd rather not say."
        return simulated_answer(self.phone_no, last_sentence(said))


def last_sentence(text: str) -> str:
    """The agent's question: the last sentence of its turn (after "Thank you." and the like)."""
    sentences = [part for part in re.split(r"(?<=[.?!])\s+", text) if part]
    return sentences[-1] if sentences else text


def spoken_text(messages) -> str:
    """What the agent's `text` messages say, tokens joined as the provider's text-to-speech would
    join them."""
    spoken = ""
    for message in messages:
        token = message.get("token", "") if message.get("type") == "text" else ""
        if spoken and token and not spoken[-1].isspace() and not token[0].isspace():
            spoken += " "
        spoken += token
    return spoken


class VirtualClock:
    """The session's clock on a simulated call: moves only when the script says time passes."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class SimulatedProvider(TelephonyProvider):
    name = "simulated"

    def __init__(self):
        self.messages: deque[dict] = deque(
            maxlen=KEPT_MESSAGES
        )  # the SMS "sent" last: {"sid", "to", "body"}

    def send_sms(self, to: str, body: str) -> str:
        sid = "SMsimulated" + uuid.uuid4().hex
        self.messages.append({"sid": sid, "to": to, "body": body})
        log.info("simulated sms %s to %s: %s", sid, to, body)
        return sid

    def place(self, script: CallScript, report: Reporter) -> str | None:
        outcome = outcome_for(script.phone_no)
        if outcome == FAILED:
            report(
                Progress(
                    FAILED, error="the number could not be reached (simulated carrier failure)"
                )
            )
            return None
        report(Progress(RINGING))
        if outcome in (NO_ANSWER, BUSY, MACHINE):
            left = script.voicemail and outcome in (NO_ANSWER, MACHINE)
            message = voicemail_message(script, SIMULATED_NUMBER)
            transcript = (
                [{"speaker": "agent", "text": message, "at_ms": 0, "question_index": None}]
                if left
                else []
            )
            report(
                Progress(
                    BUSY if outcome == BUSY else NO_ANSWER,
                    transcript=transcript,
                    voicemail_left=left,
                )
            )
            return None
        report(Progress(IN_PROGRESS))
        refused = converse(
            script, silence_seconds=float(current_app.config["RELAY_SILENCE_SECONDS"])
        )
        report(Progress(FAILED, error=refused) if refused else Progress(COMPLETED))
        return None


def converse(script: CallScript, *, silence_seconds: float) -> str | None:
    """Play the scripted candidate against the dialogue through a relay session, as the provider's
    socket would; answers why the session was refused, if it was (the call ends failed)."""
    from plugins.calls.relay.session import RelaySession, conversation_factory

    clock = VirtualClock()
    session = RelaySession(
        script.call_id,
        conversation_factory(current_app),
        silence_seconds=silence_seconds,
        language=script.language,
        clock=clock,
    )
    first_name = (
        script.candidate_name.split(" ", 1)[0] if script.candidate_name else "the candidate"
    )
    candidate = ScriptedCandidate(persona_for(script.phone_no), script.phone_no, first_name)
    turn = session.accept(
        json.dumps(
            {
                "type": "setup",
                "callSid": "CAsimulated" + script.call_id.replace("-", ""),
                "from": "+10000000000",
                "to": script.phone_no,
                "direction": "outbound-api",
            }
        )
    )
    for _ in range(MAX_TURNS):
        spoken = spoken_text(session.run(turn))
        if session.ended or session.refused:
            break
        clock.now += (
            len(spoken.split()) / WORDS_PER_SECOND + 1 + _seed(script.call_id, str(clock.now)) % 3
        )
        turn = session.accept(
            json.dumps(
                {
                    "type": "prompt",
                    "voicePrompt": candidate.reply(spoken),
                    "lang": script.language,
                    "last": True,
                }
            )
        )
        if turn is None:
            break
    session.close("hung_up")
    return session.refused
