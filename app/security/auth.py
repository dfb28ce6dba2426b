"""Who is calling: Bearer keys for /v1, /mcp and /jobs, X-API-Key (or PDL's api_key parameter) for
person routes; every query is scoped to the caller's tenant."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable

from flask import current_app, g, request

from app.security import limits
from app.errors import ApiError
from app.data.tenancy import KEY_PREFIX, Caller, hash_key, live_key_hashes, resolve_key

# the setting limiting requests with unknown keys per client address
FAILURE_LIMIT = "AUTH_FAILURE_LIMIT"

# The largest JSON body searched for an `api_key` parameter: larger bodies must carry the key in a
# header, so a request that has not authenticated never costs more than parsing this much (a search
# body with its key is far smaller).
API_KEY_BODY_MAX_BYTES = 64 * 1024

BEARER = "bearer"
API_KEY = "api_key"
SCHEMES = (BEARER, API_KEY)

# OpenAPI security scheme names, shared with app.http.api
FAILURE_LIMIT_DOC = (
    f"Requests with an unknown or revoked key are limited per client address ({FAILURE_LIMIT}, "
    "default 30/minute): past it they answer 429 with Retry-After, before the key is looked up. "
    "A key that works is never refused for the failures of others from the same address."
)
SECURITY_SCHEMES = {
    BEARER: (
        "bearerAuth",
        {
            "type": "http",
            "scheme": "bearer",
            "description": f"Authorization: Bearer <API key>. {FAILURE_LIMIT_DOC}",
        },
    ),
    API_KEY: (
        "apiKeyAuth",
        {
            "type": "apiKey",
            "in": "header",
            "name": "X-API-Key",
            "description": "X-API-Key: <API key> (any case). Person routes also take it as "
            "the api_key query or JSON body parameter, as PDL's SDKs send it. "
            f"{FAILURE_LIMIT_DOC}",
        },
    ),
}


def protect(app, blueprint_name: str, scheme: str) -> None:
    """Require `scheme` on every route of the blueprint (and of blueprints nested in it)."""
    if scheme not in SCHEMES:
        raise ValueError(f"unknown auth scheme {scheme!r}")
    app.extensions.setdefault("hirekit_auth", {})[blueprint_name] = scheme
    app.extensions["hirekit_auth_resolved"] = {}


def scheme_for(blueprint: str | None, app=None) -> str | None:
    """The scheme protecting a blueprint of `app` (the current app by default), its own or its
    nearest parent's; resolved once per blueprint."""
    if not blueprint:
        return None
    extensions = (app or current_app).extensions
    resolved = extensions.setdefault("hirekit_auth_resolved", {})
    if blueprint not in resolved:
        schemes = extensions.get("hirekit_auth", {})
        parts = blueprint.split(".")
        resolved[blueprint] = next(
            (
                schemes[name]
                for name in (".".join(parts[:depth]) for depth in range(len(parts), 0, -1))
                if schemes.get(name)
            ),
            None,
        )
    return resolved[blueprint]


def presented_key(scheme: str, headers) -> str | None:
    """The key from the request header the scheme names, or None when absent or malformed."""
    if scheme == BEARER:
        header = headers.get("Authorization", "")
        kind, _, value = header.partition(" ")
        if kind.lower() != "bearer" or not value.strip():
            return None
        return value.strip()
    # header names match in any case (X-Api-Key, x-api-key)
    value = headers.get("X-API-Key", "").strip()
    return value or None


def parameter_key(req) -> str | None:
    """The key PDL's SDKs send as the `api_key` parameter: in the query string (GET) or the JSON
    body (POST), the body only when it has a length of at most API_KEY_BODY_MAX_BYTES (a chunked or
    larger body is not read before a key is known)."""
    value = req.args.get("api_key")
    if value is None and req.is_json and 0 < (req.content_length or 0) <= API_KEY_BODY_MAX_BYTES:
        body = req.get_json(silent=True)
        value = body.get("api_key") if isinstance(body, dict) else None
    return value.strip() or None if isinstance(value, str) else None


@dataclass(frozen=True)
class SignedForm:
    """A blueprint whose callers are a provider authenticating each form it posts with a signature
    over it (Twilio's callbacks): what such a request may cost before the signature can be checked.
    Refused before any byte is read: 404 while the setting `configured_by` is empty (the provider is
    not set up), 413 for a Content-Length above `max_bytes` or a url-encoded body of more than
    `max_fields` fields (counted in the bounded bytes, not parsed). A chunked body is read only up
    to `max_bytes`, and a multipart one parses at most `max_fields` parts."""

    max_bytes: int
    max_fields: int
    configured_by: str
    not_configured: str


def accept_signed_forms(app, blueprint_name: str, form: SignedForm) -> None:
    """Declare that the (unauthenticated) blueprint takes provider-signed forms within `form`'s
    bounds."""
    app.extensions.setdefault("hirekit_signed_forms", {})[blueprint_name] = form


def admit_signed_form(req, app, form: SignedForm) -> None:
    if not app.config[form.configured_by]:
        raise ApiError(404, form.not_configured)
    # chunked bodies: app.http.nul_guard's read
    req.max_content_length = req.max_form_memory_size = form.max_bytes
    req.max_form_parts = form.max_fields
    length = req.content_length
    if length is not None and length > form.max_bytes:
        raise ApiError(
            413, f"The form is larger than the {form.max_bytes} bytes a signed callback may send."
        )
    if length and req.mimetype == "application/x-www-form-urlencoded":
        fields = req.get_data(cache=True).count(b"&") + 1
        if fields > form.max_fields:
            raise ApiError(
                413,
                f"The form has more than the {form.max_fields} fields a signed callback may send.",
            )


def authenticate() -> None:
    """before_request: resolve the caller for protected routes, 401 when the key is missing or
    unknown."""
    req, ctx, app = (
        request._get_current_object(),
        g._get_current_object(),
        current_app._get_current_object(),
    )  # one proxy lookup each
    ctx.caller = None
    scheme = scheme_for(req.blueprint, app)
    ctx.auth_scheme = scheme
    if scheme is None or req.method == "OPTIONS":
        signed_form = (
            app.extensions.get("hirekit_signed_forms", {}).get(req.blueprint)
            if scheme is None
            else None
        )
        if signed_form is not None:
            admit_signed_form(req, app, signed_form)
        return
    key = presented_key(scheme, req.headers)
    if key is None and scheme == API_KEY:
        key = parameter_key(req)
    if key is None:
        where = (
            "the Authorization: Bearer <key> header"
            if scheme == BEARER
            else "the X-API-Key header or the api_key parameter (in a JSON body of at most "
            f"{API_KEY_BODY_MAX_BYTES} "
            "bytes)"
        )
        raise ApiError(401, f"Missing API key: send it in {where}.")
    token_resolver = (
        app.extensions.get("hirekit_access_tokens", {}).get(req.blueprint)
        if scheme == BEARER
        else None
    )
    if token_resolver is not None and not key.startswith(KEY_PREFIX):
        refuse_failing_address(app, key)
        caller = token_resolver(key)
        unknown = "Unknown, expired or revoked access token."
    else:
        caller = resolve_key(
            key,
            cache_seconds=app.config["AUTH_CACHE_SECONDS"],
            before_lookup=lambda: refuse_failing_address(app, key),
        )
        unknown = "Unknown or revoked API key."
    if caller is None:
        failures = limits.count_hit(FAILURE_LIMIT)
        if failures is not None and not failures.allowed:
            raise too_many_failures(failures)
        raise ApiError(401, unknown)
    ctx.caller = caller


def accept_access_tokens(
    app, blueprint_name: str, resolver: Callable[[str], Caller | None]
) -> None:
    """Let the blueprint's Bearer scheme take OAuth access tokens besides API keys: a presented
    value that is not an API key goes to `resolver`, which answers its caller, None when it is
    unknown (a failed attempt, as a bad key is), or raises ApiError (401) when it is valid but not
    for this blueprint."""
    app.extensions.setdefault("hirekit_access_tokens", {})[blueprint_name] = resolver


def refuse_failing_address(app, key: str) -> None:
    """Before a key is looked up in the database: 429 when the client address has used up its failed
    attempts and the key is not one that can authenticate, so a flood of guessed keys costs no
    lookup each, while a working key (of any tenant, seen before or not) behind the same address is
    looked up and answers as usual."""
    left = limits.peek_limit(FAILURE_LIMIT)
    if (
        left is not None
        and not left.allowed
        and not known_keys(app).may_authenticate(hash_key(key))
    ):
        raise too_many_failures(left)


class KnownKeys:
    """This process's memory of the keys that can authenticate (not revoked), by the first 16 hex
    digits of their hash: consulted only for a request from an address past its failed attempts, to
    tell a working key (looked up as usual) from an unknown or revoked one (429 with no lookup).

    It is loaded whole on first use and again at most every FULL_RELOAD_SECONDS (revoked keys leave
    it); in between, a key it does not hold reads only the keys added since the last read (`id`
    above the highest seen, at most once every NEW_KEYS_SECONDS), so a flood of unknown keys costs
    at most one small query a second per process, and a key created a moment ago works after at most
    NEW_KEYS_SECONDS."""

    FULL_RELOAD_SECONDS = 60.0
    NEW_KEYS_SECONDS = 1.0
    PREFIX_DIGITS = 16

    def __init__(self):
        self.prefixes: frozenset[str] = frozenset()
        self.highest_id = 0
        self.loaded_at = self.checked_at = float("-inf")
        self.lock = threading.Lock()

    def may_authenticate(self, key_hash: str) -> bool:
        prefix = key_hash[: self.PREFIX_DIGITS]
        if prefix in self.prefixes:
            return True
        with self.lock:  # one reader at a time; the others then see what it read
            now = time.monotonic()
            if now - self.loaded_at >= self.FULL_RELOAD_SECONDS:
                self.load(live_key_hashes(), whole=True)
                self.loaded_at = self.checked_at = now
            elif now - self.checked_at >= self.NEW_KEYS_SECONDS:
                self.load(live_key_hashes(after_id=self.highest_id), whole=False)
                self.checked_at = now
            return prefix in self.prefixes

    def load(self, rows: list[tuple[int, str]], *, whole: bool) -> None:
        added = {key_hash[: self.PREFIX_DIGITS] for _, key_hash in rows}
        self.prefixes = frozenset(added) if whole else self.prefixes | added
        if rows:
            self.highest_id = max(self.highest_id if not whole else 0, rows[-1][0])
        elif whole:
            self.highest_id = 0


def known_keys(app) -> KnownKeys:
    return app.extensions["hirekit_known_keys"]


def too_many_failures(hit: limits.Hit) -> ApiError:
    return ApiError(
        429,
        f"Too many requests with an unknown or revoked API key from your address ({hit.limit}); "
        f"retry in {hit.retry_after} s.",
        headers={"Retry-After": str(hit.retry_after)},
    )


def current_caller() -> Caller:
    caller = g.get("caller")
    if caller is None:
        raise ApiError(401, "Authentication required.")
    return caller


def current_tenant_id() -> str:
    return current_caller().tenant_id


def init_app(app) -> None:
    app.extensions["hirekit_known_keys"] = KnownKeys()
    app.before_request(authenticate)
