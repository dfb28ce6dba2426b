"""Migration 021_idempotency_record_names (peewee-migrate; `flask --app wsgi db upgrade` applies
it)."""

import re

import peewee as pw
from peewee_migrate import Migrator

RECORD_ID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """The record ids each stored idempotent answer names, indexed by tenant and record id, so an
    erasure finds the answers naming its records without reading every answer; filled in here for
    the answers already stored."""

    @migrator.create_model
    class IdempotencyRecordName(pw.Model):
        id = pw.AutoField()
        answer = pw.ForeignKeyField(
            column_name='idempotency_key_id',
            field='id',
            model=migrator.orm['idempotency_keys'],
            on_delete='CASCADE',
        )
        tenant = pw.ForeignKeyField(
            column_name='tenant_id', field='id', model=migrator.orm['tenants'], on_delete='CASCADE'
        )
        record_id = pw.CharField(max_length=36)

        class Meta:
            table_name = "idempotency_record_names"
            indexes = [(('tenant', 'record_id'), False)]

    def name_stored_answers():
        cursor = database.execute_sql(
            "SELECT id, tenant_id, body FROM idempotency_keys WHERE body IS NOT NULL"
        )
        rows = []
        for answer_id, tenant_id, body in cursor.fetchall():
            names = {found.decode() for found in RECORD_ID.findall(bytes(body))}
            rows += [
                {"answer": answer_id, "tenant": tenant_id, "record_id": name}
                for name in sorted(names)
            ]
        for start in range(0, len(rows), 500):
            IdempotencyRecordName.insert_many(rows[start : start + 500]).execute()

    if not fake:
        migrator.run(name_stored_answers)


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    migrator.remove_model('idempotency_record_names')
