"""Migration 019_relay_and_recordings (peewee-migrate; `flask --app wsgi db upgrade` applies it)."""

import peewee as pw
from peewee_migrate import Migrator


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """Calls over the relay: each tenant's call settings (recording, off by default), the reference
    to each call's recording at the provider, and which relay socket holds which call."""

    @migrator.create_model
    class CallRecording(pw.Model):
        id = pw.UUIDField(primary_key=True)
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()
        tenant = pw.ForeignKeyField(
            column_name="tenant_id", field="id", model=migrator.orm["tenants"], on_delete="CASCADE"
        )
        call = pw.ForeignKeyField(
            column_name="call_id",
            field="id",
            model=migrator.orm["calls"],
            on_delete="CASCADE",
            unique=True,
        )
        provider = pw.CharField(max_length=32)
        provider_recording_id = pw.CharField(max_length=64)
        media_url = pw.TextField()
        channels = pw.IntegerField(default=2)
        duration_seconds = pw.IntegerField(null=True)
        status = pw.CharField(default="completed", max_length=16)

        class Meta:
            table_name = "call_recordings"

    @migrator.create_model
    class CallRelay(pw.Model):
        call = pw.ForeignKeyField(
            column_name="call_id",
            field="id",
            model=migrator.orm["calls"],
            on_delete="CASCADE",
            primary_key=True,
        )
        connected_at = pw.DateTimeField()
        heartbeat_at = pw.DateTimeField()
        released_at = pw.DateTimeField(null=True)
        released_reason = pw.CharField(max_length=64, null=True)

        class Meta:
            table_name = "call_relays"
            indexes = [(("released_at", "heartbeat_at"), False)]

    @migrator.create_model
    class CallSettings(pw.Model):
        tenant = pw.ForeignKeyField(
            column_name="tenant_id",
            field="id",
            model=migrator.orm["tenants"],
            on_delete="CASCADE",
            primary_key=True,
        )
        recording = pw.BooleanField(default=False)
        updated_at = pw.DateTimeField()

        class Meta:
            table_name = "call_settings"


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    migrator.remove_model("call_settings")
    migrator.remove_model("call_relays")

    migrator.remove_model("call_recordings")
