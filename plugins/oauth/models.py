"""What the authorization server stores: tenant users, OAuth clients, authorization codes, tokens
and consents.

Codes and tokens are stored only as SHA-256 hashes, as API keys are: a copy of the database lets
nobody sign in."""

from __future__ import annotations

import uuid

import peewee as pw

from app.data.db import BaseModel, utcnow
from app.data.tenancy import Tenant


class OAuthUser(BaseModel):
    """A person of a tenant who signs in to authorize agent hosts; `admin` may manage the tenant's
    users."""

    id = pw.UUIDField(primary_key=True, default=uuid.uuid4)
    tenant = pw.ForeignKeyField(Tenant, on_delete="CASCADE", column_name="tenant_id")
    # lower-cased; one sign-in name across the server
    email = pw.CharField(max_length=320, unique=True)
    name = pw.CharField(max_length=200)
    password_hash = pw.CharField(max_length=255)
    admin = pw.BooleanField(default=False)
    disabled = pw.BooleanField(default=False)
    created_at = pw.DateTimeField(default=utcnow)
    updated_at = pw.DateTimeField(default=utcnow)

    class Meta:
        table_name = "oauth_users"


class OAuthClient(BaseModel):
    """A client: registered dynamically (a generated id) or described by its metadata document (the
    id is its URL).

    `metadata` holds the client's RFC 7591 metadata as JSON text; a document's copy is refreshed
    after `expires_at`."""

    client_id = pw.CharField(max_length=2048, primary_key=True)
    kind = pw.CharField(max_length=16)  # "registered" or "document"
    secret_hash = pw.CharField(max_length=64, null=True)  # registered confidential clients only
    metadata = pw.TextField()
    created_at = pw.DateTimeField(default=utcnow)
    fetched_at = pw.DateTimeField(null=True)
    expires_at = pw.DateTimeField(null=True)

    class Meta:
        table_name = "oauth_clients"


class OAuthCode(BaseModel):
    """An authorization code, single use: `used_at` marks it spent, and a second exchange revokes
    what it gave."""

    code_hash = pw.CharField(max_length=64, primary_key=True)
    client_id = pw.CharField(max_length=2048)
    user = pw.ForeignKeyField(OAuthUser, on_delete="CASCADE", column_name="user_id")
    redirect_uri = pw.TextField()
    scope = pw.TextField()
    resource = pw.TextField()
    code_challenge = pw.CharField(max_length=128)
    code_challenge_method = pw.CharField(max_length=8)
    family = pw.UUIDField(default=uuid.uuid4)  # the tokens this code gives carry it
    created_at = pw.DateTimeField(default=utcnow)
    expires_at = pw.DateTimeField()
    used_at = pw.DateTimeField(null=True)

    class Meta:
        table_name = "oauth_codes"


class OAuthToken(BaseModel):
    """One access token and its refresh token. Refreshing rotates: the old row is marked
    `rotated_at` and a new row of the same `family` is issued; a rotated refresh token presented
    again revokes the whole family."""

    id = pw.AutoField()
    access_hash = pw.CharField(max_length=64, unique=True)
    refresh_hash = pw.CharField(max_length=64, unique=True, null=True)
    client_id = pw.CharField(max_length=2048, index=True)
    user = pw.ForeignKeyField(OAuthUser, on_delete="CASCADE", column_name="user_id")
    tenant = pw.ForeignKeyField(Tenant, on_delete="CASCADE", column_name="tenant_id")
    scope = pw.TextField()
    resource = pw.TextField()
    family = pw.UUIDField(index=True)
    issued_at = pw.DateTimeField(default=utcnow)
    access_expires_at = pw.DateTimeField()
    refresh_expires_at = pw.DateTimeField(null=True)
    rotated_at = pw.DateTimeField(null=True)
    revoked_at = pw.DateTimeField(null=True)

    class Meta:
        table_name = "oauth_tokens"


class OAuthConsent(BaseModel):
    """A person's authorization of a client: the scopes granted and when. Revoking it revokes the
    client's tokens."""

    id = pw.UUIDField(primary_key=True, default=uuid.uuid4)
    user = pw.ForeignKeyField(OAuthUser, on_delete="CASCADE", column_name="user_id")
    client_id = pw.CharField(max_length=2048)
    scope = pw.TextField()
    created_at = pw.DateTimeField(default=utcnow)
    updated_at = pw.DateTimeField(default=utcnow)
    last_used_at = pw.DateTimeField(null=True)

    class Meta:
        table_name = "oauth_consents"
        indexes = ((("user", "client_id"), True),)


MODELS = (OAuthUser, OAuthClient, OAuthCode, OAuthToken, OAuthConsent)
