"""A request that has not authenticated costs at most a small bounded read: a person route looks for
a body `api_key` only in a small JSON body, and Twilio's callback routes refuse a form larger than
Twilio sends (or any form while Twilio is not configured) before reading it, as Telnyx's message
webhook does its JSON events. Each refusal is checked by the bytes the app read of the body."""

from __future__ import annotations

import io
import json

import pytest
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

from app.security.auth import API_KEY_BODY_MAX_BYTES
from plugins.calls.callbacks import TELNYX_FORM, TWILIO_FORM
from tests.telnyx_stand_in import MESSAGES_WEBHOOK, PUBLIC_KEY, message_event, post_message
from tests.test_calls_twilio import AUTH_TOKEN, PUBLIC_BASE, callback

BIG = 15_600_000  # what nginx's 16m lets through


class CountingBody(io.RawIOBase):
    """A request body of `size` bytes made on demand from `pattern` (after `head`, before `tail`);
    counts what is read."""

    def __init__(self, size: int, head: bytes, pattern: bytes, tail: bytes):
        self.size, self.head, self.pattern, self.tail = size, head, pattern, tail
        self.position = 0

    def readable(self) -> bool:
        return True

    def byte_at(self, start: int, count: int) -> bytes:
        body_end = self.size - len(self.tail)
        out = bytearray()
        while count > 0 and start < self.size:
            if start < len(self.head):
                piece = self.head[start : start + count]
            elif start >= body_end:
                piece = self.tail[start - body_end : start - body_end + count]
            else:
                offset = (start - len(self.head)) % len(self.pattern)
                piece = (self.pattern[offset:] * (count // len(self.pattern) + 2))[
                    : min(count, body_end - start)
                ]
            out += piece
            start += len(piece)
            count -= len(piece)
        return bytes(out)

    def readinto(self, buffer) -> int:
        data = self.byte_at(self.position, len(buffer))
        buffer[: len(data)] = data
        self.position += len(data)
        return len(data)

    @property
    def bytes_read(self) -> int:
        return self.position


def post_counted(
    client,
    path: str,
    body: CountingBody,
    content_type: str,
    headers: dict | None = None,
    *,
    chunked: bool = False,
):
    environ = EnvironBuilder(path=path, method="POST", headers=headers or {}).get_environ()
    environ.update({"CONTENT_TYPE": content_type, "wsgi.input": io.BufferedReader(body)})
    if chunked:
        environ.pop("CONTENT_LENGTH", None)
        environ.update({"HTTP_TRANSFER_ENCODING": "chunked", "wsgi.input_terminated": True})
    else:
        environ["CONTENT_LENGTH"] = str(body.size)
    return client.open(Request(environ))


def empty_objects(size: int) -> CountingBody:
    """The JSON body `{"x":[{},{},...]}` of `size` bytes."""
    return CountingBody(size, b'{"x":[{}', b",{}", b"]}")


def many_fields(size: int) -> CountingBody:
    """A url-encoded form of `size` bytes: `a=1&a=1&...`."""
    return CountingBody(size, b"a=1", b"&a=1", b"")


@pytest.mark.parametrize("path", ["/v1/person/search", "/v2/person/search"])
def test_a_large_person_body_without_a_key_is_401_without_being_read(client, path):
    body = empty_objects(BIG)
    answer = post_counted(client, path, body, "application/json")
    assert answer.status_code == 401, answer.json
    assert f"JSON body of at most {API_KEY_BODY_MAX_BYTES} bytes" in answer.json["error"]["message"]
    assert body.bytes_read == 0


def test_a_large_person_body_with_a_bad_key_inside_is_401_without_being_read(client):
    body = CountingBody(
        API_KEY_BODY_MAX_BYTES + 1, b'{"api_key":"hk_' + b"x" * 40 + b'","x":[{}', b",{}", b"]}"
    )
    answer = post_counted(client, "/v1/person/search", body, "application/json")
    assert answer.status_code == 401 and body.bytes_read == 0


def test_a_chunked_person_body_without_a_key_is_401_without_being_read(client):
    body = empty_objects(BIG)
    answer = post_counted(client, "/v1/person/search", body, "application/json", chunked=True)
    assert answer.status_code == 401 and body.bytes_read == 0


def test_a_small_person_body_still_carries_the_key(client, tenant_a):
    padding = "x" * (API_KEY_BODY_MAX_BYTES - 200)
    answer = client.post(
        "/v1/person/search", json={"api_key": tenant_a.key, "size": 1, "padding": padding}
    )
    assert answer.status_code not in (401, 403), answer.json
    too_big = client.post(
        "/v1/person/search", json={"api_key": tenant_a.key, "padding": padding + "x" * 400}
    )
    assert too_big.status_code == 401


@pytest.mark.parametrize("path", ["/v1/calls/callbacks/twilio", "/v1/calls/callbacks/twilio/sms"])
def test_twilio_callbacks_without_twilio_configured_are_404_without_reading(client, path):
    body = many_fields(BIG)
    answer = post_counted(client, path, body, "application/x-www-form-urlencoded")
    assert answer.status_code == 404 and body.bytes_read == 0
    assert "not configured" in answer.json["error"]["message"]


@pytest.fixture
def twilio_client(make_app):
    return make_app(
        TWILIO_AUTH_TOKEN=AUTH_TOKEN, TWILIO_CALLBACK_BASE_URL=PUBLIC_BASE
    ).test_client()


@pytest.mark.parametrize("path", ["/v1/calls/callbacks/twilio", "/v1/calls/callbacks/twilio/sms"])
def test_a_callback_form_larger_than_twilio_sends_is_413_without_reading(twilio_client, path):
    body = many_fields(BIG)
    answer = post_counted(
        twilio_client,
        path,
        body,
        "application/x-www-form-urlencoded",
        {"X-Twilio-Signature": "not-checked"},
    )
    assert answer.status_code == 413, answer.json
    assert body.bytes_read == 0


def test_a_chunked_callback_form_is_read_only_up_to_its_bound(twilio_client):
    body = many_fields(BIG)
    answer = post_counted(
        twilio_client,
        "/v1/calls/callbacks/twilio/sms",
        body,
        "application/x-www-form-urlencoded",
        {"X-Twilio-Signature": "x"},
        chunked=True,
    )
    assert answer.status_code == 413, answer.json
    assert (
        body.bytes_read <= TWILIO_FORM.max_bytes + 64 * 1024
    )  # one read piece past the bound at most


def test_a_callback_form_of_too_many_fields_is_413_before_it_is_parsed(twilio_client):
    body = many_fields(TWILIO_FORM.max_bytes)  # within the byte bound: 8,192 fields
    answer = post_counted(
        twilio_client,
        "/v1/calls/callbacks/twilio/sms",
        body,
        "application/x-www-form-urlencoded",
        {"X-Twilio-Signature": "x"},
    )
    assert answer.status_code == 413, answer.json
    assert f"more than the {TWILIO_FORM.max_fields} fields" in answer.json["error"]["message"]


def test_the_largest_form_twilio_sends_is_still_checked_for_its_signature(twilio_client):
    """An SMS of 1,600 characters that percent-encode at their longest, with the fields Twilio
    sends."""
    form = {
        "MessageSid": "SM" + "0" * 32,
        "AccountSid": "AC" + "0" * 32,
        "From": "+14155550100",
        "To": "+14155550000",
        "Body": "\u20ac" * 1600,
        "NumMedia": "10",
        **{f"MediaUrl{index}": "https://api.twilio.com/" + "m" * 120 for index in range(10)},
        **{f"MediaContentType{index}": "image/jpeg" for index in range(10)},
        **{
            name: "x" * 20
            for name in (
                "FromCity",
                "FromState",
                "FromZip",
                "FromCountry",
                "ToCity",
                "ToState",
                "ToZip",
                "ToCountry",
                "SmsStatus",
                "ApiVersion",
                "NumSegments",
            )
        },
    }
    assert callback(twilio_client, "/v1/calls/callbacks/twilio/sms", form).status_code == 200
    forged = callback(twilio_client, "/v1/calls/callbacks/twilio/sms", form, signature="forged")
    assert forged.status_code == 403


@pytest.fixture
def telnyx_client(make_app):
    return make_app(TELNYX_PUBLIC_KEY=PUBLIC_KEY).test_client()


@pytest.mark.parametrize("chunked", [False, True])
def test_telnyxs_message_webhook_reads_no_more_than_its_bound_before_the_signature(
    make_app, telnyx_client, chunked
):
    unconfigured = make_app(TELNYX_PUBLIC_KEY="").test_client()
    body = empty_objects(BIG)
    answer = post_counted(unconfigured, MESSAGES_WEBHOOK, body, "application/json", chunked=chunked)
    assert answer.status_code == 404 and body.bytes_read == 0
    body = empty_objects(BIG)
    answer = post_counted(
        telnyx_client,
        MESSAGES_WEBHOOK,
        body,
        "application/json",
        {"telnyx-signature-ed25519": "not-checked", "telnyx-timestamp": "0"},
        chunked=chunked,
    )
    assert answer.status_code == 413, answer.json
    assert body.bytes_read <= (TELNYX_FORM.max_bytes + 64 * 1024 if chunked else 0)


def test_a_message_event_within_the_bound_is_checked_for_its_signature(telnyx_client):
    event = message_event(
        "\u20ac" * 1600, "+14155550100"
    )  # the longest text, escaped at its longest
    assert len(json.dumps(event)) < TELNYX_FORM.max_bytes
    assert post_message(telnyx_client, event).status_code == 204  # no pending call: nothing to do
    forged = post_message(telnyx_client, event, headers={"telnyx-signature-ed25519": "x"})
    assert forged.status_code == 403
