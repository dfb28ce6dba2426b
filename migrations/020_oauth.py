"""Migration 020_oauth (peewee-migrate; `flask --app wsgi db upgrade` applies it)."""

import peewee as pw
from peewee_migrate import Migrator


def migrate(migrator: Migrator, database: pw.Database, *, fake=False):
    """The authorization server of the MCP endpoints: tenant users, OAuth clients (registered or
    described by a metadata document), authorization codes, tokens (hashes only) and consents."""

    @migrator.create_model
    class OAuthClient(pw.Model):
        client_id = pw.CharField(max_length=2048, primary_key=True)
        kind = pw.CharField(max_length=16)
        secret_hash = pw.CharField(max_length=64, null=True)
        metadata = pw.TextField()
        created_at = pw.DateTimeField()
        fetched_at = pw.DateTimeField(null=True)
        expires_at = pw.DateTimeField(null=True)

        class Meta:
            table_name = "oauth_clients"

    @migrator.create_model
    class OAuthUser(pw.Model):
        id = pw.UUIDField(primary_key=True)
        tenant = pw.ForeignKeyField(
            column_name='tenant_id', field='id', model=migrator.orm['tenants'], on_delete='CASCADE'
        )
        email = pw.CharField(max_length=320, unique=True)
        name = pw.CharField(max_length=200)
        password_hash = pw.CharField(max_length=255)
        admin = pw.BooleanField(default=False)
        disabled = pw.BooleanField(default=False)
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()

        class Meta:
            table_name = "oauth_users"

    @migrator.create_model
    class OAuthCode(pw.Model):
        code_hash = pw.CharField(max_length=64, primary_key=True)
        client_id = pw.CharField(max_length=2048)
        user = pw.ForeignKeyField(
            column_name='user_id',
            field='id',
            model=migrator.orm['oauth_users'],
            on_delete='CASCADE',
        )
        redirect_uri = pw.TextField()
        scope = pw.TextField()
        resource = pw.TextField()
        code_challenge = pw.CharField(max_length=128)
        code_challenge_method = pw.CharField(max_length=8)
        family = pw.UUIDField()
        created_at = pw.DateTimeField()
        expires_at = pw.DateTimeField()
        used_at = pw.DateTimeField(null=True)

        class Meta:
            table_name = "oauth_codes"

    @migrator.create_model
    class OAuthConsent(pw.Model):
        id = pw.UUIDField(primary_key=True)
        user = pw.ForeignKeyField(
            column_name='user_id',
            field='id',
            model=migrator.orm['oauth_users'],
            on_delete='CASCADE',
        )
        client_id = pw.CharField(max_length=2048)
        scope = pw.TextField()
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()
        last_used_at = pw.DateTimeField(null=True)

        class Meta:
            table_name = "oauth_consents"
            indexes = [(('user', 'client_id'), True)]

    @migrator.create_model
    class OAuthToken(pw.Model):
        id = pw.AutoField()
        access_hash = pw.CharField(max_length=64, unique=True)
        refresh_hash = pw.CharField(max_length=64, null=True, unique=True)
        client_id = pw.CharField(index=True, max_length=2048)
        user = pw.ForeignKeyField(
            column_name='user_id',
            field='id',
            model=migrator.orm['oauth_users'],
            on_delete='CASCADE',
        )
        tenant = pw.ForeignKeyField(
            column_name='tenant_id', field='id', model=migrator.orm['tenants'], on_delete='CASCADE'
        )
        scope = pw.TextField()
        resource = pw.TextField()
        family = pw.UUIDField(index=True)
        issued_at = pw.DateTimeField()
        access_expires_at = pw.DateTimeField()
        refresh_expires_at = pw.DateTimeField(null=True)
        rotated_at = pw.DateTimeField(null=True)
        revoked_at = pw.DateTimeField(null=True)

        class Meta:
            table_name = "oauth_tokens"


def rollback(migrator: Migrator, database: pw.Database, *, fake=False):
    migrator.remove_model('oauth_tokens')
    migrator.remove_model('oauth_consents')
    migrator.remove_model('oauth_codes')
    migrator.remove_model('oauth_users')
    migrator.remove_model('oauth_clients')
