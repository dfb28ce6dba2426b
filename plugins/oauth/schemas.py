"""Bodies and answers of the oauth family: authorization server and protected resource metadata,
tenant users and their authorizations of clients."""

from __future__ import annotations

import marshmallow as ma

from app.http.api import UtcDateTime
from app.http.fields import StrictSchema, Text
from plugins.mcp.scopes import SCOPES
from plugins.oauth.users import MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH

URLS = ma.fields.List(ma.fields.String(), required=True)


class AuthorizationServerMetadataSchema(ma.Schema):
    """RFC 8414 authorization server metadata."""

    issuer = ma.fields.String(required=True)
    authorization_endpoint = ma.fields.String(required=True)
    token_endpoint = ma.fields.String(required=True)
    registration_endpoint = ma.fields.String(required=True)
    revocation_endpoint = ma.fields.String(required=True)
    scopes_supported = URLS
    response_types_supported = URLS
    response_modes_supported = URLS
    grant_types_supported = URLS
    token_endpoint_auth_methods_supported = URLS
    revocation_endpoint_auth_methods_supported = URLS
    code_challenge_methods_supported = URLS
    client_id_metadata_document_supported = ma.fields.Boolean(required=True)
    authorization_response_iss_parameter_supported = ma.fields.Boolean(
        required=True, metadata={"description": "RFC 9207: authorization responses carry `iss`"}
    )
    service_documentation = ma.fields.String(required=True)


class ProtectedResourceMetadataSchema(ma.Schema):
    """RFC 9728 protected resource metadata of one MCP endpoint."""

    resource = ma.fields.String(
        required=True, metadata={"description": "The endpoint's URL: a token's resource"}
    )
    authorization_servers = URLS
    scopes_supported = URLS
    bearer_methods_supported = URLS
    resource_name = ma.fields.String(required=True)
    resource_documentation = ma.fields.String(required=True)


PASSWORD = ma.fields.String(
    required=True,
    load_only=True,
    validate=ma.validate.Length(MIN_PASSWORD_LENGTH, MAX_PASSWORD_LENGTH),
    metadata={
        "description": f"{MIN_PASSWORD_LENGTH}-{MAX_PASSWORD_LENGTH} characters; stored only as an "
        "Argon2id hash"
    },
)


class UserCreateSchema(StrictSchema):
    email = ma.fields.Email(
        required=True,
        validate=ma.validate.Length(max=320),
        metadata={
            "description": "The sign-in name; unique across the server, compared without case"
        },
    )
    name = Text(required=True, max_length=200)
    password = PASSWORD
    admin = ma.fields.Boolean(
        load_default=False,
        metadata={"description": "May manage the tenant's users (kept for the tenant's own tools)"},
    )


class UserUpdateSchema(StrictSchema):
    name = Text(max_length=200)
    password = ma.fields.String(
        load_only=True, validate=ma.validate.Length(MIN_PASSWORD_LENGTH, MAX_PASSWORD_LENGTH)
    )
    admin = ma.fields.Boolean()
    disabled = ma.fields.Boolean(
        metadata={
            "description": "A disabled user cannot sign in, and their tokens stop working at once"
        }
    )


class UserSchema(ma.Schema):
    id = ma.fields.UUID(required=True)
    email = ma.fields.String(required=True)
    name = ma.fields.String(required=True)
    admin = ma.fields.Boolean(required=True)
    disabled = ma.fields.Boolean(required=True)
    created_at = UtcDateTime(required=True)
    updated_at = UtcDateTime(required=True)


class PageArgs(ma.Schema):
    page = ma.fields.Integer(
        required=True, validate=ma.validate.Range(1, 1_000_000), metadata={"description": "1-based"}
    )
    size = ma.fields.Integer(
        required=True, validate=ma.validate.Range(1, 100), metadata={"description": "1-100"}
    )


class PageMeta(ma.Schema):
    page = ma.fields.Integer(required=True)
    size = ma.fields.Integer(required=True)
    total = ma.fields.Integer(required=True)
    total_pages = ma.fields.Integer(required=True)


class AuthorizationSchema(ma.Schema):
    """A person's authorization of a client (an agent host): who, which client, which scopes, since
    when."""

    id = ma.fields.UUID(required=True)
    user_id = ma.fields.UUID(required=True)
    client_id = ma.fields.String(
        required=True,
        metadata={
            "description": "The client's id: its metadata document's https URL, or the id it "
            "registered with"
        },
    )
    client_name = ma.fields.String(required=True)
    client_kind = ma.fields.String(
        required=True, metadata={"description": "document or registered"}
    )
    scopes = ma.fields.List(
        ma.fields.String(validate=ma.validate.OneOf(list(SCOPES))), required=True
    )
    created_at = UtcDateTime(required=True)
    last_used_at = UtcDateTime(required=True, allow_none=True)


class AuthorizationPageSchema(PageMeta):
    data = ma.fields.List(ma.fields.Nested(AuthorizationSchema), required=True)
