"""The peewee database behind a proxy: URL -> database, a connection per request (kept between requests by
gunicorn's threads), base models and fields every plugin shares."""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
import uuid
from pathlib import Path
from urllib.parse import unquote, urlparse

import peewee as pw
from playhouse import db_url
from playhouse.pool import PooledPostgresqlDatabase, PooledSqliteDatabase

from app.server.server_threads import is_long_lived_request_thread

log = logging.getLogger("hirekit.db")


def utcnow() -> dt.datetime:
    """Naive UTC now: every timestamp is stored in UTC without an offset."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


class _Savepoint(pw._savepoint):
    """A savepoint that, when it rolls back, also drops the after-commit work registered inside it (peewee drops that
    work only when the outermost transaction rolls back)."""

    def __enter__(self):
        self._side_effects_before = len(self.db._state.commit_callbacks)
        return super().__enter__()

    def rollback(self, begin=True):
        super().rollback(begin)
        del self.db._state.commit_callbacks[self._side_effects_before:]


class HirekitDatabaseProxy(pw.DatabaseProxy):
    """The proxy every model uses: its nested atomic() blocks are savepoints that forget their rolled-back side effects."""

    def savepoint(self):
        return _Savepoint(self)


class KeptConnections:
    """peewee pool mixin: a long-lived request thread (app.server.server_threads) keeps its connection between requests
    instead of checking it in and out of the pool around each one (the pool's lock, heap and bookkeeping: about a
    tenth of a GET by id's CPU in-process). A kept connection stays in the pool's in-use count, so the pool size still
    bounds the process's connections; it goes back to the pool like any other when it is not idle (a transaction left
    open or failed), has outlived the pool's stale timeout, or would leave the pool no free slot."""

    def keep(self, conn) -> bool:
        """Whether the current thread may keep `conn`, its checked-out connection, past the request that used it."""
        entry = self._in_use.get(self.conn_key(conn))
        if entry is None or not self._idle(conn) or (self._max_connections and len(self._in_use) >= self._max_connections):
            return False
        if self._stale_timeout and self._is_stale(entry.timestamp):
            return False
        self._mark_idle(conn)
        return True

    def start_request(self) -> None:
        """A request starts without a connection, unless its thread kept the one its last request used: that one is
        dropped here if it fails the test check-out puts to a pooled one (`_is_closed`; PostgreSQL pings one idle for
        30 s), so the pool discards it and the request's first query checks out another."""
        state = self._state
        if not state.closed and is_long_lived_request_thread() and self._is_closed(state.conn):
            self.close()

    def end_request(self, failed: bool) -> None:
        """The request's connection goes back to the pool, unless its thread may keep it (see `keep`)."""
        state = self._state
        if state.closed or (not failed and is_long_lived_request_thread() and self.keep(state.conn)):
            return
        self.close()

    def _idle(self, conn) -> bool:
        raise NotImplementedError

    def _mark_idle(self, conn) -> None:
        """Hook: the connection is idle from now (kept, or checked in)."""


class SqlitePool(KeptConnections, PooledSqliteDatabase):
    """peewee's SQLite pool, whose connections long-lived request threads keep."""

    def _idle(self, conn) -> bool:
        return not conn.in_transaction


class PostgresPool(KeptConnections, PooledPostgresqlDatabase):
    """peewee's pool pings every connection on checkout (a SELECT 1 round trip per request); ping only the ones idle
    longer than PING_AFTER_SECONDS. A hot connection that died anyway fails its query (503) and is discarded at check-in."""

    PING_AFTER_SECONDS = 30.0

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._returned_at: dict[int, float] = {}
        self._prepared: dict[int, set[str]] = {}  # per live connection: the statements PREPAREd on it

    def _is_closed(self, conn):
        if conn.closed or self._adapter.txn_status(conn) == self._adapter.txn_unknown:
            closed = True
        elif time.monotonic() - self._returned_at.get(self.conn_key(conn), 0.0) > self.PING_AFTER_SECONDS:
            closed = super()._is_closed(conn)
        else:
            closed = False
        if closed:  # the pool drops it: forget it, its id may be reused by a new connection
            self._forget(conn)
        return closed

    def _idle(self, conn) -> bool:
        return not conn.closed and self._adapter.txn_status(conn) == self._adapter.txn_idle

    def _mark_idle(self, conn) -> None:
        self._returned_at[self.conn_key(conn)] = time.monotonic()

    def _close(self, conn, close_conn=False):
        self._mark_idle(conn)
        return super()._close(conn, close_conn)

    def _close_raw(self, conn):
        self._forget(conn)
        return super()._close_raw(conn)

    def _forget(self, conn) -> None:
        key = self.conn_key(conn)
        self._returned_at.pop(key, None)
        self._prepared.pop(key, None)

    def execute_prepared(self, name: str, sql: str, params: tuple):
        """Run `sql` (with %s placeholders) as a server-side prepared statement: planned once per connection."""
        conn = self.connection()
        prepared = self._prepared.setdefault(self.conn_key(conn), set())
        if name not in prepared:
            numbered = sql
            for position in range(1, len(params) + 1):
                numbered = numbered.replace("%s", f"${position}", 1)
            self.execute_sql(f"PREPARE {name} AS {numbered}")
            prepared.add(name)
        return self.execute_sql(f"EXECUTE {name}({', '.join(['%s'] * len(params))})", params)


database = HirekitDatabaseProxy()
_databases: dict[tuple[str, int], pw.Database] = {}


def database_from_url(url: str, *, pool_size: int = 10) -> pw.Database:
    """The process's one database object for a URL (apps built twice in a process share its pool)."""
    key = (url, pool_size)
    if key not in _databases:
        _databases[key] = _open_database(url, pool_size)
    return _databases[key]


db_url.register_database(PostgresPool, "postgres", "postgresql")
db_url.register_database(SqlitePool, "sqlite")


def _database_options(scheme: str, pool_size: int) -> dict:
    """The project's options for a scheme's pooled class; the URL's query parameters are laid over them."""
    if scheme == "sqlite":
        # pooled, so the pragmas run once per connection rather than once per request. Transactions begin IMMEDIATE:
        # one that read first could not take the write lock later while another writer had committed (SQLITE_BUSY at
        # once, whatever the busy timeout), so writers take the lock up front and queue on the busy timeout instead.
        # Reads outside a transaction stay deferred.
        return {
            "lock_type": "IMMEDIATE",
            "pragmas": {"journal_mode": "wal", "foreign_keys": 1, "busy_timeout": 10000, "synchronous": "normal"},
            "check_same_thread": False,
            "max_connections": pool_size,
            "stale_timeout": 300,
            "timeout": 10,  # a request thread finding every connection in use waits for one, as on PostgreSQL
        }
    return {"max_connections": pool_size, "stale_timeout": 300, "timeout": 10, "connect_timeout": 3, "port": 5432}


class DatabaseUrlError(ValueError):
    """HIREKIT_DATABASE_URL names no database this server can open (a misspelt scheme)."""


def check_database_url(url: str) -> str:
    """The URL's scheme when it is one of sqlite, postgres, postgresql; DatabaseUrlError naming the setting otherwise."""
    scheme = urlparse(url).scheme
    if scheme not in ("sqlite", "postgres", "postgresql"):
        raise DatabaseUrlError(f"HIREKIT_DATABASE_URL has the scheme {scheme!r}, which is not a database this server "
                               "opens: use sqlite:///path/to/file.sqlite3 or postgresql://user@host:5432/name")
    return scheme


def _open_database(url: str, pool_size: int) -> pw.Database:
    """sqlite:///path or postgresql://user:pw@host:port/name?sslmode=verify-full&... -> a peewee database.

    playhouse.db_url parses the URL; every query parameter (sslmode, sslrootcert, application_name, connect_timeout...)
    reaches the driver's connect() and wins over the project's defaults."""
    scheme = check_database_url(url)
    options = _database_options(scheme, pool_size)
    options.update(db_url.parse(url, unquote_password=True, unquote_user=True))
    if scheme == "sqlite":
        # SQLAlchemy's convention: sqlite:///relative/path, sqlite:////absolute/path
        options["database"] = unquote(options["database"]) or ":memory:"
        if options["database"] != ":memory:":
            Path(options["database"]).parent.mkdir(parents=True, exist_ok=True)
    else:
        options["database"] = unquote(options["database"])
    return db_url.schemes[scheme](**options)


def init_app(app) -> None:
    """Bind the proxy to the configured database; a request opens a connection on its first query and hands it back
    when it ends, unless its thread keeps it for the next request (KeptConnections)."""
    database.initialize(database_from_url(app.config["DATABASE_URL"], pool_size=app.config["DATABASE_POOL_SIZE"]))

    @app.before_request
    def _check_kept_connection():
        database.obj.start_request()

    @app.teardown_appcontext
    def _close_connection(exc):
        database.obj.end_request(failed=exc is not None)


def is_postgres() -> bool:
    """Whether the configured database is PostgreSQL (for the few statements SQLite has no form of)."""
    return isinstance(database.obj, pw.PostgresqlDatabase)


def after_commit(side_effect) -> None:
    """Run `side_effect()` once the current transaction commits, now when none is open, and never when it rolls back
    (a savepoint included). Deferred, a failure is logged rather than raised: the write it follows has committed."""
    if not database.in_transaction():
        side_effect()
        return

    def run() -> None:
        try:
            side_effect()
        except Exception:  # noqa: BLE001 - raised here it would turn a committed write into an error
            log.exception("side effect %s after commit failed", getattr(side_effect, "__qualname__", side_effect))

    database.after_commit(run)


class JSONField(pw.TextField):
    """JSON stored as text, so the same column works on SQLite and PostgreSQL."""

    def db_value(self, value):
        return None if value is None else json.dumps(value, separators=(",", ":"))

    def python_value(self, value):
        return None if value is None else json.loads(value)


class BaseModel(pw.Model):
    """Every table lives behind the shared proxy."""

    class Meta:
        database = database
        legacy_table_names = False


class TimestampedModel(BaseModel):
    """created_at/updated_at kept by save()."""

    created_at = pw.DateTimeField(default=utcnow)
    updated_at = pw.DateTimeField(default=utcnow)

    def save(self, *args, **kwargs):
        self.updated_at = utcnow()
        return super().save(*args, **kwargs)


def new_uuid() -> uuid.UUID:
    return uuid.uuid4()


def parse_uuid(value) -> uuid.UUID | None:
    """A UUID from a path or query value, None when it is not one (callers answer 404 or 422)."""
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except (ValueError, TypeError, AttributeError):
        return None
