"""Telnyx's side for tests: a local server standing in for its REST API (TeXML calls, their updates,
recordings, the Messaging API) that keeps each request as sent, its Ed25519 webhook signing with
a key pair made for the test run, and the messaging webhook's events as Telnyx posts them."""

from __future__ import annotations

import base64
import json
import time
from urllib.parse import urlencode

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from werkzeug import Response

ACCOUNT_SID = "61bf923e-5e4d-4595-a110-56190ea18a1b"
CONNECTION_ID = "1773070540731319841"
API_KEY = "KEY0123456789ABCDEF_test"
FROM_NUMBER = "+13125550000"
PUBLIC_BASE = "https://hirekit.example.com"
CALL_SID = "v3:KBnLO0ZK3DhKM5s7bE9VluaSmKsOchKht_fUYvxcp8ysbmzCCtpkmA"
RECORDING_SID = "e1b3a8f2-7c4d-4e5f-9a0b-1c2d3e4f5a6b"
ACCOUNT_PATH = f"/v2/texml/Accounts/{ACCOUNT_SID}"
CALLS_PATH = f"{ACCOUNT_PATH}/Calls"
CALL_PATH = f"{CALLS_PATH}/{CALL_SID}"
RECORDING_PATH = f"{ACCOUNT_PATH}/Recordings/{RECORDING_SID}.json"
MEDIA_PATH = f"/media/{RECORDING_SID}.mp3"
MESSAGES_PATH = "/v2/messages"
AUDIO = b"ID3" + bytes(range(256)) * 40

SIGNING_KEY = Ed25519PrivateKey.generate()
PUBLIC_KEY = base64.b64encode(
    SIGNING_KEY.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
).decode()


def telnyx_settings(server, **overrides) -> dict:
    """The HIREKIT_TELNYX_* settings (without the prefix) pointing at the stand-in `server`."""
    return {
        "TELEPHONY": "telnyx",
        "TELNYX_API_KEY": API_KEY,
        "TELNYX_ACCOUNT_SID": ACCOUNT_SID,
        "TELNYX_CONNECTION_ID": CONNECTION_ID,
        "TELNYX_FROM_NUMBER": FROM_NUMBER,
        "TELNYX_CALLBACK_BASE_URL": PUBLIC_BASE,
        "TELNYX_PUBLIC_KEY": PUBLIC_KEY,
        "TELNYX_API_BASE_URL": server.url_for("/"),
        **overrides,
    }


def call_resource(sid: str | None = CALL_SID) -> dict:
    """The call resource Telnyx answers a TeXML call create with."""
    resource = {
        "account_sid": ACCOUNT_SID,
        "from": FROM_NUMBER,
        "to": "+14155550100",
        "status": "queued",
        "direction": "outbound-api",
    }
    if sid:
        resource.update(sid=sid, uri=f"/v2/texml/Accounts/{ACCOUNT_SID}/Calls/{sid}")
    return resource


def serve_telnyx(httpserver, *, call_sid: str | None = CALL_SID):
    """The REST API as the provider uses it: create a TeXML call, update it (new TeXML, or hang
    up), read a recording (its media_url on this server) and its audio, delete it, send a message.
    Kept on the server: `placed` (the create requests), `updates` (forms), `recording_reads`,
    `recording_deletes`, `messages` (JSON bodies)."""
    httpserver.placed, httpserver.updates, httpserver.messages = [], [], []
    httpserver.recording_reads, httpserver.recording_deletes = [], []

    def place(request):
        httpserver.placed.append(request)
        return json_response(call_resource(call_sid))

    def update(request):
        httpserver.updates.append(request.form.to_dict())
        return json_response({**call_resource(), "status": "in-progress"})

    def recording(request):
        httpserver.recording_reads.append(request.headers.get("Authorization"))
        return json_response(
            {
                "sid": RECORDING_SID,
                "account_sid": ACCOUNT_SID,
                "call_sid": CALL_SID,
                "channels": 2,
                "duration": "73",
                "status": "completed",
                "media_url": httpserver.url_for(MEDIA_PATH),
            }
        )

    def delete(request):
        httpserver.recording_deletes.append(request.path)
        return Response(status=204)

    def message(request):
        httpserver.messages.append(request)
        body = request.get_json()
        if body["to"].endswith("0199"):  # a number that texted STOP to this sender
            return json_response(
                {
                    "errors": [
                        {
                            "code": "40300",
                            "title": "Blocked due to STOP message",
                            "detail": f"Messages cannot be sent from '{body['from']}' to "
                            f"'{body['to']}' due to an existing block rule.",
                        }
                    ]
                },
                status=400,
            )
        return json_response(
            {
                "data": {
                    "id": f"40317{len(httpserver.messages):03d}-message",
                    "record_type": "message",
                    "text": body["text"],
                }
            }
        )

    httpserver.expect_request(CALLS_PATH, method="POST").respond_with_handler(place)
    httpserver.expect_request(CALL_PATH, method="POST").respond_with_handler(update)
    httpserver.expect_request(RECORDING_PATH, method="GET").respond_with_handler(recording)
    httpserver.expect_request(MEDIA_PATH, method="GET").respond_with_data(
        AUDIO, content_type="audio/mpeg"
    )
    httpserver.expect_request(RECORDING_PATH, method="DELETE").respond_with_handler(delete)
    httpserver.expect_request(MESSAGES_PATH, method="POST").respond_with_handler(message)
    return httpserver


def json_response(body: dict, status: int = 200) -> Response:
    return Response(json.dumps(body), status=status, content_type="application/json")


def signed_headers(
    body: bytes, *, timestamp: int | None = None, key: Ed25519PrivateKey = SIGNING_KEY
) -> dict:
    """telnyx-timestamp and telnyx-signature-ed25519 as Telnyx signs a webhook: Ed25519 over
    `timestamp|body`."""
    timestamp = int(time.time()) if timestamp is None else timestamp
    signature = key.sign(str(timestamp).encode() + b"|" + body)
    return {
        "telnyx-timestamp": str(timestamp),
        "telnyx-signature-ed25519": base64.b64encode(signature).decode(),
    }


def post_callback(client, path_with_query: str, form: dict, *, headers: dict | None = None):
    """POST a TeXML callback form as Telnyx does; signed unless `headers` are given."""
    body = urlencode(form).encode()
    return client.post(
        path_with_query,
        data=body,
        content_type="application/x-www-form-urlencoded",
        headers=signed_headers(body) if headers is None else headers,
    )


def status_form(status: str, call: dict, sequence: int) -> dict:
    """The fields of a TeXML status callback (call progress events), as Telnyx posts them."""
    return {
        "AccountSid": ACCOUNT_SID,
        "CallSid": CALL_SID,
        "CallSidLegacy": CALL_SID,
        "CallStatus": status,
        "CallbackSource": "call-progress-events",
        "ConnectionId": CONNECTION_ID,
        "From": FROM_NUMBER,
        "To": call["phone_no"],
        "SequenceNumber": str(sequence),
        "Timestamp": f"2026-03-02T10:00:0{sequence}Z",
    }


MESSAGES_WEBHOOK = "/v1/calls/callbacks/telnyx/sms"


def message_event(text: str, sender: str, *, event_type: str = "message.received") -> dict:
    """A Messaging API v2 webhook event: by default a text from `sender` to FROM_NUMBER."""
    return {
        "data": {
            "event_type": event_type,
            "id": "b301ed3f-1490-491f-995f-6e64e69674d4",
            "occurred_at": "2026-03-02T10:00:00.000+00:00",
            "payload": {
                "direction": "inbound",
                "from": {
                    "carrier": "T-Mobile USA",
                    "line_type": "Wireless",
                    "phone_number": sender,
                },
                "to": [{"phone_number": FROM_NUMBER, "status": "webhook_delivered"}],
                "id": "84cca175-9755-4859-b67f-4730d7f58aa3",
                "media": [],
                "parts": 1,
                "text": text,
                "type": "SMS",
                "record_type": "message",
            },
            "record_type": "event",
        },
        "meta": {"attempt": 1, "delivered_to": PUBLIC_BASE + MESSAGES_WEBHOOK},
    }


def post_message(client, event: dict, *, headers: dict | None = None):
    """POST a messaging webhook event as Telnyx does (JSON); signed unless `headers` are given."""
    body = json.dumps(event).encode()
    return client.post(
        MESSAGES_WEBHOOK,
        data=body,
        content_type="application/json",
        headers=signed_headers(body) if headers is None else headers,
    )
