"""Signed opaque tokens: itsdangerous over the server secret, with one salt per kind of token, so a
token of one kind never verifies as another and only this server's secret makes one.

Which tokens expire is each kind's decision, made where it is verified: person scroll tokens expire
(SCROLL_TOKEN_TTL, 3600 s); sync cursors (list cursors and the event feed's next_after) never do
(NEVER_EXPIRES), so a sync paused for any time resumes where it stopped. Every kind is bound to what
it was issued for (a sync cursor to its tenant, list and filters; a scroll token to its query), and
every kind stops verifying once the key that signed it leaves HIREKIT_SECRET_KEY's list: rotating
the secret (new,old, then new) is how an operator retires all of them."""

from __future__ import annotations

import hashlib
from functools import lru_cache

from flask import current_app
from itsdangerous import BadData, SignatureExpired, URLSafeTimedSerializer


# max_age of a kind of token that stays valid until its signing key is rotated out
NEVER_EXPIRES = None


class InvalidToken(ValueError):
    """Not a token this server issued for this kind: another secret, tampered, truncated, or of
    another kind."""


class ExpiredToken(InvalidToken):
    """Issued by this server, but older than the caller's max_age (or dated in the future)."""


def sign(kind: str, payload) -> str:
    """A URL-safe token carrying `payload` (anything JSON can hold), signed now with the newest
    server key."""
    return _serializer(kind, _keys()).dumps(payload)


def verify(kind: str, token: str, max_age: float | None):
    """The payload of a token `sign(kind, ...)` made within `max_age` seconds (NEVER_EXPIRES: at any
    time) under any configured key.

    Raises ExpiredToken when it is genuine but too old, InvalidToken for anything else."""
    try:
        return _serializer(kind, _keys()).loads(token, max_age=max_age)
    except SignatureExpired:
        raise ExpiredToken(kind) from None
    except (BadData, ValueError, TypeError):
        raise InvalidToken(kind) from None


def _keys() -> tuple[str, ...]:
    """The configured keys, the signing one first (app/config.py splits HIREKIT_SECRET_KEY into
    these)."""
    config = current_app.config
    keys = tuple(
        key
        for key in (config.get("SECRET_KEY"), *(config.get("SECRET_KEY_FALLBACKS") or ()))
        if key
    )
    # create_app refuses to start a server without one; this only guards a CLI or shell that signs
    if not keys:
        from app.security.secret_key import MissingSecretKey

        raise MissingSecretKey(config.get("INSTANCE_DIR", "instance"))
    return keys


@lru_cache(maxsize=64)
def _serializer(kind: str, keys: tuple[str, ...]) -> URLSafeTimedSerializer:
    # itsdangerous takes keys oldest to newest and signs with the last one; ours list the signing
    # key first
    return URLSafeTimedSerializer(
        list(reversed(keys)),
        salt=f"hirekit.{kind}",
        signer_kwargs={"digest_method": hashlib.sha256},
    )
