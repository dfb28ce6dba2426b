"""Migration 016_sqlite_row_count_triggers (peewee-migrate; `flask --app wsgi db upgrade` applies
it)."""

import peewee as pw
from peewee_migrate import Migrator

# (table, bucket expression of a row), as migration 012 counts them
COUNTED = (
    ("jobs", "lower(coalesce({row}.status, ''))"),
    ("candidates", "''"),
    ("applications", "''"),
)

# The counter row is created only where missing, without a conflict clause: SQLite applies the
# conflict policy of the statement that fired a trigger to the trigger's own statements, so 012's
# INSERT OR IGNORE aborted (UNIQUE constraint failed) when the firing statement was an INSERT ... ON
# CONFLICT DO UPDATE, as a batch upsert is.
ADD = (
    "INSERT INTO tenant_row_counts (tenant_id, table_name, bucket, total) "
    "SELECT NEW.tenant_id, '{table}', {new_bucket}, 0 WHERE NOT EXISTS (SELECT 1 FROM "
    "tenant_row_counts "
    "WHERE tenant_id = NEW.tenant_id AND table_name = '{table}' AND bucket = {new_bucket}); "
    "UPDATE tenant_row_counts SET total = total + 1 "
    "WHERE tenant_id = NEW.tenant_id AND table_name = '{table}' AND bucket = {new_bucket};"
)
REMOVE = (
    "UPDATE tenant_row_counts SET total = total - 1 "
    "WHERE tenant_id = OLD.tenant_id AND table_name = '{table}' AND bucket = {old_bucket};"
)
OLD_ADD = (
    "INSERT OR IGNORE INTO tenant_row_counts (tenant_id, table_name, bucket, total) "
    "VALUES (NEW.tenant_id, '{table}', {new_bucket}, 0); "
    "UPDATE tenant_row_counts SET total = total + 1 "
    "WHERE tenant_id = NEW.tenant_id AND table_name = '{table}' AND bucket = {new_bucket};"
)


def _triggers(table: str, bucket: str, add: str) -> list[str]:
    names = {
        "table": table,
        "new_bucket": bucket.format(row="NEW"),
        "old_bucket": bucket.format(row="OLD"),
    }
    # tables counted whole have no bucket to move
    of_columns = "tenant_id, status" if table == "jobs" else "tenant_id"
    return [
        f"DROP TRIGGER IF EXISTS {table}_count_insert",
        f"CREATE TRIGGER {table}_count_insert AFTER INSERT ON {table} BEGIN {add.format(**names)} "
        "END",
        f"DROP TRIGGER IF EXISTS {table}_count_update",
        f"CREATE TRIGGER {table}_count_update AFTER UPDATE OF {of_columns} ON {table} "
        f"WHEN OLD.tenant_id IS NOT NEW.tenant_id OR {names['old_bucket']} IS NOT "
        f"{names['new_bucket']} BEGIN "
        f"{REMOVE.format(**names)} {add.format(**names)} END",
    ]


def _is_sqlite(database) -> bool:
    return isinstance(getattr(database, "obj", database), pw.SqliteDatabase)


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """SQLite's row-count triggers create a missing counter row without INSERT OR IGNORE
    (PostgreSQL's keep delta rows and need no change)."""
    if _is_sqlite(database):
        for table, bucket in COUNTED:
            for statement in _triggers(table, bucket, ADD):
                migrator.sql(statement)


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    if _is_sqlite(database):
        for table, bucket in COUNTED:
            for statement in _triggers(table, bucket, OLD_ADD):
                migrator.sql(statement)
