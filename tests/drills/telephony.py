"""Twilio as the scale-out drill's worker hosts reach it: a stand-in of its REST API on the client
host that takes call requests, and for each placed call a scripted candidate who answers and talks
through ConversationRelay, opening the call's WebSocket (signed as Twilio signs it) through nginx to
whichever relay process nginx picks. As Twilio does, it posts the call's signed status events
(initiated, ringing, in-progress; completed once the socket is gone) to the call's status callback
URL, through nginx too."""

from __future__ import annotations

import json
import random
import re
import secrets
import threading
import time
from dataclasses import dataclass, field
from html import unescape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import requests
from twilio.request_validator import RequestValidator
from websockets.exceptions import ConnectionClosed, ConnectionClosedOK

from plugins.calls.telephony.simulated import ScriptedCandidate
from tests.drills.netns import Host
from tests.relay_stand_in import TwilioSocket

ACCOUNT_SID = "AC" + "d" * 32
AUTH_TOKEN = "drill-auth-token-0123456789abcdef"
RELAY_URL = re.compile(r'<ConversationRelay[^>]*\burl="([^"]+)"')


@dataclass
class PhoneCall:
    """One call Twilio was asked to place, as its candidate lived it."""

    sid: str
    call_id: str
    relay_url: str
    status_url: str
    to: str
    connected_at: float | None = None
    upstream: str = ""  # the relay that took the socket (nginx's X-Drill-Upstream on the handshake)
    turns: int = 0
    # then talking, and ended (the relay said end), dropped (the socket died), refused
    outcome: str = "ringing"
    detail: str = ""
    ended_at: float | None = None
    events: list[int] = field(default_factory=list)  # the status callbacks' answers, in order
    completed_lost: bool = False  # the `completed` event is never sent (as if lost on its way)


@dataclass
class TwilioStandIn:
    """Twilio's REST API for calls on the client host (`port`): create answers a call sid and starts
    its candidate; update (a hang-up) and fetch answer the call. The candidate pauses `pause`
    seconds (±50%) before each answer."""

    host: Host
    port: int
    pause: float = 1.0
    calls: dict[str, PhoneCall] = field(default_factory=dict)
    hang_ups: list[str] = field(default_factory=list)

    def __post_init__(self):
        self._lock = threading.Lock()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                form = {
                    k: v[0]
                    for k, v in parse_qs(
                        self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                    ).items()
                }
                if self.path.endswith("/Calls.json"):
                    self.answer(201, stand_in.place(form))
                else:  # Calls/<sid>.json: the app hangs up a call it ended
                    sid = self.path.rsplit("/", 1)[-1].removesuffix(".json")
                    stand_in.hang_ups.append(sid)
                    self.answer(200, {"sid": sid, "status": form.get("Status", "in-progress")})

            def do_GET(self):
                self.answer(
                    200,
                    {
                        "sid": self.path.rsplit("/", 1)[-1].removesuffix(".json"),
                        "status": "in-progress",
                    },
                )

            def answer(self, status: int, body: dict):
                payload = json.dumps(
                    {"account_sid": ACCOUNT_SID, "api_version": "2010-04-01", **body}
                ).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        with self.host.entered():
            self.server = ThreadingHTTPServer((self.host.address, self.port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def api_url(self) -> str:
        return f"http://{self.host.address}:{self.port}"

    def place(self, form: dict) -> dict:
        found = RELAY_URL.search(form.get("Twiml", ""))
        sid = "CA" + secrets.token_hex(16)
        if not found:
            return {"sid": sid, "status": "failed"}
        relay_url = unescape(found.group(1))
        call = PhoneCall(
            sid,
            relay_url.rsplit("/", 1)[-1],
            relay_url,
            form.get("StatusCallback", ""),
            form.get("To", ""),
        )
        with self._lock:
            self.calls[call.call_id] = call
        threading.Thread(target=self._answer, args=(call,), daemon=True).start()
        return {
            "sid": sid,
            "to": form.get("To"),
            "from": form.get("From"),
            "status": "queued",
            "direction": "outbound-api",
        }

    def snapshot(self) -> list[PhoneCall]:
        with self._lock:
            return list(self.calls.values())

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _answer(self, call: PhoneCall) -> None:
        """The phone rings a second, then the candidate talks through the relay until an end or the
        socket dies."""
        self.host.enter_for_good()
        with requests.Session() as session:
            self._status(session, call, "initiated")
            self._status(session, call, "ringing")
            time.sleep(1.0)
            self._status(session, call, "in-progress")
            self._talk(call)
            if call.completed_lost:
                return
            self._status(
                session,
                call,
                "completed",
                CallDuration=str(int(call.ended_at - call.connected_at))
                if call.connected_at
                else "0",
            )

    def _status(
        self, session: requests.Session, call: PhoneCall, status: str, **extra: str
    ) -> None:
        """One status event, signed as Twilio signs a webhook: the URL and the sorted form
        parameters."""
        if not call.status_url:
            return
        form = {
            "AccountSid": ACCOUNT_SID,
            "ApiVersion": "2010-04-01",
            "CallSid": call.sid,
            "CallStatus": status,
            "Called": call.to,
            "Caller": "+14155550000",
            "CallbackSource": "call-progress-events",
            "Direction": "outbound-api",
            "From": "+14155550000",
            "To": call.to,
            "SequenceNumber": str(len(call.events)),
            **extra,
        }
        signature = RequestValidator(AUTH_TOKEN).compute_signature(call.status_url, form)
        try:
            answer = session.post(
                call.status_url, data=form, headers={"X-Twilio-Signature": signature}, timeout=10
            )
            call.events.append(answer.status_code)
        except requests.RequestException:
            call.events.append(0)

    def _talk(self, call: PhoneCall) -> None:
        signature = RequestValidator(AUTH_TOKEN).compute_signature(call.relay_url, {})
        candidate = ScriptedCandidate("good", "", "Jane")
        socket = None
        try:
            socket = TwilioSocket(
                None, call.call_id, url=call.relay_url, headers={"X-Twilio-Signature": signature}
            )
            call.connected_at, call.outcome = time.monotonic(), "talking"
            call.upstream = socket.ws.response.headers.get("X-Drill-Upstream", "")
            socket.setup(call.sid)
            while True:
                said = socket.agent_turn(timeout=30)
                if socket.received[-1]["type"] == "end":
                    call.outcome = "ended"
                    return
                time.sleep(self.pause * random.uniform(0.5, 1.5))
                socket.say(candidate.reply(said))
                call.turns += 1
        except ConnectionClosedOK:
            call.outcome = "ended"  # the relay closed cleanly after its end
        except ConnectionClosed as exc:
            call.outcome, call.detail = "dropped", str(exc)[:200]
        except Exception as exc:  # noqa: BLE001 - a handshake refused or a relay unreachable: the drill reports it
            call.outcome = "dropped" if call.connected_at else "refused"
            call.detail = f"{type(exc).__name__}: {exc}"[:200]
        finally:
            call.ended_at = time.monotonic()
            if socket is not None:
                socket.close()
