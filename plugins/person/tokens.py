"""Opaque scroll tokens: a backend's continuation cursor, signed and bound to the query and sort it came from."""

from __future__ import annotations

import base64
import hashlib
import hmac

import orjson
from flask import current_app

from app.errors import ApiError


def query_fingerprint(query: dict, sort: list, dataset: str) -> str:
    """Same query, sort and dataset -> same fingerprint, whatever the key order of the JSON."""
    canonical = orjson.dumps([query, sort, dataset], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(canonical).hexdigest()[:24]


def _secret() -> bytes:
    return (current_app.config.get("PERSON_TOKEN_SECRET") or current_app.config.get("SECRET_KEY") or "hirekit").encode()


def encode(cursor: list, fingerprint: str) -> str:
    payload = orjson.dumps([fingerprint, cursor])
    signature = hmac.new(_secret(), payload, hashlib.sha256).digest()[:12]
    return base64.urlsafe_b64encode(signature + payload).decode().rstrip("=")


def decode(token: str, fingerprint: str) -> list:
    """The cursor inside `token`; 400 when it is not one of ours or belongs to another query."""
    try:
        blob = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        signature, payload = blob[:12], blob[12:]
        if not hmac.compare_digest(signature, hmac.new(_secret(), payload, hashlib.sha256).digest()[:12]):
            raise ValueError("bad signature")
        bound_to, cursor = orjson.loads(payload)
    except (ValueError, TypeError, orjson.JSONDecodeError):
        raise ApiError(400, "scroll_token is not a token this service issued.", fields={"scroll_token": ["Invalid token."]}) from None
    if bound_to != fingerprint:
        raise ApiError(400, "scroll_token belongs to another query or sort: resend the query it came from, or drop the token.",
                       fields={"scroll_token": ["Issued for another query."]})
    return cursor
