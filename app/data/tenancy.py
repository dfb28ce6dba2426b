"""Tenants and their API keys: keys are shown once, stored only as a SHA-256 hash with a short
visible prefix."""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Callable

import peewee as pw

from app.data.db import BaseModel, utcnow

KEY_PREFIX = "hk_"
VISIBLE_PREFIX_LENGTH = 12
MIN_KEY_BODY_LENGTH = 32  # generated keys carry 43 (secrets.token_urlsafe(32))
MAX_KEY_LENGTH = 256
# 32 random URL-safe (or even hex) characters all but never have fewer
MIN_DISTINCT_KEY_CHARACTERS = 8
KEY_PATTERN = re.compile(r"^hk_[A-Za-z0-9_-]{%d,}$" % MIN_KEY_BODY_LENGTH)
KEY_RULE = (
    f"'{KEY_PREFIX}' followed by at least {MIN_KEY_BODY_LENGTH} random URL-safe characters "
    "(A-Z, a-z, 0-9, '-', '_'), like the generated keys"
)
KEY_RECIPE = 'python -c "import secrets; print(\'hk_\' + secrets.token_urlsafe(32))"'
LAST_USED_RESOLUTION_SECONDS = 60
SLUG_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


class Tenant(BaseModel):
    id = pw.CharField(primary_key=True, max_length=64)
    name = pw.CharField(max_length=200)
    rate_limit = pw.CharField(null=True, max_length=100)
    created_at = pw.DateTimeField(default=utcnow)
    # erase candidates inactive this long (e.g. plugins.privacy); None: keep
    candidate_retention_days = pw.IntegerField(null=True)

    class Meta:
        table_name = "tenants"


class ApiKey(BaseModel):
    tenant = pw.ForeignKeyField(
        Tenant, backref="keys", on_delete="CASCADE", column_name="tenant_id"
    )
    prefix = pw.CharField(max_length=32, index=True)
    key_hash = pw.CharField(max_length=64, unique=True)
    created_at = pw.DateTimeField(default=utcnow)
    last_used_at = pw.DateTimeField(null=True)
    revoked = pw.BooleanField(default=False)

    class Meta:
        table_name = "api_keys"


class Counter(BaseModel):
    """Per-tenant sequences (job numbers and the like), incremented atomically."""

    tenant = pw.ForeignKeyField(Tenant, on_delete="CASCADE", column_name="tenant_id")
    name = pw.CharField(max_length=64)
    value = pw.BigIntegerField(default=0)

    class Meta:
        table_name = "counters"
        primary_key = pw.CompositeKey("tenant", "name")


MODELS = (Tenant, ApiKey, Counter)


@dataclass(frozen=True)
class Caller:
    """Who is calling: resolved once per request from the API key, or from an OAuth access token
    (then `key_id` is None, `principal` names the authorization for rate limits and `scopes` holds
    what it was granted; a key's caller has scopes None: it is not scoped)."""

    tenant_id: str
    key_id: int | None
    key_prefix: str
    rate_limit: str | None
    scopes: frozenset[str] | None = None
    principal: str | None = None
    user_id: str | None = None


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def generate_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


class TenantError(ValueError):
    """An operator mistake in the tenant/key CLI, reported as a message."""


def check_chosen_key(key: str) -> None:
    """An operator-chosen key must be as strong as a generated one: hk_ and at least 32 random
    URL-safe characters."""
    body = key[len(KEY_PREFIX) :]
    if len(key) > MAX_KEY_LENGTH or not KEY_PATTERN.match(key):
        raise TenantError(
            f"a chosen key must be {KEY_RULE}, at most {MAX_KEY_LENGTH} characters in all; "
            f"make one with: {KEY_RECIPE}"
        )
    if len(set(body)) < MIN_DISTINCT_KEY_CHARACTERS:
        raise TenantError(
            f"a chosen key must be random: this one uses only {len(set(body))} different "
            "characters "
            f"after '{KEY_PREFIX}'; make one with: {KEY_RECIPE}"
        )


def check_rate_limit(rate_limit: str) -> None:
    """A tenant's own limit must read as one limit of the limits library ("6000/minute", "100 per
    second")."""
    from limits import parse

    try:
        parse(rate_limit)
    except ValueError as exc:
        raise TenantError(
            f"rate limit {rate_limit!r} is not a limit like '6000/minute' or '100/second'"
        ) from exc


def create_tenant(
    slug: str,
    name: str | None = None,
    *,
    key: str | None = None,
    rate_limit: str | None = None,
    candidate_retention_days: int | None = None,
):
    """Create tenant `slug` and its first key; returns (tenant, plaintext key)."""
    if not SLUG_PATTERN.match(slug):
        raise TenantError("tenant id must be lowercase letters, digits, '-' or '_' (max 63)")
    if key is not None:
        check_chosen_key(key)
    if rate_limit is not None:
        check_rate_limit(rate_limit)
    if Tenant.get_or_none(Tenant.id == slug):
        raise TenantError(f"tenant {slug!r} already exists")
    with Tenant._meta.database.atomic():
        tenant = Tenant.create(
            id=slug,
            name=name or slug,
            rate_limit=rate_limit,
            candidate_retention_days=_retention_days(candidate_retention_days),
        )
        plaintext = create_key(slug, key=key)
    return tenant, plaintext


def _retention_days(days: int | None) -> int | None:
    if days is not None and (isinstance(days, bool) or not isinstance(days, int) or days < 1):
        raise TenantError(
            "candidate_retention_days must be a whole number of days, 1 or more (or none)"
        )
    return days


def update_tenant(
    slug: str,
    *,
    name: str | None = None,
    rate_limit: str | None = None,
    default_rate_limit: bool = False,
    candidate_retention_days: int | None = None,
    keep_candidates: bool = False,
) -> Tenant:
    """Change an existing tenant's display name, its own rate limit (`default_rate_limit` drops it,
    so the RATE_LIMIT setting applies again) and/or its candidate retention (`keep_candidates` drops
    it: kept until erased); returns the tenant as stored."""
    tenant = Tenant.get_or_none(Tenant.id == slug)
    if tenant is None:
        raise TenantError(f"no tenant {slug!r}")
    if rate_limit is not None and default_rate_limit:
        raise TenantError("give a new rate limit or drop the tenant's own, not both")
    if candidate_retention_days is not None and keep_candidates:
        raise TenantError("give a candidate retention or keep candidates until erased, not both")
    if candidate_retention_days is not None or keep_candidates:
        tenant.candidate_retention_days = _retention_days(candidate_retention_days)
    if rate_limit is not None:
        check_rate_limit(rate_limit)
        tenant.rate_limit = rate_limit
    if default_rate_limit:
        tenant.rate_limit = None
    if name is not None:
        tenant.name = name
    tenant.save()
    return tenant


def create_key(tenant_id: str, *, key: str | None = None) -> str:
    """Issue a key for the tenant; an operator-chosen key must meet the generated keys' rule
    (check_chosen_key)."""
    if key is not None:
        check_chosen_key(key)
    if not Tenant.get_or_none(Tenant.id == tenant_id):
        raise TenantError(f"no tenant {tenant_id!r}")
    plaintext = key or generate_key()
    if ApiKey.get_or_none(ApiKey.key_hash == hash_key(plaintext)):
        raise TenantError("that key is already in use")
    ApiKey.create(
        tenant=tenant_id, prefix=plaintext[:VISIBLE_PREFIX_LENGTH], key_hash=hash_key(plaintext)
    )
    return plaintext


def key_for(plaintext: str) -> ApiKey | None:
    """The stored key row of a plaintext key (to tell the operator its id), or None."""
    return ApiKey.get_or_none(ApiKey.key_hash == hash_key(plaintext))


def tenant_keys(tenant_id: str) -> list[ApiKey]:
    """Every key of a tenant, revoked ones too, oldest first."""
    if not Tenant.get_or_none(Tenant.id == tenant_id):
        raise TenantError(f"no tenant {tenant_id!r}")
    return list(ApiKey.select().where(ApiKey.tenant == tenant_id).order_by(ApiKey.id))


class AmbiguousPrefix(TenantError):
    """More than one active key shares a visible prefix (operator-chosen keys can): revoke one by
    its id."""

    def __init__(self, prefix: str, keys: list[ApiKey]):
        self.key_ids = [key.id for key in keys]
        listed = ", ".join(f"{key.id} (tenant {key.tenant_id})" for key in keys)
        super().__init__(
            f"{len(keys)} active keys share the prefix {prefix!r}: ids {listed}; nothing was "
            "revoked. "
            "Revoke one with `keys revoke --id ID` (`keys list TENANT` shows them)."
        )


def revoke_key(prefix: str) -> int:
    """Revoke the one active key with this visible prefix (a longer string, e.g. the whole key, is
    cut to the prefix); returns how many (0 or 1). Several keys sharing it raise AmbiguousPrefix and
    nothing is revoked."""
    prefix = prefix[:VISIBLE_PREFIX_LENGTH]
    matches = list(
        ApiKey.select()
        .where((ApiKey.prefix == prefix) & (ApiKey.revoked == False))  # noqa: E712
        .order_by(ApiKey.id)
    )
    if len(matches) > 1:
        raise AmbiguousPrefix(prefix, matches)
    if not matches:
        return 0
    return _revoke(matches[0].id)


def revoke_key_id(key_id: int) -> int:
    """Revoke the key with this id; returns how many (0 when there is no such active key)."""
    return _revoke(key_id)


def _revoke(key_id: int) -> int:
    count = (
        ApiKey.update(revoked=True)
        .where((ApiKey.id == key_id) & (ApiKey.revoked == False))  # noqa: E712
        .execute()
    )
    key_cache.clear()
    return count


class KeyCache:
    """A short per-process memory of resolved keys, so a hot path costs no auth query; revocation
    wins after ttl.

    Known keys and unknown ones are kept apart: anyone can send millions of unknown keys, so they go
    to a small memory of their own (UNKNOWN_ENTRIES, oldest dropped first) and never push a known
    key out of the other (KNOWN_ENTRIES, a bound only as many live keys as a deployment has can
    reach: expired entries go first, then the oldest)."""

    KNOWN_ENTRIES = 10_000
    UNKNOWN_ENTRIES = 1_024

    def __init__(self):
        self._known: dict[str, tuple[float, Caller]] = {}
        self._unknown: dict[str, tuple[float, None]] = {}
        self._lock = threading.Lock()

    def get(self, key_hash: str):
        """(expiry, caller) while fresh, the caller None for a key known to be unknown or revoked; else None."""  # noqa: E501
        entry = self._known.get(key_hash) or self._unknown.get(key_hash)
        if entry and entry[0] > time.monotonic():
            return entry
        return None

    def put(self, key_hash: str, caller: Caller | None, ttl: float) -> None:
        if ttl <= 0:
            return
        now = time.monotonic()
        entries, bound = (
            (self._unknown, self.UNKNOWN_ENTRIES)
            if caller is None
            else (self._known, self.KNOWN_ENTRIES)
        )
        with self._lock:
            entries.pop(key_hash, None)  # re-inserted at the end: the oldest entry is the first one
            if len(entries) >= bound and caller is not None:
                for stale in [name for name, (expiry, _) in entries.items() if expiry <= now]:
                    del entries[stale]
            while len(entries) >= bound:
                del entries[next(iter(entries))]
            entries[key_hash] = (now + ttl, caller)

    def clear(self) -> None:
        with self._lock:
            self._known.clear()
            self._unknown.clear()


key_cache = KeyCache()


def resolve_key(
    plaintext: str, *, cache_seconds: float = 0, before_lookup: Callable[[], None] | None = None
) -> Caller | None:
    """The caller behind a key, or None for an unknown or revoked key. `before_lookup` runs when the
    key must be looked up in the database (it may raise to refuse the request first, e.g.
    app.security.auth's failed-attempt limit)."""
    key_hash = hash_key(plaintext)
    cached = key_cache.get(key_hash) if cache_seconds > 0 else None
    if cached is not None:
        return cached[1]
    if before_lookup is not None:
        before_lookup()
    row = (
        ApiKey.select(
            ApiKey.id,
            ApiKey.prefix,
            ApiKey.last_used_at,
            ApiKey.revoked,
            Tenant.id,
            Tenant.rate_limit,
        )
        .join(Tenant)
        .where(ApiKey.key_hash == key_hash)
        .first()
    )
    caller = None
    if row is not None and not row.revoked:
        caller = Caller(
            tenant_id=row.tenant.id,
            key_id=row.id,
            key_prefix=row.prefix,
            rate_limit=row.tenant.rate_limit,
        )
        _note_use(row.id, row.last_used_at)
    key_cache.put(key_hash, caller, cache_seconds)
    return caller


def live_key_hashes(after_id: int = 0) -> list[tuple[int, str]]:
    """(id, key_hash) of every key that is not revoked with an id above `after_id`, by id: what
    app.security.auth's memory of keys that can authenticate loads, whole or only the newer keys."""
    query = (
        ApiKey.select(ApiKey.id, ApiKey.key_hash)
        .where((ApiKey.id > after_id) & (ApiKey.revoked == False))  # noqa: E712
        .order_by(ApiKey.id)
    )
    return list(query.tuples())


def _note_use(key_id: int, last_used_at) -> None:
    """Record when a key was last used, at most once a minute per key: the write is skipped while
    the stored time is fresh, and the update's condition keeps workers that read the same stale time
    from writing it again."""
    now = utcnow()
    if (
        last_used_at is not None
        and (now - last_used_at).total_seconds() < LAST_USED_RESOLUTION_SECONDS
    ):
        return
    stale = now - timedelta(seconds=LAST_USED_RESOLUTION_SECONDS)
    (
        ApiKey.update(last_used_at=now)
        .where(
            (ApiKey.id == key_id) & (ApiKey.last_used_at.is_null() | (ApiKey.last_used_at <= stale))
        )
        .execute()
    )
