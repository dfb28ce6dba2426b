"""Migration 015_privacy (peewee-migrate; `flask --app wsgi db upgrade` applies it)."""

import peewee as pw
from peewee_migrate import Migrator


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """Erasure and retention: the tenant's candidate retention, tombstones of erased records for
    sync walks, the erasure log (no personal data), and the person-data suppression list."""
    migrator.add_fields('tenants', candidate_retention_days=pw.IntegerField(null=True))

    @migrator.create_model
    class Tombstone(pw.Model):
        id = pw.AutoField()
        tenant = pw.ForeignKeyField(
            column_name='tenant_id', field='id', model=migrator.orm['tenants'], on_delete='CASCADE'
        )
        list_name = pw.CharField(max_length=64)
        record_id = pw.UUIDField()
        deleted_at = pw.DateTimeField()

        class Meta:
            table_name = "tombstones"
            indexes = [(('tenant', 'list_name', 'deleted_at', 'record_id'), True)]

    @migrator.create_model
    class Erasure(pw.Model):
        id = pw.UUIDField(primary_key=True)
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()
        tenant = pw.ForeignKeyField(
            column_name='tenant_id', field='id', model=migrator.orm['tenants'], on_delete='CASCADE'
        )
        candidate_id = pw.UUIDField()
        reason = pw.CharField(max_length=16)
        key_id = pw.IntegerField(null=True)
        record_ids = pw.TextField()
        counts = pw.TextField()

        class Meta:
            table_name = "privacy_erasures"
            indexes = [(('tenant', 'created_at'), False)]

    migrator.sql(
        'CREATE INDEX IF NOT EXISTS "privacy_erasures_sync" ON "privacy_erasures" (tenant_id, '
        'updated_at, id)'
    )

    @migrator.create_model
    class PersonSuppression(pw.Model):
        id = pw.AutoField()
        kind = pw.CharField(max_length=16)
        value = pw.CharField(max_length=320)
        created_at = pw.DateTimeField()

        class Meta:
            table_name = "person_suppressions"
            indexes = [(('kind', 'value'), True)]


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    migrator.remove_model('person_suppressions')
    migrator.sql('DROP INDEX IF EXISTS "privacy_erasures_sync"')
    migrator.remove_model('privacy_erasures')
    migrator.remove_model('tombstones')
    migrator.remove_fields('tenants', 'candidate_retention_days')
