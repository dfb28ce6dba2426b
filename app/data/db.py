"""The peewee database behind a proxy: URL -> pooled database, a connection per request, base models
and fields every plugin shares."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import threading
import uuid
from pathlib import Path
from urllib.parse import unquote, urlparse

import orjson
import peewee as pw
from playhouse import db_url
from playhouse.pool import PooledSqliteDatabase

from app.data.postgres_pool import PooledPostgres

log = logging.getLogger("hirekit.db")


def utcnow() -> dt.datetime:
    """Naive UTC now: every timestamp is stored in UTC without an offset."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


class _DeferredSideEffect:
    """Work registered to run after the outermost commit, which a rolled-back savepoint around it
    cancels."""

    __slots__ = ("work", "cancelled")

    def __init__(self, work):
        self.work = work
        self.cancelled = False

    def __call__(self) -> None:
        if not self.cancelled:
            self.work()


# per thread, as peewee's transactions: the side effects of each open atomic() block
_scopes = threading.local()


def _open_scopes() -> list[list[_DeferredSideEffect]]:
    stack = getattr(_scopes, "stack", None)
    if stack is None:
        stack = _scopes.stack = []
    return stack


class _SideEffectScope(contextlib.ContextDecorator):
    """peewee's atomic() block, also remembering the side effects registered inside it: when the
    block ends by an exception (a savepoint rolled back), they are cancelled; peewee itself drops
    after-commit work only when the outermost transaction rolls back."""

    def __init__(self, block):
        self.block = block

    def __enter__(self):
        stack = _open_scopes()
        stack.append([])
        try:
            return self.block.__enter__()
        except BaseException:
            stack.pop()
            raise

    def __exit__(self, kind, error, trace):
        stack = _open_scopes()
        effects = stack.pop()
        try:
            return self.block.__exit__(kind, error, trace)
        finally:
            if kind is not None:
                for effect in effects:
                    effect.cancelled = True
            elif stack:
                stack[-1].extend(effects)


class HirekitDatabaseProxy(pw.DatabaseProxy):
    """The proxy every model uses: an atomic() block that rolls back also forgets the side effects
    registered in it (app.data.db.after_commit)."""

    def atomic(self, *args, **kwargs):
        return _SideEffectScope(super().atomic(*args, **kwargs))


database = HirekitDatabaseProxy()
_databases: dict[tuple[str, int], pw.Database] = {}


def database_from_url(url: str, *, pool_size: int = 10) -> pw.Database:
    """The process's one database object for a URL (apps built twice in a process share its
    pool)."""
    key = (url, pool_size)
    if key not in _databases:
        _databases[key] = _open_database(url, pool_size)
    return _databases[key]


POOLED_DATABASES = {
    "sqlite": PooledSqliteDatabase,
    "postgres": PooledPostgres,
    "postgresql": PooledPostgres,
}


def _database_options(scheme: str, pool_size: int) -> dict:
    """The project's options for a scheme's pooled class; the URL's query parameters are laid over
    them."""
    if scheme == "sqlite":
        # pooled, so the pragmas run once per connection rather than once per request. Transactions
        # begin IMMEDIATE: one that read first could not take the write lock later while another
        # writer had committed (SQLITE_BUSY at once, whatever the busy timeout), so writers take the
        # lock up front and queue on the busy timeout instead. Reads outside a transaction stay
        # deferred.
        return {
            "lock_type": "IMMEDIATE",
            "pragmas": {
                "journal_mode": "wal",
                "foreign_keys": 1,
                "busy_timeout": 10000,
                "synchronous": "normal",
            },
            "check_same_thread": False,
            "max_connections": pool_size,
            "stale_timeout": 300,
            # a request thread finding every connection in use waits for one, as on PostgreSQL
            "timeout": 10,
        }
    return {
        "max_connections": pool_size,
        "stale_timeout": 300,
        "timeout": 10,
        "connect_timeout": 3,
        "port": 5432,
    }


class DatabaseUrlError(ValueError):
    """HIREKIT_DATABASE_URL names no database this server can open (a misspelt scheme)."""


def check_database_url(url: str) -> str:
    """The URL's scheme when it is one of sqlite, postgres, postgresql; DatabaseUrlError naming the
    setting otherwise."""
    scheme = urlparse(url).scheme
    if scheme not in ("sqlite", "postgres", "postgresql"):
        raise DatabaseUrlError(
            f"HIREKIT_DATABASE_URL has the scheme {scheme!r}, which is not a database this server "
            "opens: use sqlite:///path/to/file.sqlite3 or postgresql://user@host:5432/name"
        )
    return scheme


def _open_database(url: str, pool_size: int) -> pw.Database:
    """sqlite:///path or postgresql://user:pw@host:port/name?sslmode=verify-full&... -> a peewee
    database.

    playhouse.db_url parses the URL; every query parameter (sslmode, sslrootcert, application_name,
    connect_timeout...) reaches the driver's connect() and wins over the project's defaults."""
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
    return POOLED_DATABASES[scheme](**options)


def init_app(app) -> None:
    """Bind the proxy to the configured database; a request opens a pooled connection on its first
    query and hands it back to the pool when it ends."""
    database.initialize(
        database_from_url(app.config["DATABASE_URL"], pool_size=app.config["DATABASE_POOL_SIZE"])
    )

    @app.teardown_appcontext
    def _close_connection(exc):
        if not database.is_closed():
            database.close()


def is_postgres() -> bool:
    """Whether the configured database is PostgreSQL (for the few statements SQLite has no form
    of)."""
    return isinstance(database.obj, pw.PostgresqlDatabase)


def after_commit(side_effect) -> None:
    """Run `side_effect()` once the current transaction commits, now when none is open, and never
    when it rolls back (a savepoint included). Deferred, a failure is logged rather than raised: the
    write it follows has committed."""
    if not database.in_transaction():
        side_effect()
        return

    def run() -> None:
        try:
            side_effect()
        except Exception:  # noqa: BLE001 - raised here it would turn a committed write into an error
            log.exception(
                "side effect %s after commit failed",
                getattr(side_effect, "__qualname__", side_effect),
            )

    deferred = _DeferredSideEffect(run)
    scopes = _open_scopes()
    if scopes:
        scopes[-1].append(deferred)
    database.after_commit(deferred)


class JSONField(pw.TextField):
    """JSON stored as text, so the same column works on SQLite and PostgreSQL. Written and read by
    orjson (UTF-8, compact, int keys written as strings as the standard library writes them; what
    orjson refuses goes to the standard library): a live call's record is serialized every turn, and
    the standard library's encoder took a tenth of the call relay's CPU."""

    def db_value(self, value):
        if value is None:
            return None
        try:
            return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
        # what only the standard library writes: an integer past 64 bits, NaN
        except orjson.JSONEncodeError:
            return json.dumps(value, separators=(",", ":"))

    def python_value(self, value):
        if value is None:
            return None
        try:
            return orjson.loads(value)
        # NaN or Infinity, which the standard library wrote and reads
        except orjson.JSONDecodeError:
            return json.loads(value)


class BaseModel(pw.Model):
    """Every table lives behind the shared proxy."""

    class Meta:
        database = database
        legacy_table_names = False


class TimestampedModel(BaseModel):
    """created_at/updated_at kept by save()."""

    created_at = pw.DateTimeField(default=utcnow)
    updated_at = pw.DateTimeField(default=utcnow)

    def save(self, *args, only=None, **kwargs):
        self.updated_at = utcnow()
        if only is not None:  # the fields a caller changed, and so the time they changed
            only = [*only, type(self).updated_at]
        return super().save(*args, only=only, **kwargs)


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
