"""Configuration, read once: defaults, then the HIREKIT_CONFIG file, then the environment (HIREKIT_*, else a platform's
DATABASE_URL/REDIS_URL/PORT), then a test mapping: later wins."""

from __future__ import annotations

import json
import os
import runpy
from pathlib import Path

from app.plugins import available

INSTANCE_DIR = Path(os.environ.get("HIREKIT_INSTANCE_DIR", Path(__file__).resolve().parent.parent / "instance"))

DEFAULTS: dict[str, object] = {
    # core
    "PLUGINS": None,  # None: every available family
    "DATABASE_URL": f"sqlite:///{INSTANCE_DIR / 'hirekit.sqlite3'}",
    "DATABASE_POOL_SIZE": 10,
    "REDIS_URL": "",
    "BEHIND_PROXY": False,
    "PORT": 8000,
    "INSTANCE_DIR": str(INSTANCE_DIR),
    # HIREKIT_SECRET_KEY signs every opaque token: "new,old" signs with new and verifies with both (app/secret_key.py).
    # No default: unset, INSTANCE_DIR/secret_key (made by `demo setup`) is read, and a server without either refuses to start.
    "SECRET_KEY": "",
    "SECRET_KEY_FALLBACKS": [],  # set from SECRET_KEY's second and later keys
    "LOG_LEVEL": "INFO",
    "LOG_FORMAT": "json",  # or "text"
    "METRICS_ENABLED": False,
    "METRICS_TOKEN": "",
    "AUTH_CACHE_SECONDS": 5.0,
    "MAX_CONTENT_LENGTH": 16 * 1024 * 1024,
    # rate limits: requests per key per window (per client address without a key). Counters live in Redis when
    # REDIS_URL is set, shared by every worker and host; without Redis each worker process counts on its own, so a
    # key can make up to (gunicorn workers x the limit) requests per window on one host.
    "RATE_LIMIT": "600/minute",
    "PERSON_RATE_LIMIT": "300/minute",
    "AUTH_FAILURE_LIMIT": "30/minute",  # requests with an unknown or revoked key per client address; then 429 before any lookup
    "RATE_LIMIT_ENABLED": True,
    "RATE_LIMIT_FAIL_OPEN": True,
    "RATE_LIMIT_KEY_PREFIX": "hirekit",
    # requests one tenant may have in progress in one worker process (app/fair_share.py); 0: half of WEB_THREADS
    # (at least 1); below 0: no cap. One over it waits up to TENANT_IN_FLIGHT_WAIT seconds for a place, then is 429
    "TENANT_MAX_IN_FLIGHT": 0,
    "TENANT_IN_FLIGHT_WAIT": 0.1,
    "WEB_THREADS": 4,  # gunicorn's request threads per worker (deploy/gunicorn.conf.py reads HIREKIT_WEB_THREADS too)
    # queues
    "QUEUES": ["calls", "webhooks", "default"],
    "WORKER_CLASS": "simple",
    # resumes
    "MAX_RESUME_BYTES": 10 * 1024 * 1024,
    "RESUME_DIR": str(INSTANCE_DIR / "resumes"),
    # integrations that later families read
    "TIMEZONE": "UTC",
    "LLM_URL": "",
    "LLM_API_KEY": "",
    "LLM_MODEL": "gpt-4o-mini",
    "LLM_TIMEOUT": 10.0,
    "TELEPHONY": "simulated",
    "WEBHOOK_ALLOW_PRIVATE": False,
    "WEBHOOK_TIMEOUT": 10.0,  # seconds one send may take, connect to the last response byte read (test sends too)
    "WEBHOOK_RETRY_SCHEDULE": [5, 300, 1800, 7200, 18000, 36000],  # seconds after each failure; then give up
    "WEBHOOK_RETRY_JITTER": 0.1,  # up to +10% on each retry delay
    "WEBHOOK_DISABLE_AFTER": 3 * 24 * 3600,  # seconds of failing deliveries before a webhook is disabled
    "WEBHOOK_SECRET_OVERLAP": 24 * 3600,  # seconds deliveries stay signed with the old secret too after a rotation
    "WEBHOOK_LEASE_GRACE": 30.0,  # seconds past the timeout before a claimed delivery counts as abandoned
    "WEBHOOK_REAPER_INTERVAL": 60.0,  # seconds between passes re-enqueuing stalled deliveries (0: off)
    "IDEMPOTENCY_TTL": 24 * 3600,  # seconds an Idempotency-Key's stored answer replays (app/idempotency.py)
    "IDEMPOTENCY_LOCK_SECONDS": 60.0,  # an in-flight key older than this was left by a dead process: the next retry runs
    "IDEMPOTENCY_PURGE_INTERVAL": 3600.0,  # seconds between the worker's passes deleting expired keys (0: off)
    # bytes of answer body an Idempotency-Key keeps; a larger answer replays as its status, Location and a short note
    "IDEMPOTENCY_MAX_STORED_BYTES": 64 * 1024,
    "EVENT_RETENTION_DAYS": 30.0,  # days events are kept: served by GET /v1/events, replayable to webhooks, then purged
    "EVENT_RETENTION": None,  # the same in seconds (the earlier name); when set it wins over EVENT_RETENTION_DAYS
    "EVENT_PURGE_INTERVAL": 3600.0,  # seconds between the worker's passes deleting events past the retention (0: off)
    "WEBHOOK_REPLAY_RATE_LIMIT": "10/hour",  # replays per tenant
    "WEBHOOK_REPLAY_LOCK_SECONDS": 600.0,  # a replay's lock outlives a replay that died by this long at most
    "CANDIDATE_RETENTION_INTERVAL": 3600.0,  # seconds between the worker's passes erasing candidates past their tenant's retention (0: off)
    "CANDIDATE_RETENTION_BATCH": 100,  # candidates a retention pass (or `flask privacy expire`) looks at per batch
    "CALL_STALL_SECONDS": 3600.0,  # a call ringing or in progress this long without news has lost its worker: failed
    "CALL_REAPER_INTERVAL": 300.0,  # seconds between passes failing stalled calls (0: off)
    "TWILIO_ACCOUNT_SID": "",
    "TWILIO_AUTH_TOKEN": "",
    "TWILIO_FROM_NUMBER": "",
    "TWILIO_CALLBACK_BASE_URL": "",  # public https base Twilio calls back, e.g. https://api.example.com
    "TWILIO_API_BASE_URL": "",  # Twilio's REST API elsewhere than https://api.twilio.com (a mock, a regional proxy)
    "SMTP_HOST": "",  # reminders by email go through SMTP when set, else to the log
    "SMTP_PORT": 587,
    "SMTP_USERNAME": "",
    "SMTP_PASSWORD": "",
    "SMTP_FROM": "",
    "SMTP_STARTTLS": True,
    "SEARCH_BACKEND": "embedded",
    "SEARCH_INDEX": str(INSTANCE_DIR / "search" / "person"),
    "ELASTICSEARCH_URL": "",
    "ELASTICSEARCH_INDEX": "person",
    "ENRICH_VENDOR": "local",
    "ENRICH_URL": "",
    "ENRICH_API_KEY": "",
    "ELASTICSEARCH_API_KEY": "",
    "ELASTICSEARCH_USERNAME": "",
    "ELASTICSEARCH_PASSWORD": "",
    "ELASTICSEARCH_CA_CERTS": "",
    "ELASTICSEARCH_TIMEOUT": 10.0,
    "PERSON_SEARCH_TIMEOUT": 5.0,  # seconds one person search may run before it is abandoned with 503 (plugins/person/query_budget.py)
    "ENRICH_TIMEOUT": 10.0,
    "ENRICH_CONNECT_TIMEOUT": 3.05,
    "ENRICH_RETRIES": 2,
    "ENRICH_BACKOFF": 0.5,
    "ENRICH_MAX_RETRY_AFTER": 10.0,
    "SANDBOX_SEARCH_BACKEND": "embedded",
    "SANDBOX_SEARCH_INDEX": "",  # empty: a "sandbox" directory beside SEARCH_INDEX
    "SANDBOX_ELASTICSEARCH_URL": "",
    "SANDBOX_ELASTICSEARCH_INDEX": "person-sandbox",
    "SANDBOX_ENRICH_VENDOR": "local",
    "SANDBOX_ENRICH_URL": "",  # the sandbox upstream; never falls back to ENRICH_URL
    "SANDBOX_ENRICH_API_KEY": "",
    "SCROLL_TOKEN_TTL": 3600,  # seconds a person scroll token stays valid
    "MCP_ALLOWED_ORIGINS": [],
}

ENV_PREFIX = "HIREKIT_"

# What Procfile platforms (Heroku, Dokku, Render...) set, honoured when the HIREKIT_ variable of the same setting is
# unset. WEB_WORKERS is read by deploy/gunicorn.conf.py only.
PLATFORM_VARIABLES = {
    "DATABASE_URL": "DATABASE_URL",
    "REDIS_URL": "REDIS_URL",
    "PORT": "PORT",
    "WEB_WORKERS": "WEB_CONCURRENCY",
}


def environment_value(key: str, environ=None, default: str | None = None) -> str | None:
    """The raw environment value of setting `key`: HIREKIT_<key>, else the platform's variable for it, else default."""
    environ = os.environ if environ is None else environ
    if ENV_PREFIX + key in environ:
        return environ[ENV_PREFIX + key]
    platform_name = PLATFORM_VARIABLES.get(key)
    if platform_name and platform_name in environ:
        return environ[platform_name]
    return default


def _coerce(raw: str, default: object) -> object:
    """Turn an environment string into the type of its default."""
    if isinstance(default, bool):
        return raw.strip().lower() in {"1", "true", "yes", "on"}
    if isinstance(default, int):
        return int(raw)
    if isinstance(default, float):
        return float(raw)
    if isinstance(default, list):
        raw = raw.strip()
        if raw.startswith("["):
            return json.loads(raw)
        return [part.strip() for part in raw.split(",") if part.strip()]
    return raw


def from_environment(environ: dict[str, str]) -> dict[str, object]:
    """Every HIREKIT_* variable, and the platform variables whose HIREKIT_ one is unset, typed like its default
    (unknown names are kept as strings)."""
    found: dict[str, object] = {}
    for key in PLATFORM_VARIABLES.keys() & DEFAULTS.keys():
        value = environment_value(key, environ)
        if value is not None:
            found[key] = _coerce(value, DEFAULTS[key])
    for name, raw in environ.items():
        if not name.startswith(ENV_PREFIX) or name == "HIREKIT_CONFIG":
            continue
        key = name[len(ENV_PREFIX):]
        default = DEFAULTS.get(key, "")
        found[key] = _coerce(raw, [] if key == "PLUGINS" else default)
    return found


def from_file(path: str) -> dict[str, object]:
    """Upper-case names from a Python or JSON config file."""
    file = Path(path)
    if file.suffix == ".json":
        values = json.loads(file.read_text())
    else:
        values = runpy.run_path(str(file))
    return {key: value for key, value in values.items() if key.isupper()}


def load_config(overrides: dict | None = None, environ: dict[str, str] | None = None) -> dict[str, object]:
    """Defaults, then HIREKIT_CONFIG, then the environment, then the caller's mapping: later wins (12-factor: a
    deployment's environment overrides the file it ships)."""
    environ = dict(os.environ if environ is None else environ)
    config = dict(DEFAULTS)
    if environ.get("HIREKIT_CONFIG"):
        config.update(from_file(environ["HIREKIT_CONFIG"]))
    config.update(from_environment(environ))
    if overrides:
        config.update(overrides)
    _resolve_secret_key(config)
    if isinstance(config["PLUGINS"], str):
        config["PLUGINS"] = _coerce(config["PLUGINS"], [])
    if config["PLUGINS"] is None:
        config["PLUGINS"] = available()
    return config


def _resolve_secret_key(config: dict) -> None:
    """SECRET_KEY = the signing key, SECRET_KEY_FALLBACKS = the older ones still verifying; from the configuration,
    else from the file the demo setup generated in INSTANCE_DIR; both empty when neither has one."""
    from app.secret_key import read_instance_secret, split_keys

    keys = split_keys(config.get("SECRET_KEY")) or read_instance_secret(config["INSTANCE_DIR"])
    config["SECRET_KEY"], config["SECRET_KEY_FALLBACKS"] = (keys[0] if keys else ""), keys[1:]
