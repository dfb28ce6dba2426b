"""The telephony provider interface: place a screening call from a script and report its progress, and send an SMS
(a call's reminder) from the same number."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class CallScript:
    """Everything a provider needs to run one screening call."""

    call_id: str
    phone_no: str
    candidate_name: str
    job_title: str
    company: str | None
    questions: list[str] = field(default_factory=list)
    voicemail: bool = False  # leave a message when nobody answers


@dataclass(frozen=True)
class Progress:
    """A status change a provider reports; terminal ones may carry the transcript."""

    status: str
    transcript: list[dict] | None = None
    voicemail_left: bool = False
    error: str | None = None


Reporter = Callable[[Progress], None]


class TelephonyProvider(ABC):
    """Places calls. Synchronous providers report every status through `report` before place() returns;
    asynchronous ones return the provider's call id and report later through their callback route."""

    name: str

    @abstractmethod
    def place(self, script: CallScript, report: Reporter) -> str | None:
        """Start the call; returns the provider's call id when it has one."""

    def send_sms(self, to: str, body: str) -> str:
        """Send a text message; returns the provider's message id. Raises SmsRefused when the provider refuses this
        message for good (a bad or unsubscribed number); any other exception is a transport error worth a retry.
        A provider that cannot send text messages refuses every one."""
        raise SmsRefused(f"the {self.name} telephony provider cannot send text messages")


class SmsRefused(Exception):
    """The provider refused the message itself: sending it again would fail again. `unsubscribed` when the number
    asked this sender to stop (an SMS STOP the service may have missed)."""

    def __init__(self, message: str, *, unsubscribed: bool = False):
        super().__init__(message)
        self.unsubscribed = unsubscribed


def introduction(script: CallScript) -> str:
    where = f" at {script.company}" if script.company else ""
    return (f"Hello {script.candidate_name}, this is the screening assistant calling about the {script.job_title} "
            f"position{where}. I have {len(script.questions)} short question(s) for you.")


def voicemail_message(script: CallScript) -> str:
    return (f"Hello {script.candidate_name}, this is the screening assistant calling about the {script.job_title} "
            "position. We will try you again soon.")


CLOSING = "Thank you for your time. The recruiter will be in touch about next steps. Goodbye."
