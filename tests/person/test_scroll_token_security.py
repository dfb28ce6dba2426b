"""Scroll tokens cannot be forged (issue 14 item 3): only the server secret makes one, they expire,
they stay bound to their query, a decoded offset stays inside the 10,000-hit window, and "new,old"
secrets rotate without breaking scrolls. Every refusal is a 400 in the one error body."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time

import orjson
import pytest
from itsdangerous.timed import TimestampSigner

SCORED = {"match": {"job_title": "engineer"}}  # ranked by relevance: continues by offset
BODY = {"query": SCORED, "size": 2}


def scroll(client, headers, token=None, **body):
    payload = {**BODY, **body, **({"scroll_token": token} if token else {})}
    return client.post("/v2/person/search", json=payload, headers=headers)


def first_token(client, headers, **body) -> str:
    response = scroll(client, headers, **body)
    assert response.status_code == 200 and response.json.get("scroll_token"), response.json
    return response.json["scroll_token"]


def refused(response, message_part: str, field_error: str) -> bool:
    assert response.status_code == 400, response.json
    body = response.json
    assert set(body) == {"status", "error"} and body["status"] == 400
    assert body["error"]["type"] == "invalid_request_error"
    assert message_part in body["error"]["message"]
    assert body["error"]["fields"] == {"scroll_token": [field_error]}
    return True


def issued_at(seconds_ago: int):
    """Patch itsdangerous' clock so tokens made meanwhile carry a timestamp `seconds_ago` in the
    past."""
    return lambda self: int(time.time()) - seconds_ago


def test_a_token_made_with_the_old_literal_fallback_secret_is_refused(person_client):
    """Today's code signs with "hirekit" when nothing configures a secret: anyone can mint a token
    past the window."""
    client, headers = person_client("scroll")
    genuine = first_token(client, headers)
    if "." in genuine:  # itsdangerous: payload.timestamp.signature
        fingerprint = _fingerprint_of(client, genuine)
    else:  # the hand-made tokens before: base64 of 12 signature bytes, then the JSON
        fingerprint = orjson.loads(
            base64.urlsafe_b64decode(genuine + "=" * (-len(genuine) % 4))[12:]
        )[0]
    payload = orjson.dumps([fingerprint, ["offset", 50_000]])
    signature = hmac.new(b"hirekit", payload, hashlib.sha256).digest()[:12]
    forged = base64.urlsafe_b64encode(signature + payload).decode().rstrip("=")
    assert refused(
        scroll(client, headers, forged), "not a token this service issued", "Invalid token."
    )


def _fingerprint_of(client, token: str) -> str:
    from app.security import tokens

    with client.application.app_context():
        return tokens.verify("person-scroll", token, None)[0]


def test_a_token_from_another_secret_is_refused(person_client):
    client_a, headers_a = person_client("scroll", SECRET_KEY="secret-a-" + "a" * 40)
    client_b, headers_b = person_client("scroll", SECRET_KEY="secret-b-" + "b" * 40)
    token = first_token(client_a, headers_a)
    assert scroll(client_a, headers_a, token).status_code == 200
    assert refused(
        scroll(client_b, headers_b, token), "not a token this service issued", "Invalid token."
    )


@pytest.mark.parametrize(
    "tamper",
    [
        # the signature, at a character all of whose bits count (the last one's low bits are base64
        # padding)
        lambda token: token[:-10] + ("A" if token[-10] != "A" else "B") + token[-9:],
        lambda token: token[:5] + ("x" if token[5] != "x" else "y") + token[6:],  # the payload
        lambda token: token.rsplit(".", 2)[0],  # signature and timestamp cut off
        lambda token: token + "." + token,
        lambda token: "not-a-token",
        lambda token: "é" * 40,
    ],
)
def test_a_tampered_token_is_refused(person_client, tamper):
    client, headers = person_client("scroll")
    token = first_token(client, headers)
    assert refused(
        scroll(client, headers, tamper(token)), "not a token this service issued", "Invalid token."
    )


def test_a_token_from_another_query_is_refused(person_client):
    client, headers = person_client("scroll")
    token = first_token(client, headers)
    other = scroll(client, headers, token, query={"match": {"job_title": "manager"}})
    assert refused(other, "another query or sort", "Issued for another query.")


def test_a_token_older_than_an_hour_is_refused(person_client, monkeypatch):
    client, headers = person_client("scroll")
    with monkeypatch.context() as clock:
        clock.setattr(TimestampSigner, "get_timestamp", issued_at(3601))
        expired = first_token(client, headers)
    with monkeypatch.context() as clock:
        clock.setattr(TimestampSigner, "get_timestamp", issued_at(3500))
        fresh_enough = first_token(client, headers)
    assert scroll(client, headers, fresh_enough).status_code == 200
    assert refused(scroll(client, headers, expired), "expired", "Expired token.")


def test_the_token_lifetime_is_configurable(person_client, monkeypatch):
    client, headers = person_client("scroll", SCROLL_TOKEN_TTL=60)
    with monkeypatch.context() as clock:
        clock.setattr(TimestampSigner, "get_timestamp", issued_at(61))
        token = first_token(client, headers)
    assert refused(scroll(client, headers, token), "expired", "Expired token.")


def test_rotation_keeps_old_tokens_valid_until_the_old_secret_is_dropped(person_client):
    old, new = "old-secret-" + "o" * 40, "new-secret-" + "n" * 40
    client_old, headers_old = person_client("scroll", SECRET_KEY=old)
    client_both, headers_both = person_client("scroll", SECRET_KEY=f"{new},{old}")
    client_new, headers_new = person_client("scroll", SECRET_KEY=new)

    before = first_token(client_old, headers_old)
    # rotated in: the old secret still verifies
    continued = scroll(client_both, headers_both, before)
    assert continued.status_code == 200, continued.json
    after = continued.json["scroll_token"]  # ... and the new one signs
    assert scroll(client_new, headers_new, after).status_code == 200
    assert refused(
        scroll(client_old, headers_old, after), "not a token this service issued", "Invalid token."
    )
    assert refused(
        scroll(client_new, headers_new, before), "not a token this service issued", "Invalid token."
    )


def test_a_continuation_past_the_result_window_is_refused(person_client):
    from app.security import tokens

    client, headers = person_client("scroll")
    with client.application.app_context():
        fingerprint, *_ = tokens.verify("person-scroll", first_token(client, headers), None)
        at_edge = tokens.sign("person-scroll", [fingerprint, ["offset", 9_998]])
        past = tokens.sign("person-scroll", [fingerprint, ["offset", 9_999]])
        negative = tokens.sign("person-scroll", [fingerprint, ["offset", -1]])
    # 9,998 + 2 = 10,000, like from + size
    assert scroll(client, headers, at_edge).status_code == 200
    assert refused(scroll(client, headers, past), "10,000", "Past the 10000 result window.")
    assert refused(
        scroll(client, headers, negative), "not a token this service issued", "Invalid token."
    )


def test_a_relevance_scroll_walks_to_the_end_with_signed_tokens(person_client):
    from tests.person.paging import walk_scroll

    client, headers = person_client("scroll")
    ids, pages, last = walk_scroll(
        client, headers, {"query": SCORED, "size": 100}, path="/v2/person/search"
    )
    assert len(ids) == len(set(ids)) == last["total"] and pages > 1 and "scroll_token" not in last
