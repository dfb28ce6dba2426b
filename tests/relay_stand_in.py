"""The provider's side of ConversationRelay for tests: a relay process (in a thread, or the deployed
command in its own process) and a client that opens the WebSocket as Twilio (signed) or Telnyx (the
URL's token) does and speaks the documented messages."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import ssl
import subprocess
import sys
import threading
import time

from twilio.request_validator import RequestValidator
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from plugins.calls.relay.server import RelayServer
from plugins.calls.telephony.base import relay_url
from tests.call_factories import JOB_QUESTIONS
from tests.ports import free_port

SCREENING_ANSWERS = (
    "Six years.",
    "Yes, I do.",
    "A night with three admissions; I triaged and asked for help.",
)


class RelayInThread:
    """The relay server on its own event loop in a thread of the test process, on a free port."""

    def __init__(self, app, *, threads: int = 4):
        self.server = RelayServer(app, threads=threads)
        self.loop = asyncio.new_event_loop()
        self.port: int | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self._stop = self.loop.create_future()
        self.loop.run_until_complete(
            self.server.serve("127.0.0.1", 0, stop=self._stop, ready=self._bound)
        )

    def _bound(self, port: int):
        self.port = port
        self._ready.set()

    def __enter__(self):
        self._thread.start()
        assert self._ready.wait(10), "the relay did not start"
        return self

    def __exit__(self, *exc):
        self.loop.call_soon_threadsafe(lambda: self._stop.done() or self._stop.set_result(None))
        self._thread.join(timeout=15)


class RelayProcess:
    """`hirekit-relay`, the deployed command, in its own process with the given HIREKIT_*
    settings."""

    def __init__(self, port: int, environment: dict[str, str]):
        self.port = port
        env = {
            **os.environ,
            **environment,
            "HIREKIT_RELAY_PORT": str(port),
            "HIREKIT_RELAY_HOST": "127.0.0.1",
        }
        self.process = subprocess.Popen(
            [os.path.join(os.path.dirname(sys.executable), "hirekit-relay")],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def __enter__(self):
        line = self.process.stdout.readline()
        if "relay ready" not in line:
            self.process.kill()
            raise AssertionError(f"the relay did not start: {line}{self.process.stderr.read()}")
        return self

    def __exit__(self, *exc):
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log = self.process.stderr.read()


@contextlib.contextmanager
def deployed_relay(make_app, settings: dict, db_url: str, instance_dir):
    """(the API app, the relay process as deployed) on one database, configured alike: `settings`
    (without the HIREKIT_ prefix) given to both, the process through its environment."""
    app = make_app(**settings)
    with RelayProcess(free_port(), relay_environment(settings, db_url, instance_dir)) as relay:
        yield app, relay


def relay_environment(settings: dict, db_url: str, instance_dir) -> dict[str, str]:
    """The HIREKIT_* environment of a relay process configured as a test's app is: `settings`
    (without the prefix), its database, the test session's secret and an instance directory."""
    environment = {f"HIREKIT_{name}": str(value) for name, value in settings.items()}
    environment.update(
        HIREKIT_DATABASE_URL=db_url,
        HIREKIT_SECRET_KEY=os.environ["HIREKIT_SECRET_KEY"],
        HIREKIT_INSTANCE_DIR=str(instance_dir),
        HIREKIT_LOG_LEVEL="WARNING",
        HIREKIT_LLM_URL="",
    )
    return environment


def signed_headers(public_base: str, provider: str, call_id: str, token: str) -> dict:
    """X-Twilio-Signature as Twilio signs the handshake: the relay URL from the TwiML, no
    parameters."""
    return {
        "X-Twilio-Signature": RequestValidator(token).compute_signature(
            relay_url(public_base, provider, call_id), {}
        )
    }


class TwilioSocket:
    """One ConversationRelay socket as Twilio holds it (Telnyx speaks the same messages, on the URL
    with its query): setup, prompts, keys, interrupts; the relay's messages read."""

    def __init__(
        self,
        port: int,
        call_id: str,
        *,
        headers: dict | None = None,
        provider: str = "twilio",
        query: str = "",
        tls: ssl.SSLContext | None = None,
        url: str | None = None,
    ):
        """`tls`: the socket goes to wss://127.0.0.1:`port` (a TLS proxy in front of the relay).
        `url`: the socket goes there instead, as the call's markup names it (through a proxy on
        another host)."""
        self.call_id = call_id
        self._connection = connect(
            url
            or f"{'wss' if tls else 'ws'}://127.0.0.1:{port}/v1/calls/relay/{provider}/{call_id}"
            + (f"?{query}" if query else ""),
            additional_headers=headers or {},
            open_timeout=10,
            close_timeout=5,
            **({"ssl": tls} if tls else {}),
        )
        self.ws = self._connection.__enter__()
        self.received: list[dict] = []

    def send(self, message: dict | str) -> None:
        self.ws.send(message if isinstance(message, str) else json.dumps(message))

    def setup(self, call_sid: str) -> None:
        self.send(
            {
                "type": "setup",
                "sessionId": "VX" + "0" * 32,
                "accountSid": "AC" + "0" * 32,
                "callSid": call_sid,
                "from": "+14155550000",
                "to": "+14155550100",
                "direction": "outbound-api",
                "callType": "PSTN",
                "callStatus": "in-progress",
                "customParameters": {},
            }
        )

    def say(self, words: str) -> None:
        self.send({"type": "prompt", "voicePrompt": words, "lang": "en-US", "last": True})

    def agent_turn(self, timeout: float = 10) -> str:
        """The relay's next turn: text tokens up to the one with last: true (or an end), joined."""
        tokens = []
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            self.received.append(message)
            if message["type"] == "text":
                tokens.append(message["token"])
                if message.get("last"):
                    return "".join(tokens)
            elif message["type"] == "end":
                return "".join(tokens)

    def wait_closed(self, timeout: float = 10) -> int | None:
        """Read until the relay closes the socket; answers its close code."""
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                self.received.append(
                    json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
                )
        except ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd else None
        except TimeoutError:
            raise AssertionError("the relay kept the socket open") from None
        raise AssertionError("the relay kept the socket open")

    def close(self) -> None:
        self.ws.close()


def hold_screening(socket: TwilioSocket, call_sid: str) -> None:
    """Jane's screening (tests/call_factories.py) with the real dialogue over `socket`, from the
    setup naming `call_sid` to the relay's `end` and close: she confirms, has time, answers each
    question (SCREENING_ANSWERS) and asks nothing."""
    socket.setup(call_sid)
    assert "Am I speaking with Jane?" in socket.agent_turn()
    socket.say("Yes, this is Jane.")
    assert "good time" in socket.agent_turn()
    socket.say("Yes, go ahead.")
    assert JOB_QUESTIONS[0] in socket.agent_turn()
    for answer in SCREENING_ANSWERS:
        socket.say(answer)
        socket.agent_turn()
    socket.say("No, that's all, thanks.")
    socket.agent_turn()
    assert socket.wait_closed() == 1000 and socket.received[-1]["type"] == "end"
