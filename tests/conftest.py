"""Test harness: every API test runs on SQLite, and on PostgreSQL too when HIREKIT_TEST_DATABASE_URL
is set."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

import pytest

from werkzeug.serving import make_server

from app import create_app
from app.data.db import database, database_from_url
from app.data.tenancy import create_key, create_tenant
from tests.worker_databases import use_worker_databases

pytest_plugins = ("tests.skip_summary",)  # each skip reason once in the summary

use_worker_databases()  # before the URLs are read: under pytest -n, each worker's own
POSTGRES_URL = os.environ.get("HIREKIT_TEST_DATABASE_URL", "")
REDIS_URL = os.environ.get("HIREKIT_TEST_REDIS_URL", "")
ELASTICSEARCH_URL = os.environ.get("HIREKIT_TEST_ELASTICSEARCH_URL", "")
TEST_SECRET_KEY = "test-secret-key-not-for-production-0123456789"
# Servers refuse to start without a secret: gunicorn, flask and worker.py processes the tests spawn
# inherit this one.
os.environ.setdefault("HIREKIT_SECRET_KEY", TEST_SECRET_KEY)

# The drills (tests marked `drill`: real clusters and hosts, minutes each) run with `make drills`,
# which sets this.
RUN_DRILLS = os.environ.get("HIREKIT_TEST_DRILLS") == "1"

# the recruitment families and their MCP tools (no person search, OAuth or job board): what most API
# tests need, in about half the time a whole app takes to build
RECRUITMENT = pytest.mark.plugins(
    "jobs",
    "scheduling",
    "candidates",
    "applications",
    "questions",
    "calls",
    "webhooks",
    "privacy",
    "mcp",
)

DB_BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param(
        "postgresql",
        id="postgresql",
        marks=pytest.mark.skipif(
            not POSTGRES_URL,
            reason="PostgreSQL tests need HIREKIT_TEST_DATABASE_URL (e.g. postgresql://postgres@127.0.0.1:5432/test)",
        ),
    ),
]


def pytest_collection_modifyitems(config, items):
    """Drills skip, saying how to run them, unless HIREKIT_TEST_DRILLS=1."""
    if RUN_DRILLS:
        return
    skip = pytest.mark.skip(
        reason="drills (a node or a host killed under load, minutes each) run with `make drills`"
    )
    for item in items:
        if item.get_closest_marker("drill"):
            item.add_marker(skip)


def _reset_postgres_schema(url: str) -> None:
    db = database_from_url(url)
    with db.connection_context():
        db.execute_sql("DROP SCHEMA IF EXISTS public CASCADE")
        db.execute_sql("CREATE SCHEMA public")


@pytest.fixture(scope="session")
def migrated_urls(tmp_path_factory):
    """Each backend's URL, migrated once per session with the real migrations."""
    from app.cli import upgrade_database

    done: dict[str, str] = {}

    def migrated(backend: str) -> str:
        if backend not in done:
            if backend == "sqlite":
                url = f"sqlite:///{tmp_path_factory.mktemp('db') / 'hirekit.sqlite3'}"
            else:
                url = POSTGRES_URL
                _reset_postgres_schema(url)
            database.initialize(database_from_url(url))
            upgrade_database()
            done[backend] = url
        return done[backend]

    return migrated


def _empty_all_tables(url: str) -> None:
    db = database_from_url(url)
    with db.connection_context():
        tables = [t for t in db.get_tables() if t != "migratehistory"]
        if url.startswith("postgres"):
            # DELETE with foreign-key triggers off is much faster than TRUNCATE on small tables
            with db.atomic():
                db.execute_sql("SET LOCAL session_replication_role = replica")
                for table in tables:
                    db.execute_sql(f'DELETE FROM "{table}"')
        else:
            db.execute_sql("PRAGMA foreign_keys = OFF")
            with db.atomic():
                for table in tables:
                    db.execute_sql(f'DELETE FROM "{table}"')
            db.execute_sql("PRAGMA foreign_keys = ON")


@pytest.fixture(params=DB_BACKENDS)
def db_url(request, migrated_urls):
    url = migrated_urls(request.param)
    _empty_all_tables(url)
    return url


@pytest.fixture
def redis_url():
    """A clean Redis database for queue and limiter tests; skipped without
    HIREKIT_TEST_REDIS_URL."""
    if not REDIS_URL:
        pytest.skip("Redis tests need HIREKIT_TEST_REDIS_URL (e.g. redis://127.0.0.1:6379/15)")
    from redis import Redis

    Redis.from_url(REDIS_URL).flushdb()
    return REDIS_URL


def app_settings(db_url: str, directory) -> dict:
    """The settings every test app starts from: `db_url`, and files under `directory`."""
    return {
        "DATABASE_URL": db_url,
        "REDIS_URL": "",
        "RATE_LIMIT": "100000/minute",
        "PERSON_RATE_LIMIT": "100000/minute",
        "AUTH_FAILURE_LIMIT": "100000/minute",
        "AUTH_CACHE_SECONDS": 0,
        "INSTANCE_DIR": str(directory),
        "RESUME_DIR": str(directory / "resumes"),
        "SEARCH_INDEX": str(directory / "search"),
        "WEBHOOK_ALLOW_PRIVATE": True,
        "LOG_LEVEL": "WARNING",
        "SECRET_KEY": TEST_SECRET_KEY,
        # calls and texts at any hour, whenever the suite runs; tests of the calling hours set their
        # own
        "CALLING_HOURS": "00:00-24:00",
    }


@pytest.fixture
def base_config(request, db_url, tmp_path):
    """What every test app starts from; a test adds to it with make_app(**overrides). A module or
    test marked `plugins(*families)` gets an app of just those families (and the core): a smaller
    app, built faster."""
    marker = request.node.get_closest_marker("plugins")
    return {**app_settings(db_url, tmp_path), **({"PLUGINS": list(marker.args)} if marker else {})}


@pytest.fixture
def make_app(base_config):
    def build(**overrides):
        return create_app({**base_config, **overrides})

    return build


@pytest.fixture
def app(make_app):
    return make_app()


@pytest.fixture
def live_url(app):
    """The app behind a real threaded WSGI server on a free 127.0.0.1 port: its base URL."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(timeout=5)


@pytest.fixture
def client(app):
    return app.test_client()


@dataclass
class TenantKeys:
    """A tenant and one of its keys, with the headers each auth scheme wants."""

    id: str
    key: str
    headers: dict = field(init=False)
    person_headers: dict = field(init=False)

    def __post_init__(self):
        self.headers = {"Authorization": f"Bearer {self.key}"}
        self.person_headers = {"X-API-Key": self.key}


@pytest.fixture
def make_tenant(app):
    def build(slug: str, **options) -> TenantKeys:
        with app.app_context(), database.connection_context():
            _, key = create_tenant(slug, **options)
        return TenantKeys(slug, key)

    return build


@pytest.fixture
def tenant_a(make_tenant) -> TenantKeys:
    return make_tenant("tenant-a")


@pytest.fixture
def tenant_b(make_tenant) -> TenantKeys:
    return make_tenant("tenant-b")


@pytest.fixture
def extra_key(app):
    def build(tenant_id: str) -> str:
        with app.app_context(), database.connection_context():
            return create_key(tenant_id)

    return build
