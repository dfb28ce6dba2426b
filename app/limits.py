"""Rate limits per API key (per client address without one), Redis-backed when configured, with a per-tenant override."""

from __future__ import annotations

import time

from flask import current_app, g
from flask_limiter import ExemptionScope, Limiter, RateLimitExceeded
from flask_limiter.util import get_remote_address
from limits.storage import MemoryStorage

from app.errors import error_response


class SweepingMemoryStorage(MemoryStorage):
    """limits' in-memory storage without its timer thread per hit: a fixed window already expires lazily on read,
    and stale keys are swept inline at most every SWEEP_SECONDS. Used when no Redis is configured."""

    STORAGE_SCHEME = ["hirekit-memory"]
    SWEEP_SECONDS = 10.0

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._next_sweep = time.monotonic() + self.SWEEP_SECONDS

    def _MemoryStorage__schedule_expiry(self) -> None:  # replaces MemoryStorage's private timer restart
        now = time.monotonic()
        if now >= self._next_sweep:
            self._next_sweep = now + self.SWEEP_SECONDS
            self._MemoryStorage__expire_events()


def rate_limit_key() -> str:
    """Never the raw key: the key's row id, or the client address when unauthenticated."""
    caller = g.get("caller")
    return f"key:{caller.key_id}" if caller else f"ip:{get_remote_address()}"


def limit_from(config_name: str):
    """A limit provider: the tenant's override when set, else the configured value."""

    def provider() -> str:
        caller = g.get("caller")
        if caller is not None and caller.rate_limit:
            return caller.rate_limit
        return current_app.config[config_name]

    provider.__name__ = f"limit_from_{config_name.lower()}"
    return provider


def handle_rate_limited(error: RateLimitExceeded):
    """429 in the one error body; Flask-Limiter adds X-RateLimit-* and Retry-After in after_request."""
    return error_response(429, f"Rate limit exceeded ({error.description}). Higher limits are available on request.")


def build_limiter(app) -> Limiter:
    """One Limiter per app, so test apps and gunicorn workers each own theirs (sharing storage through Redis)."""
    redis_url = app.config["REDIS_URL"]
    app.config.setdefault("RATELIMIT_HEADERS_ENABLED", True)
    app.config.setdefault("RATELIMIT_ENABLED", app.config["RATE_LIMIT_ENABLED"])
    app.config.setdefault("RATELIMIT_SWALLOW_ERRORS", app.config["RATE_LIMIT_FAIL_OPEN"])
    app.config.setdefault("RATELIMIT_KEY_PREFIX", app.config["RATE_LIMIT_KEY_PREFIX"])
    app.config.setdefault("RATELIMIT_STORAGE_URI", redis_url or "hirekit-memory://")
    app.config.setdefault("RATELIMIT_STRATEGY", "fixed-window")
    # an application limit: one counter per key across every route (default limits would count per route)
    limiter = Limiter(key_func=rate_limit_key, application_limits=[limit_from("RATE_LIMIT")])

    @app.after_request  # registered first, so it runs after the limiter's header injection
    def _retry_after_only_when_retrying(response):
        if response.status_code not in (429, 503):
            response.headers.pop("Retry-After", None)
        return response

    limiter.init_app(app)
    app.register_error_handler(RateLimitExceeded, handle_rate_limited)
    app.extensions["hirekit_limiter"] = limiter
    return limiter


def apply_limit(app, blueprint, config_name: str) -> None:
    """Give a family its own limit: one counter per key shared by all of the family's routes, instead of the app-wide one."""
    limiter = app.extensions["hirekit_limiter"]
    limiter.shared_limit(limit_from(config_name), scope=config_name.lower())(blueprint)
    limiter.exempt(blueprint, flags=ExemptionScope.APPLICATION)


def exempt(app, blueprint) -> None:
    """No limit at all (health checks, metrics scrapes)."""
    app.extensions["hirekit_limiter"].exempt(blueprint, flags=ExemptionScope.APPLICATION | ExemptionScope.DEFAULT)
