"""Standard Webhooks signing: the two kinds of secret (whsec_ + base64 key, or a plain string whose
UTF-8 bytes are the key) and the webhook-id / webhook-timestamp / webhook-signature headers."""

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
MIN_PLAIN_SECRET, MAX_PLAIN_SECRET = 16, 255  # characters of a secret not in the whsec_ form


def generate_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def secret_problem(secret: str) -> str | None:
    """Why a client-chosen secret is unusable, or None: whsec_ + base64 of 24-64 random bytes, or
    any other string of 16-255 characters (signed with its UTF-8 bytes)."""
    if not secret.startswith(SECRET_PREFIX):
        if not MIN_PLAIN_SECRET <= len(secret) <= MAX_PLAIN_SECRET:
            return (
                f"Must be {MIN_PLAIN_SECRET} to {MAX_PLAIN_SECRET} characters, or {SECRET_PREFIX} "
                "followed by "
                "base64 (Standard Webhooks); omit it to have one generated."
            )
        return None
    try:
        key = base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
    except (binascii.Error, ValueError):
        return f"The part after {SECRET_PREFIX} must be base64."
    if not MIN_SECRET_BYTES <= len(key) <= MAX_SECRET_BYTES:
        return f"Must encode {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes."
    return None


@functools.lru_cache(maxsize=1024)
def signer(secret: str) -> Webhook:
    """whsec_ secrets sign with their decoded key, any other with its UTF-8 bytes (what a receiver
    passes to Webhook)."""
    return Webhook(secret if secret.startswith(SECRET_PREFIX) else secret.encode("utf-8"))


def signature_headers(
    secret: str | None,
    message_id: str,
    body: bytes,
    now: dt.datetime,
    previous_secret: str | None = None,
) -> dict[str, str]:
    """The three Standard Webhooks headers for this attempt (no signature without a secret). During
    a rotation the signature header carries one signature per secret, space-separated: a receiver
    verifying with either accepts it."""
    timestamp = now.replace(tzinfo=dt.timezone.utc)
    headers = {"webhook-id": message_id, "webhook-timestamp": str(int(timestamp.timestamp()))}
    if secret:
        text = body.decode()
        headers["webhook-signature"] = " ".join(
            signer(s).sign(message_id, timestamp, text) for s in (secret, previous_secret) if s
        )
    return headers
