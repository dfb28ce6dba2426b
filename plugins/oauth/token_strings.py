"""The secrets the authorization server hands out: how they look (a prefix tells an access token
from an API key at a glance) and how they are stored (SHA-256 hashes only)."""

from __future__ import annotations

import hashlib
import secrets

# never "hk_": an API key and an access token are told apart by their first letters
ACCESS_TOKEN_PREFIX = "hkat_"
REFRESH_TOKEN_PREFIX = "hkrt_"


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def token_string(prefix: str):
    """A generator of new secrets with `prefix`, in the shape Authlib's BearerTokenGenerator
    calls."""

    def generate(*args, **kwargs) -> str:
        return prefix + secrets.token_urlsafe(32)

    return generate
