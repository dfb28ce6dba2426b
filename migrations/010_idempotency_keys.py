"""Migration 010_idempotency_keys (peewee-migrate; `flask --app wsgi db upgrade` applies it)."""

import peewee as pw
from peewee_migrate import Migrator


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """Idempotency-Key uses: one row per (tenant, key) with the request's fingerprint and then its
    stored answer."""

    @migrator.create_model
    class IdempotencyKey(pw.Model):
        id = pw.AutoField()
        tenant = pw.ForeignKeyField(
            column_name='tenant_id', field='id', model=migrator.orm['tenants'], on_delete='CASCADE'
        )
        key = pw.CharField(max_length=255)
        fingerprint = pw.CharField(max_length=64)
        claim = pw.CharField(max_length=32)
        state = pw.CharField(max_length=16, default='in_flight')
        locked_until = pw.DateTimeField()
        status = pw.IntegerField(null=True)
        body = pw.BlobField(null=True)
        headers = pw.TextField(null=True)
        created_at = pw.DateTimeField()
        expires_at = pw.DateTimeField(index=True)

        class Meta:
            table_name = "idempotency_keys"
            indexes = [(('tenant', 'key'), True)]


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    migrator.remove_model('idempotency_keys')
