"""Configuration, read once: defaults, then the HIREKIT_CONFIG file, then the environment
(HIREKIT_*, else a platform's DATABASE_URL/REDIS_URL/PORT), then a test mapping: later wins."""

from __future__ import annotations

import json
import os
import runpy
from pathlib import Path

from app.plugins import available

INSTANCE_DIR = Path(
    os.environ.get("HIREKIT_INSTANCE_DIR", Path(__file__).resolve().parent.parent / "instance")
)

# Every setting with its default. The comment on a setting's line (and any comment lines directly
# above it) is its meaning: `flask --app wsgi config docs` writes docs/configuration.md from them,
# and tests/test_config_docs.py fails when a setting has none. A `# --- Name ---` line starts a
# section of that page.
DEFAULTS: dict[str, object] = {
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
    "PERSON_RATE_LIMIT": "300/minute",  # requests per key per window on the person routes
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
    # --- Questions and calls ---
    # the zone of candidates whose zone is neither set, inferred from their phone number or
    # location, nor their tenant's default (an IANA name, e.g. America/New_York)
    "TIMEZONE": "UTC",
    # the hours calls and texts may reach a candidate, in the candidate's local time (HH:MM-HH:MM;
    # 00:00-24:00: any hour); a tenant sets its own with PUT /v1/tenant/contact-settings
    "CALLING_HOURS": "08:00-21:00",
    # calls placed to one phone number per local day across a tenant's jobs (0: no cap); per tenant
    # too
    "DAILY_CALL_LIMIT": 0,
    # days a scheduled call's link to the candidate's own page works (and at most once)
    "CANDIDATE_PAGE_TTL_DAYS": 7.0,
    # public base of the candidate's page links in reminders (empty: the request's host)
    "CANDIDATE_PAGE_BASE_URL": "",
    # OpenAI-compatible chat endpoint for question generation and call analysis; empty: the
    # rule-based ones
    "LLM_URL": "",
    "LLM_API_KEY": "",  # bearer key sent to LLM_URL
    "LLM_MODEL": "gpt-4o-mini",  # model name sent to LLM_URL
    "LLM_TIMEOUT": 10.0,  # seconds one LLM call may take before the rule-based answer is used
    # follow-ups a call asks when an answer lacks what its question asks, then it moves on
    "CALL_FOLLOW_UPS": 2,
    "CALL_LANGUAGE": "en-US",  # the conversation's language when the relay names none (BCP 47)
    "TELEPHONY": "simulated",  # `simulated` (a deterministic call, no phone), `twilio` or `telnyx`
    # a call ringing or in progress this long without news has lost its worker: failed
    "CALL_STALL_SECONDS": 3600.0,
    "CALL_REAPER_INTERVAL": 300.0,  # seconds between passes failing stalled calls (0: off)
    # seconds after each failed send of a reminder; never past the call
    "REMINDER_RETRY_SCHEDULE": [60, 300, 900],
    # a reminder claimed this long without an outcome is failed, never sent twice
    "REMINDER_LEASE_SECONDS": 600.0,
    "CALL_VOICE": "",  # the provider's text-to-speech voice; empty: its default for the language
    "RELAY_HOST": "127.0.0.1",  # the relay process's address (its WebSocket for ConversationRelay)
    "RELAY_PORT": 8001,  # the relay process's port; nginx sends /v1/calls/relay/ there
    "RELAY_THREADS": 16,  # dialogue turns one relay process runs at once (threads)
    "RELAY_CALL_THREADS": 4,  # calls a relay process opens or closes at once (threads)
    "RELAY_SILENCE_SECONDS": 12.0,  # no word or key this long after the agent's turn: silence
    "RELAY_CONNECT_TIMEOUT": 30.0,  # an answered call with no relay socket this long after: failed
    "RELAY_QUIET_SECONDS": 60.0,  # a call whose relay process stopped renewing it this long: failed
    "RELAY_SWEEP_INTERVAL": 5.0,  # seconds between a relay process's passes ending such calls
    "RELAY_RECORD_INTERVAL": 0.1,  # seconds between writes of live calls' records (one transaction)
    # seconds ended calls wait after the previous hand-on before their completions (status,
    # assessment, event) go to the workers together in one job; none after an idle spell
    "RELAY_COMPLETION_INTERVAL": 0.5,
    # seconds a relay thread runs Python before it offers the interpreter lock to the others
    # (Python's sys.setswitchinterval; its default is 0.005): shorter, the sockets' loop waits less
    # behind turns
    "RELAY_SWITCH_INTERVAL": 0.005,
    "TWILIO_ACCOUNT_SID": "",  # Twilio account placing calls when TELEPHONY is `twilio`
    "TWILIO_AUTH_TOKEN": "",  # Twilio auth token; also verifies Twilio's signed callbacks
    "TWILIO_FROM_NUMBER": "",  # the number calls come from (E.164)
    "TWILIO_CALLBACK_BASE_URL": "",  # public https base Twilio calls back, e.g. https://api.example.com
    # Twilio's REST API elsewhere than https://api.twilio.com (a mock, a regional proxy)
    "TWILIO_API_BASE_URL": "",
    "TELNYX_API_KEY": "",  # Telnyx API key placing calls and texts when TELEPHONY is `telnyx`
    "TELNYX_ACCOUNT_SID": "",  # Telnyx account id: the AccountSid in TeXML REST paths and callbacks
    "TELNYX_CONNECTION_ID": "",  # the TeXML application (connection) id calls are placed through
    "TELNYX_FROM_NUMBER": "",  # the Telnyx number calls and texts come from (E.164)
    "TELNYX_CALLBACK_BASE_URL": "",  # public https base for Telnyx's callbacks and relay sockets
    "TELNYX_PUBLIC_KEY": "",  # the account's Ed25519 public key (base64): verifies its callbacks
    "TELNYX_API_BASE_URL": "",  # Telnyx's REST API elsewhere than https://api.telnyx.com
    "SMTP_HOST": "",  # reminders by email go through this SMTP server when set, else to the log
    "SMTP_PORT": 587,  # SMTP server port
    "SMTP_USERNAME": "",  # SMTP login (empty: no login)
    "SMTP_PASSWORD": "",  # SMTP password
    "SMTP_FROM": "",  # sender address of reminder emails
    "SMTP_STARTTLS": True,  # upgrade the SMTP connection with STARTTLS
    # --- Webhooks and events ---
    # allow webhook URLs on loopback and private addresses (a local receiver, tests)
    "WEBHOOK_ALLOW_PRIVATE": False,
    # seconds one send may take, connect to the last response byte read (test sends too)
    "WEBHOOK_TIMEOUT": 10.0,
    # seconds after each failure; then give up
    "WEBHOOK_RETRY_SCHEDULE": [5, 300, 1800, 7200, 18000, 36000],
    "WEBHOOK_RETRY_JITTER": 0.1,  # up to +10% on each retry delay
    # seconds of failing deliveries before a webhook is disabled
    "WEBHOOK_DISABLE_AFTER": 3 * 24 * 3600,
    # seconds deliveries stay signed with the old secret too after a rotation
    "WEBHOOK_SECRET_OVERLAP": 24 * 3600,
    # seconds past the timeout before a claimed delivery counts as abandoned
    "WEBHOOK_LEASE_GRACE": 30.0,
    # seconds between passes re-enqueuing stalled deliveries (0: off)
    "WEBHOOK_REAPER_INTERVAL": 60.0,
    "WEBHOOK_REPLAY_RATE_LIMIT": "10/hour",  # webhook replays per tenant
    # a replay's lock outlives a replay that died by this long at most
    "WEBHOOK_REPLAY_LOCK_SECONDS": 600.0,
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
    # --- Privacy ---
    # seconds between the worker's passes erasing candidates past their tenant's
    # candidate_retention_days (0: off)
    "CANDIDATE_RETENTION_INTERVAL": 3600.0,
    # candidates a retention pass (or `flask privacy expire`) erases per batch
    "CANDIDATE_RETENTION_BATCH": 100,
    # --- Person data ---
    # `embedded` (an index on local disk), `elasticsearch`, `opensearch` or `none` (search answers
    # 503)
    "SEARCH_BACKEND": "embedded",
    "SEARCH_INDEX": str(INSTANCE_DIR / "search" / "person"),  # directory of the embedded index
    "ELASTICSEARCH_URL": "",  # the cluster when SEARCH_BACKEND is `elasticsearch`
    # the alias searched; a replacing load fills a new dated index behind it
    "ELASTICSEARCH_INDEX": "person",
    "ELASTICSEARCH_API_KEY": "",  # Elasticsearch API key (or USERNAME and PASSWORD)
    "ELASTICSEARCH_USERNAME": "",  # Elasticsearch basic-auth user
    "ELASTICSEARCH_PASSWORD": "",  # Elasticsearch basic-auth password
    "ELASTICSEARCH_CA_CERTS": "",  # CA bundle that verifies the cluster's certificate
    "ELASTICSEARCH_TIMEOUT": 10.0,  # seconds per Elasticsearch request
    # the REST API major asked of the cluster: empty, the client's (9, which Elasticsearch 9
    # answers); `8` for an Elasticsearch 8 cluster (Elasticsearch 9 answers 8 too)
    "ELASTICSEARCH_COMPATIBLE_WITH": "",
    # how long Elasticsearch keeps a scroll's point in time between two of its pages (an
    # Elasticsearch time: `5m`, `90s`); a next page after longer, or after a replacing load, is 400
    # and the client starts the scroll again
    "ELASTICSEARCH_SCROLL_KEEP_ALIVE": "5m",
    # the cluster when SEARCH_BACKEND is `opensearch` (https:// for TLS); several nodes
    # comma-separated, so a request to a node that is down is sent to another
    "OPENSEARCH_URL": "",
    # the alias searched; a replacing load fills a new dated index behind it
    "OPENSEARCH_INDEX": "person",
    # OpenSearch basic-auth user (the security plugin's internal users, or a proxy's)
    "OPENSEARCH_USERNAME": "",
    "OPENSEARCH_PASSWORD": "",  # OpenSearch basic-auth password
    # sent as `Authorization: ApiKey <key>` instead of basic auth (API tokens, or a gateway that
    # takes one)
    "OPENSEARCH_API_KEY": "",
    "OPENSEARCH_CA_CERTS": "",  # CA bundle that verifies the cluster's certificate
    # verify the cluster's TLS certificate (off only for a test cluster)
    "OPENSEARCH_VERIFY_CERTS": True,
    "OPENSEARCH_TIMEOUT": 10.0,  # seconds per OpenSearch request
    # how long OpenSearch keeps a scroll's point in time between two of its pages (`5m`, `90s`); a
    # next page after longer, or after a replacing load, is 400 and the client starts the scroll
    # again
    "OPENSEARCH_SCROLL_KEEP_ALIVE": "5m",
    # /readyz fails (503) while the person dataset is empty or down; off, it reports it
    "PERSON_DATASET_REQUIRED": False,
    # seconds one person search may run before it is abandoned with 503
    "PERSON_SEARCH_TIMEOUT": 5.0,
    # threads one embedded search runs on at once (0: one per core, at most 4; 1: one)
    "PERSON_SEARCH_THREADS": 0,
    # profiles an embedded index holds before its searches use several threads
    "PERSON_SEARCH_THREADS_MIN_PROFILES": 500000,
    "SCROLL_TOKEN_TTL": 3600,  # seconds a person scroll token stays valid
    # `local` (matches over the dataset), `http` (an upstream vendor) or `none` (503)
    "ENRICH_VENDOR": "local",
    "ENRICH_URL": "",  # the upstream vendor's base URL when ENRICH_VENDOR is `http`
    "ENRICH_API_KEY": "",  # key sent to the upstream vendor (X-Api-Key)
    "ENRICH_TIMEOUT": 10.0,  # seconds to read the vendor's answer
    "ENRICH_CONNECT_TIMEOUT": 3.05,  # seconds to connect to the vendor
    "ENRICH_RETRIES": 2,  # retries of a vendor call after a timeout, refusal, 429 or 5xx
    "ENRICH_BACKOFF": 0.5,  # first wait before a retry, in seconds, doubling each time
    # longest wait honoured from a vendor's Retry-After, in seconds (a longer one is cut to this)
    "ENRICH_MAX_RETRY_AFTER": 10.0,
    # SEARCH_BACKEND of the sandbox routes (/v1/sandbox, /v2/sandbox)
    "SANDBOX_SEARCH_BACKEND": "embedded",
    # the sandbox's embedded index; empty: a "sandbox" directory beside SEARCH_INDEX
    "SANDBOX_SEARCH_INDEX": "",
    "SANDBOX_ELASTICSEARCH_URL": "",  # the sandbox's cluster
    "SANDBOX_ELASTICSEARCH_INDEX": "person-sandbox",  # the sandbox's alias
    "SANDBOX_OPENSEARCH_URL": "",  # the sandbox's OpenSearch cluster
    "SANDBOX_OPENSEARCH_INDEX": "person-sandbox",  # the sandbox's OpenSearch alias
    "SANDBOX_ENRICH_VENDOR": "local",  # ENRICH_VENDOR of the sandbox routes
    "SANDBOX_ENRICH_URL": "",  # the sandbox upstream; never falls back to ENRICH_URL
    "SANDBOX_ENRICH_API_KEY": "",  # key sent to the sandbox upstream
    # --- MCP ---
    # browser origins allowed to call the MCP servers (DNS-rebinding protection), which also get
    # CORS answers; a request without Origin is never refused; `*` allows any
    "MCP_ALLOWED_ORIGINS": [],
    # how long a 2025-06-18/2025-11-25 tools/call that asks its person to confirm (placing a call)
    # waits for the answer on its event stream before it gives up, placing nothing
    "MCP_CONFIRMATION_SECONDS": 120.0,
    # such streams one worker process holds at once (each holds a request thread, so it must stay
    # below HIREKIT_WEB_THREADS: the answer needs a thread of its own); past it the tool answers
    # "call again in a minute"
    "MCP_HELD_CONFIRMATIONS": 2,
    # --- OAuth for the MCP servers ---
    # the authorization server's issuer and the base of the MCP endpoints' resource identifiers, as
    # clients reach them (https://hirekit.example.com); empty: the scheme and host each request came
    # to
    "OAUTH_ISSUER": "",
    "OAUTH_ACCESS_TOKEN_SECONDS": 900,  # how long an access token works; clients refresh it after
    # how long an unused refresh token stays valid (each refresh rotates it)
    "OAUTH_REFRESH_TOKEN_DAYS": 30.0,
    # seconds between the worker's passes deleting expired codes and tokens (0: off)
    "OAUTH_PURGE_INTERVAL": 3600.0,
    # how long a person stays signed in to the sign-in and consent pages
    "OAUTH_SIGN_IN_SECONDS": 3600,
    # largest client metadata document fetched (a larger one: invalid_client)
    "OAUTH_CLIENT_DOCUMENT_MAX_BYTES": 5120,
    # seconds a client metadata document's fetch may take, connect to last byte
    "OAUTH_CLIENT_DOCUMENT_TIMEOUT": 5.0,
    # seconds a fetched client metadata document is used before a refetch
    "OAUTH_CLIENT_DOCUMENT_CACHE_SECONDS": 3600.0,
}

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
