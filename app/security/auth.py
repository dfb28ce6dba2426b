"""Who is calling: Bearer keys for /v1, /mcp and /jobs, X-API-Key (or PDL's api_key parameter) for person routes; every query is scoped to the caller's tenant."""

from __future__ import annotations

from typing import Callable

from flask import current_app, g, request

from app.security import limits
from app.errors import ApiError
from app.data.tenancy import KEY_PREFIX, Caller, resolve_key

FAILURE_LIMIT = "AUTH_FAILURE_LIMIT"  # the setting limiting requests with unknown keys per client address

BEARER = "bearer"
API_KEY = "api_key"
SCHEMES = (BEARER, API_KEY)

# OpenAPI security scheme names, shared with app.http.api
FAILURE_LIMIT_DOC = (f"Requests with an unknown or revoked key are limited per client address ({FAILURE_LIMIT}, "
                     "default 30/minute): past it they answer 429 with Retry-After, before the key is looked up, "
                     "whatever key they carry.")
SECURITY_SCHEMES = {
    BEARER: ("bearerAuth", {"type": "http", "scheme": "bearer",
                            "description": f"Authorization: Bearer <API key>. {FAILURE_LIMIT_DOC}"}),
    API_KEY: ("apiKeyAuth", {"type": "apiKey", "in": "header", "name": "X-API-Key", "description": "X-API-Key: <API key> (any case). Person routes also take it as "
                                                                                "the api_key query or JSON body parameter, as PDL's SDKs send it. "
                                                                                f"{FAILURE_LIMIT_DOC}"}),
}


def protect(app, blueprint_name: str, scheme: str) -> None:
    """Require `scheme` on every route of the blueprint (and of blueprints nested in it)."""
    if scheme not in SCHEMES:
        raise ValueError(f"unknown auth scheme {scheme!r}")
    app.extensions.setdefault("hirekit_auth", {})[blueprint_name] = scheme
    app.extensions["hirekit_auth_resolved"] = {}


def scheme_for(blueprint: str | None, app=None) -> str | None:
    """The scheme protecting a blueprint of `app` (the current app by default), its own or its nearest parent's;
    resolved once per blueprint."""
    if not blueprint:
        return None
    extensions = (app or current_app).extensions
    resolved = extensions.setdefault("hirekit_auth_resolved", {})
    if blueprint not in resolved:
        schemes = extensions.get("hirekit_auth", {})
        parts = blueprint.split(".")
        resolved[blueprint] = next((schemes[name] for name in (".".join(parts[:depth]) for depth in range(len(parts), 0, -1))
                                    if schemes.get(name)), None)
    return resolved[blueprint]


def presented_key(scheme: str, headers) -> str | None:
    """The key from the request header the scheme names, or None when absent or malformed."""
    if scheme == BEARER:
        header = headers.get("Authorization", "")
        kind, _, value = header.partition(" ")
        if kind.lower() != "bearer" or not value.strip():
            return None
        return value.strip()
    value = headers.get("X-API-Key", "").strip()  # header names match in any case (X-Api-Key, x-api-key)
    return value or None


def parameter_key(req) -> str | None:
    """The key PDL's SDKs send as the `api_key` parameter: in the query string (GET) or the JSON body (POST)."""
    value = req.args.get("api_key")
    if value is None and req.is_json and req.content_length:  # a chunked body is left to app.http.nul_guard's bounded read
        body = req.get_json(silent=True)
        value = body.get("api_key") if isinstance(body, dict) else None
    return value.strip() or None if isinstance(value, str) else None


def authenticate() -> None:
    """before_request: resolve the caller for protected routes, 401 when the key is missing or unknown."""
    req, ctx, app = request._get_current_object(), g._get_current_object(), current_app._get_current_object()  # one proxy lookup each
    ctx.caller = None
    scheme = scheme_for(req.blueprint, app)
    ctx.auth_scheme = scheme
    if scheme is None or req.method == "OPTIONS":
        return
    key = presented_key(scheme, req.headers)
    if key is None and scheme == API_KEY:
        key = parameter_key(req)
    if key is None:
        where = "the Authorization: Bearer <key> header" if scheme == BEARER else "the X-API-Key header or the api_key parameter"
        raise ApiError(401, f"Missing API key: send it in {where}.")
    token_resolver = app.extensions.get("hirekit_access_tokens", {}).get(req.blueprint) if scheme == BEARER else None
    if token_resolver is not None and not key.startswith(KEY_PREFIX):
        refuse_failing_address()
        caller = token_resolver(key)
        unknown = "Unknown, expired or revoked access token."
    else:
        caller = resolve_key(key, cache_seconds=app.config["AUTH_CACHE_SECONDS"], before_lookup=refuse_failing_address)
        unknown = "Unknown or revoked API key."
    if caller is None:
        failures = limits.count_hit(FAILURE_LIMIT)
        if failures is not None and not failures.allowed:
            raise too_many_failures(failures)
        raise ApiError(401, unknown)
    ctx.caller = caller


def accept_access_tokens(app, blueprint_name: str, resolver: Callable[[str], Caller | None]) -> None:
    """Let the blueprint's Bearer scheme take OAuth access tokens besides API keys: a presented value that is not an
    API key goes to `resolver`, which answers its caller, None when it is unknown (a failed attempt, as a bad key is),
    or raises ApiError (401) when it is valid but not for this blueprint."""
    app.extensions.setdefault("hirekit_access_tokens", {})[blueprint_name] = resolver


def refuse_failing_address() -> None:
    """Before a key is looked up in the database: 429 when the client address has used up its failed attempts, so
    a flood of guessed keys costs no lookups (a key still in the cache of known keys is answered without this)."""
    left = limits.peek_limit(FAILURE_LIMIT)
    if left is not None and not left.allowed:
        raise too_many_failures(left)


def too_many_failures(hit: limits.Hit) -> ApiError:
    return ApiError(429, f"Too many requests with an unknown or revoked API key from your address ({hit.limit}); "
                         f"retry in {hit.retry_after} s.", headers={"Retry-After": str(hit.retry_after)})


def current_caller() -> Caller:
    caller = g.get("caller")
    if caller is None:
        raise ApiError(401, "Authentication required.")
    return caller


def current_tenant_id() -> str:
    return current_caller().tenant_id


def init_app(app) -> None:
    app.before_request(authenticate)
