"""Rate limits per API key (per client address without one) on Flask-Limiter, Redis-backed when
configured, with a per-tenant override and per-family shared limits.

Flask-Limiter checks every request through its documented API: one application limit (scope "app")
whose limit string is a callable (the caller's tenant override, else RATE_LIMIT), a shared limit per
family blueprint (the person routes' PERSON_RATE_LIMIT, exempt from the application limit),
`limiter.exempt` for health checks and metrics scrapes, and an error handler for RateLimitExceeded
answering the one error body. The X-RateLimit-* headers are written here from
`limiter.current_limit`, on every limited response, and Retry-After only on the 429.

Other code counts against the same counters through `count_hit` (one hit of a named limit for the
current caller: the MCP servers count every message of a batch, and people tools against the person
limit), `count_items_beyond_first` (a batch upsert costs its items) and `peek_limit` (whether the
caller has any left, counting nothing: authentication refuses an address past its failed attempts
before a lookup). They use the Limiter's own strategy (`limiter.limiter`) with the keys
Flask-Limiter builds (prefix, caller, scope), so every count lands on one counter.

Without Redis (RATELIMIT_STORAGE_URI defaults to REDIS_URL, else this process's memory) each server
process counts on its own: with gunicorn, a key can make up to (workers x the limit) requests per
window on one host, and each host counts apart. Set REDIS_URL to share one counter per key across
every worker and host.

While the storage is unreachable and RATE_LIMIT_FAIL_OPEN is on (Flask-Limiter's swallow_errors),
requests are let through uncounted and one JSON warning (logger hirekit.limits) says so at most
every STORAGE_DOWN_WARNING_SECONDS per process, in place of Flask-Limiter's traceback per request.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import dataclass
from functools import lru_cache

from flask import current_app, g, has_app_context, request
from flask_limiter import ApplicationLimit, ExemptionScope, Limiter, RateLimitExceeded
from limits import RateLimitItem, parse
from limits.storage import Storage

from app.errors import error_response

# under the app's JSON log handler (app.server.observability.configure_logging)
log = logging.getLogger("hirekit.limits")

APP_SCOPE = "app"
# the config name of the limit every route without a family limit meets
DEFAULT_LIMIT = "RATE_LIMIT"
# at most one "limits skipped" warning per process in this many seconds
STORAGE_DOWN_WARNING_SECONDS = 60.0


class FixedWindowMemoryStorage(Storage):
    """Fixed-window counters in this process's memory (`hirekit-memory://`, used when no Redis is
    configured), on the storage interface `limits` documents for custom backends. limits' own memory
    storage starts a timer thread on nearly every hit to expire keys (1,876 thread starts for 3,000
    GETs by id, a fifth of their time in-process); a fixed window expires on read here, and stale
    keys are swept inline at most every SWEEP_SECONDS."""

    STORAGE_SCHEME = ["hirekit-memory"]
    SWEEP_SECONDS = 10.0

    def __init__(self, uri: str | None = None, wrap_exceptions: bool = False, **options):
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        # key -> (count, when its window ends, epoch seconds)
        self.windows: dict[str, tuple[int, float]] = {}
        self.windows_lock = threading.Lock()
        self.next_sweep = time.time() + self.SWEEP_SECONDS

    @property
    def base_exceptions(self) -> type[Exception]:
        return ValueError

    def incr(self, key: str, expiry: float, amount: int = 1) -> int:
        now = time.time()
        with self.windows_lock:
            if now >= self.next_sweep:
                self.next_sweep = now + self.SWEEP_SECONDS
                self.windows = {
                    name: window for name, window in self.windows.items() if window[1] > now
                }
            count, ends = self.windows.get(key, (0, 0.0))
            if ends <= now:
                count, ends = 0, now + expiry
            self.windows[key] = (count + amount, ends)
            return count + amount

    def get(self, key: str) -> int:
        count, ends = self.windows.get(key, (0, 0.0))
        return count if ends > time.time() else 0

    def get_expiry(self, key: str) -> float:
        count, ends = self.windows.get(key, (0, 0.0))
        return ends if ends > time.time() else time.time()

    def check(self) -> bool:
        return True

    def reset(self) -> int:
        with self.windows_lock:
            cleared, self.windows = len(self.windows), {}
        return cleared

    def clear(self, key: str) -> None:
        with self.windows_lock:
            self.windows.pop(key, None)


@dataclass(frozen=True)
class Scope:
    """One counter per key for every route in the scope; the limit comes from `config_name` unless
    the tenant overrides it."""

    name: str
    config_name: str


@dataclass(slots=True)
class Hit:
    """What one counted (or peeked) hit found: whether it was within the limit, what remains, when
    the window resets."""

    allowed: bool
    limit: RateLimitItem
    remaining: int
    reset_at: float

    @property
    def retry_after(self) -> int:
        """Whole seconds until the window resets (at least 1): the Retry-After of a refusal."""
        return max(1, math.ceil(self.reset_at - time.time()))


@lru_cache(maxsize=4096)
def window_key(limit_text: str, identifiers: tuple) -> tuple[RateLimitItem, str]:
    """The parsed limit and its storage key for these identifiers (what `item.key_for` builds),
    built once."""
    item = parse(limit_text)
    return item, item.key_for(*identifiers)


def rate_limit_key() -> str:
    """Never the raw key: the key's row id, or the client address when unauthenticated."""
    return caller_key(g.get("caller"))


def caller_key(caller) -> str:
    if caller is None:
        return f"ip:{request.remote_addr or '127.0.0.1'}"
    return f"key:{caller.key_id}" if caller.key_id is not None else f"token:{caller.principal}"


class KeyLimits:
    """The app's Flask-Limiter (it checks each request before the view) and what Hirekit adds around
    it: the one error body for a refusal, the X-RateLimit-* headers, and counting on the same
    counters from other code."""

    def __init__(self, app):
        # blueprint name -> its family scope, None when exempt
        self.scopes: dict[str | None, Scope | None] = {}
        self.default = Scope(APP_SCOPE, DEFAULT_LIMIT)
        # the app's own mapping (later changes to it show): no current_app lookup per request
        self.config = app.config
        self.enabled = bool(app.config["RATELIMIT_ENABLED"])
        self.fail_open = bool(app.config["RATELIMIT_SWALLOW_ERRORS"])
        self.prefix = (
            (app.config["RATELIMIT_KEY_PREFIX"],) if app.config["RATELIMIT_KEY_PREFIX"] else ()
        )
        # monotonic time before which an unreachable storage is not reported again
        self._next_storage_warning = 0.0
        self._uncounted = 0  # hits let through uncounted since the last warning
        self._warning_lock = threading.Lock()
        self.limiter = Limiter(
            rate_limit_key,
            application_limits=[ApplicationLimit(self.limit_of(self.default), scope=APP_SCOPE)],
            storage_uri=app.config["RATELIMIT_STORAGE_URI"],
            storage_options=app.config.get("RATELIMIT_STORAGE_OPTIONS", {}),
            strategy=app.config["RATELIMIT_STRATEGY"],
            key_prefix=app.config["RATELIMIT_KEY_PREFIX"],
            swallow_errors=self.fail_open,
            # written by add_headers: Retry-After on the 429 only, never rounded down to 0
            headers_enabled=False,
        )
        self.limiter.init_app(app)
        if self.enabled:
            self.limiter.logger.addFilter(self.swallowed_storage_error)
            app.register_error_handler(RateLimitExceeded, self.refuse)
            app.after_request(self.add_headers)

    def limit_of(self, scope: Scope):
        """The limit string of `scope` for the current request: the caller's tenant override, else
        the setting."""
        config = self.config

        def limit_text() -> str:
            caller = g.get("caller")
            return (
                caller.rate_limit
                if caller is not None and caller.rate_limit
                else config[scope.config_name]
            )

        return limit_text

    def scope_of(self, config_name: str) -> Scope:
        """The scope whose limit is the setting `config_name`: the default one, or the family scope
        apply_limit gives."""
        return (
            self.default
            if config_name == DEFAULT_LIMIT
            else Scope(config_name.lower(), config_name)
        )

    def request_scope(self) -> Scope | None:
        """The scope the current request was counted in by Flask-Limiter (None when exempt or not
        routed)."""
        if request.url_rule is None:
            return None
        return self.scopes.get(request.blueprint, self.default)

    def counted_scope(self) -> Scope | None:
        """The scope Flask-Limiter counted the current request in; None when it counted nothing
        (exempt, not routed, limits off, or its storage unreachable under RATE_LIMIT_FAIL_OPEN)."""
        if not self.enabled or self.limiter.current_limit is None:
            return None
        return self.request_scope()

    def count(self, scope: Scope, caller, *, peek: bool = False, cost: int = 1) -> Hit | None:
        """`cost` hits (one by default) of `scope` for `caller` (the client address when None; a
        tenant's own limit replaces the setting's), or with `peek` only whether any is left (see
        peek_limit); None when the storage is unreachable and RATE_LIMIT_FAIL_OPEN lets it pass."""
        limit_text = (
            caller.rate_limit
            if caller is not None and caller.rate_limit
            else self.config[scope.config_name]
        )
        # the key Flask-Limiter builds for the scope
        identifiers = (*self.prefix, caller_key(caller), scope.name)
        item, _ = window_key(limit_text, identifiers)
        strategy = self.limiter.limiter
        try:
            # one read (a GET on Redis) while some are left; the window's reset only once none is
            if peek:
                if strategy.test(item, *identifiers):
                    return Hit(True, item, 1, 0.0)
                reset_at, _ = strategy.get_window_stats(item, *identifiers)
                return Hit(False, item, 0, reset_at)
            allowed = strategy.hit(item, *identifiers, cost=cost)
            reset_at, remaining = strategy.get_window_stats(item, *identifiers)
        except Exception as error:
            if not self.fail_open:
                raise  # app.errors answers 503 for an unreachable Redis
            self.storage_unreachable(error)
            return None
        return Hit(allowed, item, remaining, reset_at)

    def storage_unreachable(self, error: Exception) -> None:
        """Fail-open: say once (per STORAGE_DOWN_WARNING_SECONDS, per process) in one JSON line that
        limits are skipped, instead of a traceback per request."""
        now = time.monotonic()
        with self._warning_lock:
            self._uncounted += 1
            if now < self._next_storage_warning:
                return
            self._next_storage_warning = now + STORAGE_DOWN_WARNING_SECONDS
            uncounted, self._uncounted = self._uncounted, 0
        log.warning(
            "Rate limit storage unreachable: rate limits are skipped and requests let through "
            "uncounted "
            "(RATE_LIMIT_FAIL_OPEN) until it answers again; repeated at most every %g s",
            STORAGE_DOWN_WARNING_SECONDS,
            extra={
                "error": f"{type(error).__name__}: {error}",
                "uncounted_since_last_warning": uncounted,
            },
        )

    def swallowed_storage_error(self, record: logging.LogRecord) -> bool:
        """A logging filter on Flask-Limiter's logger: an error it swallowed (fail-open) for this
        app becomes the rate-limited warning of storage_unreachable instead of a traceback per
        request."""
        if not (record.exc_info and record.exc_info[1] is not None and has_app_context()):
            return True
        if current_app.extensions.get("hirekit_limits") is not self:
            return True
        self.storage_unreachable(record.exc_info[1])
        return False

    def window(self) -> Hit | None:
        """What the request's own limit stands at: the last count of it taken by other code, else
        Flask-Limiter's."""
        ctx = g._get_current_object()
        hit = ctx.get("rate_limit_window")
        if hit is not None:
            return hit
        current = self.limiter.current_limit
        if current is None:
            return None
        try:
            reset_at, remaining = current.window
        except Exception as error:
            if not self.fail_open:
                raise
            self.storage_unreachable(error)
            return None
        hit = Hit(not current.breached, current.limit, remaining, reset_at)
        ctx.rate_limit_window = hit
        return hit

    def refuse(self, error: RateLimitExceeded):
        """The 429 in the one error body, with Retry-After (whole seconds until the window resets,
        at least 1)."""
        hit = self.window()
        retry_after = hit.retry_after if hit is not None else 1
        return error_response(
            429,
            f"Rate limit exceeded ({error.description}). Higher limits are available on request.",
            headers={"Retry-After": str(retry_after)},
        )

    def add_headers(self, response):
        window = self.window()
        if window is not None:
            add = response.headers.add  # new headers: add skips set's search for existing ones
            add("X-RateLimit-Limit", str(window.limit.amount))
            add("X-RateLimit-Remaining", str(window.remaining))
            add("X-RateLimit-Reset", str(int(window.reset_at)))
        return response


def build_limiter(app) -> KeyLimits:
    """One KeyLimits (and Limiter) per app, so test apps and gunicorn workers each own theirs
    (sharing storage through Redis)."""
    app.config.setdefault("RATELIMIT_ENABLED", app.config["RATE_LIMIT_ENABLED"])
    app.config.setdefault("RATELIMIT_SWALLOW_ERRORS", app.config["RATE_LIMIT_FAIL_OPEN"])
    app.config.setdefault("RATELIMIT_KEY_PREFIX", app.config["RATE_LIMIT_KEY_PREFIX"])
    app.config.setdefault("RATELIMIT_STRATEGY", "fixed-window")
    in_memory = (
        "hirekit-memory://" if app.config["RATELIMIT_STRATEGY"] == "fixed-window" else "memory://"
    )
    app.config.setdefault("RATELIMIT_STORAGE_URI", app.config["REDIS_URL"] or in_memory)
    limits = KeyLimits(app)
    app.extensions["hirekit_limits"] = limits
    return limits


def apply_limit(app, blueprint, config_name: str) -> None:
    """Give a family its own limit: one counter per key shared by all of the family's routes,
    instead of the app-wide one (the blueprint is exempt from the application limit)."""
    limits: KeyLimits = app.extensions["hirekit_limits"]
    scope = limits.scope_of(config_name)
    limits.scopes[blueprint.name] = scope
    limits.limiter.exempt(blueprint, flags=ExemptionScope.APPLICATION)
    limits.limiter.shared_limit(limits.limit_of(scope), scope=scope.name)(blueprint)


def count_hit(config_name: str) -> Hit | None:
    """Count one hit of the limit named by setting `config_name` (DEFAULT_LIMIT,
    "PERSON_RATE_LIMIT", ...) for the current caller, on the very counter the routes of that scope
    use (the client address's without a caller). The caller decides what a refusal looks like
    (hit.allowed False, hit.retry_after); None when limits are off or their storage is unreachable
    and RATE_LIMIT_FAIL_OPEN lets the hit pass uncounted."""
    limits: KeyLimits = current_app.extensions["hirekit_limits"]
    if not limits.enabled:
        return None
    ctx = g._get_current_object()
    scope = limits.scope_of(config_name)
    hit = limits.count(scope, ctx.get("caller"))
    if hit is not None and scope == limits.counted_scope():
        # X-RateLimit-* describe the request's own limit after every hit it took
        ctx.rate_limit_window = hit
    return hit


def count_items_beyond_first(items: int) -> Hit | None:
    """A request carrying `items` writes (a batch upsert) costs what `items` requests would: the
    route counted one, this counts the rest on the same counter (the request's own scope). None when
    nothing was counted (limits off, fail-open, one item)."""
    if items <= 1:
        return None
    limits: KeyLimits = current_app.extensions["hirekit_limits"]
    if not limits.enabled:
        return None
    ctx = g._get_current_object()
    scope = limits.counted_scope()
    if scope is None:
        return None
    hit = limits.count(scope, ctx.get("caller"), cost=items - 1)
    if hit is not None:
        ctx.rate_limit_window = hit
    return hit


def peek_limit(config_name: str) -> Hit | None:
    """Whether the current caller has any of the limit `config_name` left, counting nothing:
    hit.allowed (its remaining and reset_at are only read when none is left, for the refusal); None
    when limits are off or their storage is unreachable (fail-open)."""
    limits: KeyLimits = current_app.extensions["hirekit_limits"]
    if not limits.enabled:
        return None
    return limits.count(limits.scope_of(config_name), g.get("caller"), peek=True)


def exempt(app, blueprint) -> None:
    """No limit at all (health checks, metrics scrapes)."""
    limits: KeyLimits = app.extensions["hirekit_limits"]
    limits.scopes[blueprint.name] = None
    limits.limiter.exempt(blueprint)


def hit_tenant_limit(tenant_id: str, action: str, config_name: str) -> None:
    """Count one `action` against a limit every key of the tenant shares (config `config_name`, e.g.
    "10/hour"), beside the per-key request limits: for costly actions such as a webhook replay.
    Raises the 429 when the tenant is over it."""
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
    except Exception as error:
        if not limits.fail_open:
            raise
        limits.storage_unreachable(error)
        return
    if not allowed:
        retry_after = max(1, math.ceil(reset_at - time.time()))
        raise ApiError(
            429,
            f"Too many {action.replace('_', ' ')}s for your organisation ({item}); retry in "
            f"{retry_after} s.",
            headers={"Retry-After": str(retry_after)},
        )
