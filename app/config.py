"""Configuration, read once: defaults, then the HIREKIT_CONFIG file, then the environment
(HIREKIT_*, else a platform's DATABASE_URL/REDIS_URL/PORT), then a test mapping: later wins."""

from __future__ import annotations

import importlib.util
import json
import os
import runpy
from pathlib import Path

from app.instance import INSTANCE_DIR
from app.plugins import PluginError, available, core, module_path, selectable

# a family's own settings, in its package: DEFAULTS, written as CORE_DEFAULTS is
SETTINGS_FILE = "settings.py"

# The core's settings with their defaults; each family adds its own from its package's settings.py
# (family_defaults), and DEFAULTS holds them all. The comment on a setting's line (and any comment
# lines directly above it) is its meaning: `flask --app wsgi config docs` writes
# docs/configuration.md from them, and tests/test_config_docs.py fails when a setting has none. A
# `# --- Name ---` line starts a section of that page.
CORE_DEFAULTS: dict[str, object] = {
    # --- Core ---
    # comma-separated endpoint families to enable (the others answer 404); unset: every family.
    # /v1/tenant and /v1/events are always on
    "PLUGINS": None,
    # `sqlite:///relative`, `sqlite:////absolute` or `postgresql://user:pass@host/db`; query
    # parameters reach the driver
    # (`?sslmode=verify-full&sslrootcert=/etc/ssl/rds.pem&connect_timeout=5`). Platform twin:
    # DATABASE_URL
    "DATABASE_URL": f"sqlite:///{INSTANCE_DIR / 'hirekit.sqlite3'}",
    # database connections per process; a request finding all busy waits up to 10 s, then 503
    "DATABASE_POOL_SIZE": 10,
    # Redis for the RQ queues and shared rate limits; empty runs background jobs inline and counts
    # limits in memory per process. Platform twin: REDIS_URL
    "REDIS_URL": "",
    "BEHIND_PROXY": False,  # trust one hop of X-Forwarded-For/-Proto/-Host (set it behind nginx)
    # port of `make run`, the Procfile's web process and deploy/gunicorn.conf.py. Platform twin:
    # PORT
    "PORT": 8000,
    # directory of the embedded database, resumes, search index and generated secret (read from the
    # environment only)
    "INSTANCE_DIR": str(INSTANCE_DIR),
    # signs every opaque token (list cursors, person scroll tokens); at least 32 characters.
    # `NEW,OLD` signs with NEW and verifies with both. No default: unset, `<instance>/secret_key`
    # (made by `demo setup`) is read, and a server or worker without either refuses to start
    "SECRET_KEY": "",
    # not set directly: the second and later keys of SECRET_KEY, which still verify
    "SECRET_KEY_FALLBACKS": [],
    "LOG_LEVEL": "INFO",  # level of the app's and gunicorn's log (DEBUG, INFO, WARNING, ERROR)
    "LOG_FORMAT": "json",  # `json` (one JSON object a line, UTC times) or `text`
    "METRICS_ENABLED": False,  # serve Prometheus text at /metrics
    "METRICS_TOKEN": "",  # bearer token /metrics requires (`Authorization: Bearer <token>`)
    # seconds a worker remembers a resolved key: a revoked key is refused after at most this
    "AUTH_CACHE_SECONDS": 5.0,
    # largest request body in bytes (413 above); raised to twice MAX_RESUME_BYTES when that is
    # larger
    "MAX_CONTENT_LENGTH": 16 * 1024 * 1024,
    # --- Rate limits ---
    # requests per key per window (per client address without a key). With REDIS_URL the counters
    # are shared by every worker and host; without it each gunicorn worker counts on its own, so a
    # key can make up to (workers x limit)
    "RATE_LIMIT": "600/minute",
    # requests with an unknown or revoked key per client address; then 429 before any lookup
    "AUTH_FAILURE_LIMIT": "30/minute",
    "RATE_LIMIT_ENABLED": True,  # false turns every rate limit off
    # when the limit store (Redis) is down: serve unlimited (true) or answer 503 (false)
    "RATE_LIMIT_FAIL_OPEN": True,
    # prefix of the limiter's Redis keys (two deployments sharing one Redis differ here)
    "RATE_LIMIT_KEY_PREFIX": "hirekit",
    # requests one tenant may have in progress in one worker process while another tenant is served
    # there (a tenant alone may use every thread); 0: half of WEB_THREADS (at least 1); below 0: no
    # cap. One over it waits up to TENANT_IN_FLIGHT_WAIT seconds for a place, then is 429
    "TENANT_MAX_IN_FLIGHT": 0,
    # seconds a request over its tenant's in-flight cap waits for a place before its 429
    "TENANT_IN_FLIGHT_WAIT": 0.1,
    # gunicorn's request threads per worker (deploy/gunicorn.conf.py reads it too)
    "WEB_THREADS": 4,
    # --- Background work ---
    # the RQ queues a worker serves when none are named; unset: the queues the enabled families
    # send their jobs to (e.g. `calls` and `webhooks`), then `default`
    "QUEUES": None,
    # RQ worker class of `worker.py`: `simple` (jobs in the worker process), `fork` or `spawn`
    "WORKER_CLASS": "simple",
    # --- Resumes ---
    "MAX_RESUME_BYTES": 10 * 1024 * 1024,  # largest resume accepted, in bytes (413 above)
    "RESUME_DIR": str(INSTANCE_DIR / "resumes"),  # where resume files are stored, one per sha256
    # --- Language model and email ---
    # OpenAI-compatible chat endpoint for question generation and call analysis; empty: the
    # rule-based ones
    "LLM_URL": "",
    "LLM_API_KEY": "",  # bearer key sent to LLM_URL
    "LLM_MODEL": "gpt-4o-mini",  # model name sent to LLM_URL
    "LLM_TIMEOUT": 10.0,  # seconds one LLM call may take before the rule-based answer is used
    "SMTP_HOST": "",  # reminders by email go through this SMTP server when set, else to the log
    "SMTP_PORT": 587,  # SMTP server port
    "SMTP_USERNAME": "",  # SMTP login (empty: no login)
    "SMTP_PASSWORD": "",  # SMTP password
    "SMTP_FROM": "",  # sender address of reminder emails
    "SMTP_STARTTLS": True,  # upgrade the SMTP connection with STARTTLS
    # --- Events ---
    # days events are kept: served by GET /v1/events, replayable to webhooks, then purged
    "EVENT_RETENTION_DAYS": 30.0,
    # the same in seconds (the earlier name); when set it wins over EVENT_RETENTION_DAYS
    "EVENT_RETENTION": None,
    # seconds between the worker's passes deleting events past the retention (0: off)
    "EVENT_PURGE_INTERVAL": 3600.0,
    # --- Idempotency ---
    "IDEMPOTENCY_TTL": 24 * 3600,  # seconds an Idempotency-Key's stored answer replays
    # an in-flight key older than this was left by a dead process: the next retry runs
    "IDEMPOTENCY_LOCK_SECONDS": 60.0,
    # seconds between the worker's passes deleting expired keys (0: off)
    "IDEMPOTENCY_PURGE_INTERVAL": 3600.0,
    # bytes of answer body an Idempotency-Key keeps; a larger answer replays as its status, Location
    # and a short note
    "IDEMPOTENCY_MAX_STORED_BYTES": 64 * 1024,
}


def family_settings_files() -> list[Path]:
    """The settings.py of every family present (core ones first, then in registration order) that
    has one."""
    files = []
    for name in (*core(), *selectable()):
        spec = importlib.util.find_spec(module_path(name))
        if spec is not None and spec.origin is not None:
            path = Path(spec.origin).parent / SETTINGS_FILE
            if path.exists():
                files.append(path)
    return files


def family_defaults() -> dict[str, object]:
    """Every family's DEFAULTS, read from its settings.py without importing the family (whose
    modules read the configuration); a name another family or the core already has stops start."""
    merged: dict[str, object] = {}
    for path in family_settings_files():
        settings = runpy.run_path(str(path))["DEFAULTS"]
        taken = (settings.keys() & merged.keys()) | (settings.keys() & CORE_DEFAULTS.keys())
        if taken:
            raise PluginError(f"{path} declares settings already declared: {sorted(taken)}")
        merged.update(settings)
    return merged


# every setting with its default: the core's, then the families'
DEFAULTS: dict[str, object] = {**CORE_DEFAULTS, **family_defaults()}

ENV_PREFIX = "HIREKIT_"
# lists whose unset default is worked out at start, from the families
UNSET_LISTS = ("PLUGINS", "QUEUES")

# What Procfile platforms (Heroku, Dokku, Render...) set, honoured when the HIREKIT_ variable of the
# same setting is unset. WEB_WORKERS is read by deploy/gunicorn.conf.py only.
PLATFORM_VARIABLES = {
    "DATABASE_URL": "DATABASE_URL",
    "REDIS_URL": "REDIS_URL",
    "PORT": "PORT",
    "WEB_WORKERS": "WEB_CONCURRENCY",
}

# Variables read straight from the environment by the processes around the app rather than by
# load_config: gunicorn's configuration (deploy/gunicorn.conf.py), its worker class
# (app/server/gthread_worker.py) and the loader itself. Name without HIREKIT_ -> (default, meaning);
# docs/configuration.md lists them after the settings.
PROCESS_VARIABLES: dict[str, tuple[str, str]] = {
    "CONFIG": (
        "",
        "a Python or JSON file of settings (upper-case names without `HIREKIT_`), read before the "
        "environment",
    ),
    "BIND": (
        "127.0.0.1:$HIREKIT_PORT",
        "address gunicorn listens on (the Procfile's web process binds 0.0.0.0)",
    ),
    "WEB_WORKERS": ("2 x CPUs + 1", "gunicorn worker processes. Platform twin: WEB_CONCURRENCY"),
    "WEB_TIMEOUT": (
        "30",
        "seconds before gunicorn restarts a worker whose main loop stopped answering (not a slow "
        "request)",
    ),
    "WEB_HEADER_TIMEOUT": (
        "10",
        "seconds a connection has to send a complete request head before it is closed (slow "
        "clients)",
    ),
    "WEB_SWITCH_INTERVAL": (
        "0.001",
        "seconds between GIL switches in a gunicorn worker, so a short request does not wait "
        "behind a computing thread",
    ),
    "WEB_MAX_REQUESTS": (
        "0",
        "requests after which a gunicorn worker restarts (jitter: a tenth of it); 0: never",
    ),
    "WORKER_CLASS_WEB": (
        "app.server.gthread_worker.HeadDeadlineThreadWorker",
        "gunicorn's worker class",
    ),
    "ACCESS_LOG": (
        "",
        "gunicorn's access log: `-` for stdout or a file path; empty: off (the app logs every "
        "request)",
    ),
    "FORWARDED_ALLOW_IPS": ("127.0.0.1", "addresses gunicorn trusts to send X-Forwarded-* headers"),
    "CONTROL_SOCKET": (
        "<instance>/gunicorn.ctl",
        "gunicorn's control socket (mode 0600), or `off` for none",
    ),
    "OPENSEARCH_DIR": (
        "instance/opensearch",
        "where `python -m deploy.opensearch` keeps its loopback nodes' data, logs "
        "and configuration",
    ),
    "ELASTICSEARCH_DIR": (
        "instance/elasticsearch",
        "where `python -m deploy.elasticsearch` keeps its loopback nodes' "
        "data, logs and configuration",
    ),
    "RELAY_EMBEDDED": (
        "",
        "`1`: gunicorn starts the call relay beside it and stops it on exit (`make run` sets it)",
    ),
}


def environment_value(key: str, environ=None, default: str | None = None) -> str | None:
    """The raw environment value of setting `key`: HIREKIT_<key>, else the platform's variable for
    it, else default."""
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
    """Every HIREKIT_* variable, and the platform variables whose HIREKIT_ one is unset, typed like
    its default (unknown names are kept as strings)."""
    found: dict[str, object] = {}
    for key in PLATFORM_VARIABLES.keys() & DEFAULTS.keys():
        value = environment_value(key, environ)
        if value is not None:
            found[key] = _coerce(value, DEFAULTS[key])
    for name, raw in environ.items():
        if not name.startswith(ENV_PREFIX) or name == "HIREKIT_CONFIG":
            continue
        key = name[len(ENV_PREFIX) :]
        default = DEFAULTS.get(key, "")
        found[key] = _coerce(raw, [] if key in UNSET_LISTS else default)
    return found


def from_file(path: str) -> dict[str, object]:
    """Upper-case names from a Python or JSON config file."""
    file = Path(path)
    if file.suffix == ".json":
        values = json.loads(file.read_text())
    else:
        values = runpy.run_path(str(file))
    return {key: value for key, value in values.items() if key.isupper()}


def load_config(
    overrides: dict | None = None, environ: dict[str, str] | None = None
) -> dict[str, object]:
    """Defaults, then HIREKIT_CONFIG, then the environment, then the caller's mapping: later wins
    (12-factor: a deployment's environment overrides the file it ships)."""
    environ = dict(os.environ if environ is None else environ)
    config = dict(DEFAULTS)
    if environ.get("HIREKIT_CONFIG"):
        config.update(from_file(environ["HIREKIT_CONFIG"]))
    config.update(from_environment(environ))
    if overrides:
        config.update(overrides)
    _resolve_secret_key(config)
    for key in UNSET_LISTS:
        if isinstance(config[key], str):
            config[key] = _coerce(config[key], [])
    if config["PLUGINS"] is None:
        config["PLUGINS"] = available()
    return config


def _resolve_secret_key(config: dict) -> None:
    """SECRET_KEY = the signing key, SECRET_KEY_FALLBACKS = the older ones still verifying; from the
    configuration, else from the file the demo setup generated in INSTANCE_DIR; both empty when
    neither has one."""
    from app.security.secret_key import read_instance_secret, split_keys

    keys = split_keys(config.get("SECRET_KEY")) or read_instance_secret(config["INSTANCE_DIR"])
    config["SECRET_KEY"], config["SECRET_KEY_FALLBACKS"] = (keys[0] if keys else ""), keys[1:]
