"""Migration 005_webhooks (peewee-migrate; `flask --app wsgi db upgrade` applies it)."""

from contextlib import suppress

import peewee as pw
from peewee_migrate import Migrator


with suppress(ImportError):
    import playhouse.postgres_ext as pw_pext


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """Write your migrations here."""

    @migrator.create_model
    class TenantWebhook(pw.Model):
        id = pw.UUIDField(primary_key=True)
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()
        tenant = pw.ForeignKeyField(
            column_name='tenant_id', field='id', model=migrator.orm['tenants'], on_delete='CASCADE'
        )
        triggered_event = pw.CharField(max_length=64)
        type = pw.CharField(max_length=64)
        fields = pw.TextField()
        url = pw.TextField()
        http_method = pw.CharField(max_length=8)
        content_type = pw.CharField(max_length=64)
        secret = pw.CharField(max_length=128, null=True)
        is_active = pw.BooleanField(default=True)
        is_deleted = pw.BooleanField(default=False)
        disabled_reason = pw.TextField(null=True)
        failing_since = pw.DateTimeField(null=True)

        class Meta:
            table_name = "tenant_webhooks"
            indexes = [(('tenant', 'triggered_event'), True)]

    @migrator.create_model
    class WebhookDelivery(pw.Model):
        id = pw.UUIDField(primary_key=True)
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()
        tenant = pw.ForeignKeyField(
            column_name='tenant_id', field='id', model=migrator.orm['tenants'], on_delete='CASCADE'
        )
        webhook = pw.ForeignKeyField(
            column_name='webhook_id',
            field='id',
            model=migrator.orm['tenant_webhooks'],
            on_delete='CASCADE',
        )
        event_id = pw.UUIDField()
        event_type = pw.CharField(max_length=64)
        payload = pw.TextField()
        status = pw.CharField(default='pending', max_length=16)
        attempt_count = pw.IntegerField(default=0)
        failures_in_row = pw.IntegerField(default=0)
        next_attempt_at = pw.DateTimeField(null=True)
        claimed_until = pw.DateTimeField(null=True)
        last_status_code = pw.IntegerField(null=True)
        last_error = pw.TextField(null=True)
        delivered_at = pw.DateTimeField(null=True)

        class Meta:
            table_name = "webhook_deliveries"
            indexes = [(('webhook', 'created_at'), False), (('status', 'next_attempt_at'), False)]

    @migrator.create_model
    class WebhookAttempt(pw.Model):
        id = pw.AutoField()
        delivery = pw.ForeignKeyField(
            column_name='delivery_id',
            field='id',
            model=migrator.orm['webhook_deliveries'],
            on_delete='CASCADE',
        )
        number = pw.IntegerField()
        started_at = pw.DateTimeField()
        duration_ms = pw.IntegerField()
        status_code = pw.IntegerField(null=True)
        error = pw.TextField(null=True)
        response_body = pw.TextField(null=True)
        next_retry_at = pw.DateTimeField(null=True)

        class Meta:
            table_name = "webhook_attempts"
            indexes = [(('delivery', 'number'), True)]


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    """Write your rollback migrations here."""

    migrator.remove_model('webhook_attempts')

    migrator.remove_model('webhook_deliveries')

    migrator.remove_model('tenant_webhooks')
