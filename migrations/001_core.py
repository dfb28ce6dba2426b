"""Migration 001_core (peewee-migrate; `flask --app wsgi db upgrade` applies it)."""

from contextlib import suppress

import peewee as pw
from peewee_migrate import Migrator


with suppress(ImportError):
    import playhouse.postgres_ext as pw_pext


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """Write your migrations here."""

    @migrator.create_model
    class Tenant(pw.Model):
        id = pw.CharField(max_length=64, primary_key=True)
        name = pw.CharField(max_length=200)
        rate_limit = pw.CharField(max_length=100, null=True)
        created_at = pw.DateTimeField()

        class Meta:
            table_name = "tenants"

    @migrator.create_model
    class ApiKey(pw.Model):
        id = pw.AutoField()
        tenant = pw.ForeignKeyField(
            column_name='tenant_id', field='id', model=migrator.orm['tenants'], on_delete='CASCADE'
        )
        prefix = pw.CharField(index=True, max_length=32)
        key_hash = pw.CharField(max_length=64, unique=True)
        created_at = pw.DateTimeField()
        last_used_at = pw.DateTimeField(null=True)
        revoked = pw.BooleanField(default=False)

        class Meta:
            table_name = "api_keys"

    @migrator.create_model
    class Counter(pw.Model):
        tenant = pw.ForeignKeyField(
            column_name='tenant_id', field='id', model=migrator.orm['tenants'], on_delete='CASCADE'
        )
        name = pw.CharField(max_length=64)
        value = pw.BigIntegerField(default=0)

        class Meta:
            table_name = "counters"
            primary_key = pw.CompositeKey('tenant', 'name')

    @migrator.create_model
    class Event(pw.Model):
        sequence = pw.BigAutoField()
        event_id = pw.UUIDField(unique=True)
        tenant = pw.ForeignKeyField(
            column_name='tenant_id', field='id', model=migrator.orm['tenants'], on_delete='CASCADE'
        )
        type = pw.CharField(max_length=64)
        record_id = pw.CharField(max_length=64, null=True)
        payload = pw.TextField()
        created_at = pw.DateTimeField()

        class Meta:
            table_name = "events"
            indexes = [(('tenant', 'type', 'sequence'), False)]


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Write your rollback migrations here."""

    migrator.remove_model('events')

    migrator.remove_model('counters')

    migrator.remove_model('api_keys')

    migrator.remove_model('tenants')
