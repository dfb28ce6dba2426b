"""Standard Webhooks signing: whsec_ secrets and the webhook-id / webhook-timestamp / webhook-signature headers."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import functools
import secrets

from standardwebhooks import Webhook

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32
MIN_SECRET_BYTES, MAX_SECRET_BYTES = 24, 64


def generate_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def secret_problem(secret: str) -> str | None:
    """Why a client-chosen secret is unusable, or None: it must be whsec_ + base64 of 24-64 random bytes."""
    if not secret.startswith(SECRET_PREFIX):
        return f"Must start with {SECRET_PREFIX} followed by base64 (Standard Webhooks); omit it to have one generated."
    try:
        key = base64.b64decode(secret[len(SECRET_PREFIX):], validate=True)
    except (binascii.Error, ValueError):
        return f"The part after {SECRET_PREFIX} must be base64."
    if not MIN_SECRET_BYTES <= len(key) <= MAX_SECRET_BYTES:
        return f"Must encode {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes."
    return None


@functools.lru_cache(maxsize=1024)
def signer(secret: str) -> Webhook:
    return Webhook(secret)


def signature_headers(secret: str | None, message_id: str, body: bytes, now: dt.datetime,
                      previous_secret: str | None = None) -> dict[str, str]:
    """The three Standard Webhooks headers for this attempt (no signature without a secret). During a rotation the
    signature header carries one signature per secret, space-separated: a receiver verifying with either accepts it."""
    timestamp = now.replace(tzinfo=dt.timezone.utc)
    headers = {"webhook-id": message_id, "webhook-timestamp": str(int(timestamp.timestamp()))}
    if secret:
        text = body.decode()
        headers["webhook-signature"] = " ".join(signer(s).sign(message_id, timestamp, text)
                                                for s in (secret, previous_secret) if s)
    return headers
