"""Rate limits per API key (per client address without one) on Flask-Limiter's storage and strategy, Redis-backed when
configured, with a per-tenant override and per-family shared limits.

Flask-Limiter builds the storage, the strategy and the settings from its `RATELIMIT_*` configuration; the check itself is
ours. Its request hook re-resolves decorators, exemptions and meta limits on every request (about 170 µs, a third of a
GET by id), while Hirekit has one shape of limit: one counter per key for a blueprint's scope. So each blueprint's scope
is fixed once at registration, and a request costs one `hit` and one `get_window_stats` on the Limiter's strategy; with
the default fixed window, one `incr` (whose count gives the remaining) and one `get_expiry` on its storage (two Redis
round trips where the strategy API takes three).
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from functools import lru_cache

from flask import current_app, g, request
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from limits import RateLimitItem, parse
from limits.storage import MemoryStorage
from limits.strategies import FixedWindowRateLimiter

from app.errors import error_response

log = logging.getLogger(__name__)

APP_SCOPE = "app"


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


@dataclass(frozen=True)
class Scope:
    """One counter per key for every route in the scope; the limit comes from `config_name` unless the tenant overrides it."""

    name: str
    config_name: str


@lru_cache(maxsize=4096)
def window_key(limit_text: str, identifiers: tuple) -> tuple[RateLimitItem, str]:
    """The parsed limit and its storage key for these identifiers (what `item.key_for` builds), built once."""
    item = parse(limit_text)
    return item, item.key_for(*identifiers)


def rate_limit_key() -> str:
    """Never the raw key: the key's row id, or the client address when unauthenticated."""
    return caller_key(g.get("caller"))


def caller_key(caller) -> str:
    return f"key:{caller.key_id}" if caller else f"ip:{get_remote_address()}"


class KeyLimits:
    """Checks the request's scope before the view and adds the X-RateLimit-* headers after it."""

    def __init__(self, app):
        self.scopes: dict[str | None, Scope | None] = {}  # blueprint name -> its scope, None when exempt
        self.default = Scope(APP_SCOPE, "RATE_LIMIT")
        self.limiter = Limiter(key_func=rate_limit_key)
        # Flask-Limiter registers its request hooks only for a Limiter not yet listed here; check() replaces them.
        app.extensions.setdefault("limiter", set()).add(self.limiter)
        self.limiter.init_app(app)
        self.enabled = bool(self.limiter.enabled)
        self.fail_open = bool(app.config["RATELIMIT_SWALLOW_ERRORS"])
        self.prefix = (app.config["RATELIMIT_KEY_PREFIX"],) if app.config["RATELIMIT_KEY_PREFIX"] else ()
        self.config = app.config  # the app's own mapping (later changes to it show): no current_app lookup per request
        if self.enabled:
            app.before_request(self.check)
            app.after_request(self.add_headers)

    def check(self):
        req = request._get_current_object()
        if req.url_rule is None:  # no route: the 404 costs nothing to count
            return None
        scope = self.scopes.get(req.blueprint, self.default)
        if scope is None:
            return None
        ctx = g._get_current_object()  # one proxy lookup, not one per use
        caller = ctx.get("caller")
        limit_text = caller.rate_limit if caller is not None and caller.rate_limit else self.config[scope.config_name]
        identifiers = (*self.prefix, caller_key(caller), scope.name)
        item, key = window_key(limit_text, identifiers)
        strategy = self.limiter.limiter
        try:
            if type(strategy) is FixedWindowRateLimiter:  # what FixedWindowRateLimiter.hit does, keeping the count
                count = strategy.storage.incr(key, item.get_expiry())
                allowed, remaining = count <= item.amount, max(0, item.amount - count)
                reset_at = strategy.storage.get_expiry(key)
            else:
                allowed = strategy.hit(item, *identifiers)
                reset_at, remaining = strategy.get_window_stats(item, *identifiers)
        except Exception:
            if not self.fail_open:
                raise  # app.errors answers 503 for an unreachable Redis
            log.exception("rate limit storage unreachable; request let through (RATE_LIMIT_FAIL_OPEN)")
            return None
        ctx.rate_limit_window = (item.amount, remaining, int(reset_at))
        if allowed:
            return None
        retry_after = max(1, math.ceil(reset_at - time.time()))
        return error_response(429, f"Rate limit exceeded ({item}). Higher limits are available on request.",
                              headers={"Retry-After": str(retry_after)})

    @staticmethod
    def add_headers(response):
        window = g.get("rate_limit_window")
        if window is not None:
            limit, remaining, reset_at = window
            add = response.headers.add  # new headers: add skips set's search for existing ones
            add("X-RateLimit-Limit", str(limit))
            add("X-RateLimit-Remaining", str(remaining))
            add("X-RateLimit-Reset", str(reset_at))
        return response


def build_limiter(app) -> KeyLimits:
    """One KeyLimits per app, so test apps and gunicorn workers each own theirs (sharing storage through Redis)."""
    app.config.setdefault("RATELIMIT_ENABLED", app.config["RATE_LIMIT_ENABLED"])
    app.config.setdefault("RATELIMIT_SWALLOW_ERRORS", app.config["RATE_LIMIT_FAIL_OPEN"])
    app.config.setdefault("RATELIMIT_KEY_PREFIX", app.config["RATE_LIMIT_KEY_PREFIX"])
    app.config.setdefault("RATELIMIT_STORAGE_URI", app.config["REDIS_URL"] or "hirekit-memory://")
    app.config.setdefault("RATELIMIT_STRATEGY", "fixed-window")
    limits = KeyLimits(app)
    app.extensions["hirekit_limits"] = limits
    return limits


def apply_limit(app, blueprint, config_name: str) -> None:
    """Give a family its own limit: one counter per key shared by all of the family's routes, instead of the app-wide one."""
    app.extensions["hirekit_limits"].scopes[blueprint.name] = Scope(config_name.lower(), config_name)


def exempt(app, blueprint) -> None:
    """No limit at all (health checks, metrics scrapes)."""
    app.extensions["hirekit_limits"].scopes[blueprint.name] = None


def hit_tenant_limit(tenant_id: str, action: str, config_name: str) -> None:
    """Count one `action` against a limit every key of the tenant shares (config `config_name`, e.g. "10/hour"), beside
    the per-key request limits: for costly actions such as a webhook replay. Raises the 429 when the tenant is over it."""
    from app.errors import ApiError

    limits: KeyLimits = current_app.extensions["hirekit_limits"]
    if not limits.enabled:
        return
    identifiers = (*limits.prefix, f"tenant:{tenant_id}", action)
    item, _ = window_key(current_app.config[config_name], identifiers)
    strategy = limits.limiter.limiter
    try:
        allowed = strategy.hit(item, *identifiers)
        reset_at, _ = strategy.get_window_stats(item, *identifiers)
    except Exception:
        if not limits.fail_open:
            raise
        log.exception("rate limit storage unreachable; %s let through (RATE_LIMIT_FAIL_OPEN)", action)
        return
    if not allowed:
        retry_after = max(1, math.ceil(reset_at - time.time()))
        raise ApiError(429, f"Too many {action.replace('_', ' ')}s for your organisation ({item}); retry in "
                            f"{retry_after} s.", headers={"Retry-After": str(retry_after)})
