"""The telephony provider interface: place a screening call from a script and report its progress,
and send an SMS (a call's reminder) from the same number."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable
from urllib.parse import urlsplit, urlunsplit


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
    record: bool = False  # the tenant records its calls: the provider records both channels
    language: str = "en-US"
    voice: str = ""  # the provider's text-to-speech voice; empty: its default for the language
    hints: tuple[str, ...] = ()  # the job's own terms, to help speech recognition
    # how the candidate reaches the recruiter (a voicemail says it)
    recruiter_name: str | None = None
    recruiter_phone: str | None = None
    recruiter_email: str | None = None


@dataclass(frozen=True)
class Progress:
    """A status change a provider reports; terminal ones may carry the transcript."""

    status: str
    transcript: list[dict] | None = None
    voicemail_left: bool = False
    error: str | None = None


Reporter = Callable[[Progress], None]


class TelephonyProvider(ABC):
    """Places calls. Synchronous providers report every status through `report` before place()
    returns; asynchronous ones return the provider's call id and report later through their callback
    route."""

    name: str

    @abstractmethod
    def place(self, script: CallScript, report: Reporter) -> str | None:
        """Start the call; returns the provider's call id when it has one."""

    def send_sms(self, to: str, body: str) -> str:
        """Send a text message; returns the provider's message id. Raises SmsRefused when the
        provider refuses this message for good (a bad or unsubscribed number); any other exception
        is a transport error worth a retry. A provider that cannot send text messages refuses every
        one."""
        raise SmsRefused(f"the {self.name} telephony provider cannot send text messages")


def require_settings(provider: str, settings: dict[str, str]) -> None:
    """Refuse to build `provider` while any of its settings (name -> value) is empty."""
    missing = [f"HIREKIT_{name}" for name, value in settings.items() if not value]
    if missing:
        raise ValueError(f"HIREKIT_TELEPHONY={provider} needs {', '.join(missing)}")


class SmsRefused(Exception):
    """The provider refused the message itself: sending it again would fail again. `unsubscribed`
    when the number asked this sender to stop (an SMS STOP the service may have missed)."""

    def __init__(self, message: str, *, unsubscribed: bool = False):
        super().__init__(message)
        self.unsubscribed = unsubscribed


class ConversationRelayProvider(TelephonyProvider):
    """A provider whose calls hold their conversation over a ConversationRelay WebSocket to the
    relay process (plugins.calls.relay): the socket's URL is the callback base URL with its scheme
    switched to ws/wss, on the calls family's relay path; each provider checks its own handshake
    signature and controls its own calls."""

    callback_base_url: str

    def relay_url(self, call_id: str) -> str:
        """The socket's URL as the provider is given it in the call's markup."""
        return relay_url(self.callback_base_url, self.name, call_id)

    def reached_url(self, call_id: str, query: str) -> str:
        """The public URL a socket for the call reached, with the query it came with."""
        url = relay_url(self.callback_base_url, self.name, call_id)
        return f"{url}?{query}" if query else url

    @abstractmethod
    def handshake_valid(self, url: str, headers) -> bool:
        """Whether the WebSocket handshake that reached `url` (reached_url: the relay URL and its
        query) comes from this provider for that call. Runs inside the app context."""

    @abstractmethod
    def hang_up(self, provider_call_id: str) -> None:
        """End the phone call now."""

    @abstractmethod
    def leave_voicemail(self, provider_call_id: str, message: str) -> None:
        """Speak `message` to the answering machine, then hang up."""

    def recording_id_valid(self, provider_recording_id: str) -> bool:
        """Whether a recording callback's id has the shape of this provider's recording ids."""
        return bool(RECORDING_ID.fullmatch(provider_recording_id or ""))

    def delete_recording(self, provider_recording_id: str) -> None:
        """Delete a recording the provider holds (candidate erasure)."""
        raise NotImplementedError(f"the {self.name} provider keeps no recordings")

    def open_recording(self, provider_recording_id: str):
        """The recording's audio as a streamed `requests` response (content type, body in
        chunks)."""
        raise NotImplementedError(f"the {self.name} provider keeps no recordings")


RECORDING_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_:-]{0,63}")  # a provider's id, as a URL segment
RELAY_PATH = "/v1/calls/relay"  # the relay's sockets: RELAY_PATH/<provider>/<call id>


def relay_url(callback_base_url: str, provider: str, call_id: str) -> str:
    """The callback base URL with its scheme switched to WebSocket (https -> wss, http -> ws), on
    the relay path."""
    parts = urlsplit(callback_base_url)
    scheme = "wss" if parts.scheme == "https" else "ws"
    path = f"{parts.path.rstrip('/')}{RELAY_PATH}/{provider}/{call_id}"
    return urlunsplit((scheme, parts.netloc, path, "", ""))


def introduction(script: CallScript) -> str:
    where = f" at {script.company}" if script.company else ""
    return (
        f"Hello {script.candidate_name}, this is the screening assistant calling about the "
        f"{script.job_title} "
        f"position{where}. I have {len(script.questions)} short question(s) for you."
    )


def voicemail_message(script: CallScript, callback_number: str = "") -> str:
    """The message left after the beep: who called, for which company and role, and how to reach
    the recruiter (the job's recruiter phone or email, else the number the call came from)."""
    where = f" at {script.company}" if script.company else ""
    who = script.recruiter_name or "the recruiter"
    if script.recruiter_phone:
        reach = f" To reach {who}, call {script.recruiter_phone}."
    elif script.recruiter_email:
        reach = f" To reach {who}, email {script.recruiter_email}."
    elif callback_number:
        reach = f" To reach {who}, call us back at {callback_number}."
    else:
        reach = f" {who[0].upper()}{who[1:]} will try you again soon."
    return (
        f"Hello {script.candidate_name}, this is the screening assistant calling about the "
        f"{script.job_title} "
        f"position{where}.{reach} Thank you, goodbye."
    )


CLOSING = "Thank you for your time. The recruiter will be in touch about next steps. Goodbye."
