"""Client ID Metadata Documents: a client whose id is an https URL describes itself in a JSON
document at that URL.

The document is fetched through the webhooks' egress (the host must resolve to public addresses, the
connection goes to the checked address, no redirects), within OAUTH_CLIENT_DOCUMENT_TIMEOUT seconds
and at most OAUTH_CLIENT_DOCUMENT_MAX_BYTES, and kept for OAUTH_CLIENT_DOCUMENT_CACHE_SECONDS before
it is fetched again."""

from __future__ import annotations

import datetime as dt
import logging
from urllib.parse import urlsplit

import orjson
from flask import current_app

from app.data.db import utcnow
from plugins.webhooks import transport
from plugins.webhooks.egress import UnsafeTarget, pin_target

log = logging.getLogger("hirekit.oauth")

# Shared-secret authentication makes no sense for a client anyone can describe: the draft forbids
# these.
SECRET_METHODS = frozenset({"client_secret_basic", "client_secret_post", "client_secret_jwt"})


class DocumentRefused(ValueError):
    """The client id is not a usable metadata document URL, or its document could not be fetched or
    is invalid."""


def is_document_id(client_id: str) -> bool:
    """Whether a client id names a metadata document (an https URL) rather than a registered
    client."""
    return client_id.startswith("https://")


def check_document_url(client_id: str) -> None:
    """The draft's rules for the URL itself: https, a path, no fragment, no credentials, no dot
    segments."""
    try:
        parts = urlsplit(client_id)
        parts.port  # noqa: B018 - a malformed port raises here
    except ValueError as exc:
        raise DocumentRefused(f"the client id is not a valid URL: {exc}") from None
    if parts.scheme != "https":
        raise DocumentRefused("a client id URL must use https")
    if not parts.path or parts.path == "/":
        raise DocumentRefused("a client id URL must have a path")
    if parts.fragment or "#" in client_id:
        raise DocumentRefused("a client id URL must not have a fragment")
    if parts.username is not None or parts.password is not None:
        raise DocumentRefused("a client id URL must not carry credentials")
    if any(segment in (".", "..") for segment in parts.path.split("/")):
        raise DocumentRefused("a client id URL must not have . or .. path segments")


def fetch_document(client_id: str) -> dict:
    """Fetch and check the metadata document named by `client_id`; DocumentRefused says what is
    wrong."""
    check_document_url(client_id)
    config = current_app.config
    limit = int(config["OAUTH_CLIENT_DOCUMENT_MAX_BYTES"])
    try:
        target = pin_target(client_id, allow_private=config["WEBHOOK_ALLOW_PRIVATE"])
    except UnsafeTarget as exc:
        raise DocumentRefused(f"the client metadata document cannot be fetched: {exc}") from None
    outcome = transport.send(
        "GET",
        target,
        b"",
        {"Accept": "application/json"},
        timeout=float(config["OAUTH_CLIENT_DOCUMENT_TIMEOUT"]),
        max_response_bytes=limit + 1,
    )
    if outcome.error is not None:
        log.info("client metadata document %s not fetched: %s", client_id, outcome.error)
        raise DocumentRefused(
            f"the client metadata document could not be fetched ({outcome.error})"
        )
    if outcome.status_code != 200:
        raise DocumentRefused(
            f"the client metadata document answered HTTP {outcome.status_code}, not 200"
        )
    body = (outcome.response_body or "").encode("utf-8")
    if len(body) > limit:
        raise DocumentRefused(f"the client metadata document is larger than {limit} bytes")
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise DocumentRefused("the client metadata document is not JSON") from None
    return check_document(client_id, document)


def check_document(client_id: str, document) -> dict:
    """The document's own rules: an object naming this very URL as client_id, redirect URIs, no
    shared secret."""
    if not isinstance(document, dict):
        raise DocumentRefused("the client metadata document must be a JSON object")
    if document.get("client_id") != client_id:
        raise DocumentRefused("the client metadata document's client_id must equal its URL")
    if "client_secret" in document or "client_secret_expires_at" in document:
        raise DocumentRefused("a client metadata document must not contain a client_secret")
    method = document.get("token_endpoint_auth_method", "none")
    if method in SECRET_METHODS:
        raise DocumentRefused(
            f"a client metadata document cannot use token_endpoint_auth_method {method}"
        )
    if method != "none":
        raise DocumentRefused(f"token_endpoint_auth_method {method!r} is not supported; use none")
    redirect_uris = document.get("redirect_uris")
    if (
        not isinstance(redirect_uris, list)
        or not redirect_uris
        or not all(isinstance(uri, str) and uri for uri in redirect_uris)
    ):
        raise DocumentRefused("the client metadata document must list its redirect_uris")
    for name in ("client_name", "client_uri", "logo_uri"):
        if name in document and not isinstance(document[name], str):
            raise DocumentRefused(f"{name} in the client metadata document must be a string")
    return document


def cache_until() -> dt.datetime:
    return utcnow() + dt.timedelta(
        seconds=float(current_app.config["OAUTH_CLIENT_DOCUMENT_CACHE_SECONDS"])
    )
