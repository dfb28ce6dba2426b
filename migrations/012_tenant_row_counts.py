"""Migration 012_tenant_row_counts (peewee-migrate; `flask --app wsgi db upgrade` applies it)."""

import peewee as pw
from peewee_migrate import Migrator

# (table, bucket expression): the lists whose page mode answers an exact total, and what their
# counts are split by (jobs by their case-insensitive status, the filter of the job board and most
# job lists)
COUNTED = (
    ("jobs", "lower(coalesce({row}.status, ''))"),
    ("candidates", "''"),
    ("applications", "''"),
)

# PostgreSQL keeps delta rows (no key but the id); SQLite one counter row per (tenant, table,
# bucket)
TABLE = """
CREATE TABLE IF NOT EXISTS tenant_row_counts (
    id {id_column},
    tenant_id VARCHAR(64) NOT NULL,
    table_name VARCHAR(64) NOT NULL,
    bucket TEXT NOT NULL,
    total BIGINT NOT NULL{counter_key}
)"""
POSTGRES_TABLE = TABLE.format(id_column="BIGSERIAL PRIMARY KEY", counter_key="")
SQLITE_TABLE = TABLE.format(
    id_column="INTEGER PRIMARY KEY", counter_key=",\n    UNIQUE (tenant_id, table_name, bucket)"
)

# PostgreSQL: one delta row per statement and bucket (so concurrent writers of one tenant never wait
# on a shared counter row, and a bulk INSERT ... SELECT adds one row, not a million); readers sum
# them and fold them from time to time (app.data.row_counts). Transition tables allow one event per
# trigger, hence three triggers per table.
POSTGRES_FUNCTION = """
CREATE OR REPLACE FUNCTION hirekit_count_{table}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO tenant_row_counts (tenant_id, table_name, bucket, total)
        SELECT n.tenant_id, '{table}', {new_bucket}, count(*) FROM new_rows n GROUP BY 1, 3;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO tenant_row_counts (tenant_id, table_name, bucket, total)
        SELECT o.tenant_id, '{table}', {old_bucket}, -count(*) FROM old_rows o GROUP BY 1, 3;
    ELSE
        INSERT INTO tenant_row_counts (tenant_id, table_name, bucket, total)
        SELECT tenant_id, '{table}', bucket, sum(delta) FROM (
            SELECT o.tenant_id, {old_bucket} AS bucket, -1 AS delta FROM old_rows o
            UNION ALL SELECT n.tenant_id, {new_bucket}, 1 FROM new_rows n) AS moved
        GROUP BY 1, 2, 3 HAVING sum(delta) <> 0;
    END IF;
    RETURN NULL;
END $$"""

POSTGRES_TRIGGERS = """
CREATE TRIGGER {table}_count_insert AFTER INSERT ON {table} REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION hirekit_count_{table}();
CREATE TRIGGER {table}_count_delete AFTER DELETE ON {table} REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION hirekit_count_{table}();
CREATE TRIGGER {table}_count_update AFTER UPDATE ON {table} REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION hirekit_count_{table}()"""  # noqa: E501

# SQLite has a single writer, so one counter row per (tenant, table, bucket) serves; a decrement
# never creates a row (a test harness emptying the counts before the tables leaves no negative
# counts behind).
SQLITE_ADD = (
    "INSERT OR IGNORE INTO tenant_row_counts (tenant_id, table_name, bucket, total) "
    "VALUES (NEW.tenant_id, '{table}', {new_bucket}, 0); "
    "UPDATE tenant_row_counts SET total = total + 1 "
    "WHERE tenant_id = NEW.tenant_id AND table_name = '{table}' AND bucket = {new_bucket};"
)
SQLITE_REMOVE = (
    "UPDATE tenant_row_counts SET total = total - 1 "
    "WHERE tenant_id = OLD.tenant_id AND table_name = '{table}' AND bucket = {old_bucket};"
)
SQLITE_TRIGGERS = (
    "CREATE TRIGGER {table}_count_insert AFTER INSERT ON {table} BEGIN " + SQLITE_ADD + " END",
    "CREATE TRIGGER {table}_count_delete AFTER DELETE ON {table} BEGIN " + SQLITE_REMOVE + " END",
    "CREATE TRIGGER {table}_count_update AFTER UPDATE OF tenant_id, status ON {table} "
    "WHEN OLD.tenant_id IS NOT NEW.tenant_id OR {old_bucket} IS NOT {new_bucket} BEGIN "
    + SQLITE_REMOVE
    + " "
    + SQLITE_ADD
    + " END",
)

BACKFILL = (
    "INSERT INTO tenant_row_counts (tenant_id, table_name, bucket, total) "
    "SELECT r.tenant_id, '{table}', {row_bucket}, count(*) FROM {table} r GROUP BY 1, 3"
)


def _is_postgres(database) -> bool:
    return isinstance(getattr(database, "obj", database), pw.PostgresqlDatabase)


def _statements(database) -> list[str]:
    postgres = _is_postgres(database)
    statements = [POSTGRES_TABLE if postgres else SQLITE_TABLE]
    if postgres:
        statements.append(
            "CREATE INDEX IF NOT EXISTS tenant_row_counts_lookup "
            "ON tenant_row_counts (tenant_id, table_name, bucket) INCLUDE (total)"
        )
    for table, bucket in COUNTED:
        if table != "jobs" and not postgres:
            # SQLite's `AFTER UPDATE OF status` needs the column; tables counted whole have no
            # bucket to move between
            triggers = SQLITE_TRIGGERS[:2] + (SQLITE_TRIGGERS[2].replace(", status ON", " ON"),)
        else:
            triggers = SQLITE_TRIGGERS
        names = {
            "table": table,
            "new_bucket": bucket.format(row="n" if postgres else "NEW"),
            "old_bucket": bucket.format(row="o" if postgres else "OLD"),
        }
        if postgres:
            statements.append(POSTGRES_FUNCTION.format(**names))
            statements.extend(POSTGRES_TRIGGERS.format(**names).split(";\n"))
        else:
            statements.extend(trigger.format(**names) for trigger in triggers)
        statements.append(BACKFILL.format(table=table, row_bucket=bucket.format(row="r")))
    return statements


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """Per-tenant row counts of jobs (by status), candidates and applications, kept by triggers in
    the writing transaction, so page mode's exact `total` is a lookup, not a count of the tenant's
    rows."""
    for statement in _statements(database):
        migrator.sql(statement)


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    postgres = _is_postgres(database)
    for table, _bucket in COUNTED:
        for event in ("insert", "delete", "update"):
            migrator.sql(
                f"DROP TRIGGER IF EXISTS {table}_count_{event}"
                + (f" ON {table}" if postgres else "")
            )
        if postgres:
            migrator.sql(f"DROP FUNCTION IF EXISTS hirekit_count_{table}()")
    migrator.sql("DROP TABLE IF EXISTS tenant_row_counts")
