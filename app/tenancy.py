"""Tenants and their API keys: keys are shown once, stored only as a SHA-256 hash with a short visible prefix."""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
import time
from dataclasses import dataclass

import peewee as pw

from app.db import BaseModel, utcnow

KEY_PREFIX = "hk_"
VISIBLE_PREFIX_LENGTH = 12
MIN_OPERATOR_KEY_LENGTH = 24
LAST_USED_RESOLUTION_SECONDS = 60
SLUG_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


class Tenant(BaseModel):
    id = pw.CharField(primary_key=True, max_length=64)
    name = pw.CharField(max_length=200)
    rate_limit = pw.CharField(null=True, max_length=100)
    created_at = pw.DateTimeField(default=utcnow)

    class Meta:
        table_name = "tenants"


class ApiKey(BaseModel):
    tenant = pw.ForeignKeyField(Tenant, backref="keys", on_delete="CASCADE", column_name="tenant_id")
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
    """Who is calling: resolved once per request from the API key."""

    tenant_id: str
    key_id: int
    key_prefix: str
    rate_limit: str | None


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def generate_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


class TenantError(ValueError):
    """An operator mistake in the tenant/key CLI, reported as a message."""


def create_tenant(slug: str, name: str | None = None, *, key: str | None = None, rate_limit: str | None = None):
    """Create tenant `slug` and its first key; returns (tenant, plaintext key)."""
    if not SLUG_PATTERN.match(slug):
        raise TenantError("tenant id must be lowercase letters, digits, '-' or '_' (max 63)")
    if Tenant.get_or_none(Tenant.id == slug):
        raise TenantError(f"tenant {slug!r} already exists")
    with Tenant._meta.database.atomic():
        tenant = Tenant.create(id=slug, name=name or slug, rate_limit=rate_limit)
        plaintext = create_key(slug, key=key)
    return tenant, plaintext


def create_key(tenant_id: str, *, key: str | None = None) -> str:
    """Issue a key for the tenant; an operator-chosen key must be long enough to be unguessable."""
    if key is not None and len(key) < MIN_OPERATOR_KEY_LENGTH:
        raise TenantError(f"a chosen key must be at least {MIN_OPERATOR_KEY_LENGTH} characters")
    if not Tenant.get_or_none(Tenant.id == tenant_id):
        raise TenantError(f"no tenant {tenant_id!r}")
    plaintext = key or generate_key()
    if ApiKey.get_or_none(ApiKey.key_hash == hash_key(plaintext)):
        raise TenantError("that key is already in use")
    ApiKey.create(tenant=tenant_id, prefix=plaintext[:VISIBLE_PREFIX_LENGTH], key_hash=hash_key(plaintext))
    return plaintext


def revoke_key(prefix: str) -> int:
    """Revoke every key starting with the visible prefix; returns how many."""
    count = ApiKey.update(revoked=True).where((ApiKey.prefix == prefix[:VISIBLE_PREFIX_LENGTH]) & (ApiKey.revoked == False)).execute()  # noqa: E712
    key_cache.clear()
    return count


class KeyCache:
    """A short per-process memory of resolved keys, so a hot path costs no auth query; revocation wins after ttl."""

    def __init__(self):
        self._entries: dict[str, tuple[float, Caller | None]] = {}
        self._lock = threading.Lock()

    def get(self, key_hash: str):
        entry = self._entries.get(key_hash)
        if entry and entry[0] > time.monotonic():
            return entry
        return None

    def put(self, key_hash: str, caller: Caller | None, ttl: float) -> None:
        if ttl <= 0:
            return
        with self._lock:
            if len(self._entries) > 10_000:
                self._entries.clear()
            self._entries[key_hash] = (time.monotonic() + ttl, caller)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


key_cache = KeyCache()


def resolve_key(plaintext: str, *, cache_seconds: float = 0) -> Caller | None:
    """The caller behind a key, or None for an unknown or revoked key."""
    key_hash = hash_key(plaintext)
    cached = key_cache.get(key_hash) if cache_seconds > 0 else None
    if cached is not None:
        return cached[1]
    row = (ApiKey.select(ApiKey.id, ApiKey.prefix, ApiKey.last_used_at, ApiKey.revoked, Tenant.id, Tenant.rate_limit)
           .join(Tenant).where(ApiKey.key_hash == key_hash).first())
    caller = None
    if row is not None and not row.revoked:
        caller = Caller(tenant_id=row.tenant.id, key_id=row.id, key_prefix=row.prefix, rate_limit=row.tenant.rate_limit)
        now = utcnow()
        if row.last_used_at is None or (now - row.last_used_at).total_seconds() > LAST_USED_RESOLUTION_SECONDS:
            ApiKey.update(last_used_at=now).where(ApiKey.id == row.id).execute()
    key_cache.put(key_hash, caller, cache_seconds)
    return caller
