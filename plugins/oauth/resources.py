"""The MCP endpoints as OAuth protected resources: their identifiers and scopes, their Protected
Resource Metadata (RFC 9728), the challenge a request without a valid token gets, and the caller an
access token stands for."""

from __future__ import annotations

from dataclasses import dataclass

from flask import current_app

from app.data.db import utcnow
from app.data.tenancy import Caller, Tenant
from app.errors import ApiError
from app.plugins import enabled
from plugins.mcp.routes import JOBS_SERVER, SOURCING_SERVER
from plugins.mcp.scopes import server_scopes
from plugins.mcp.server import McpServer
from plugins.oauth.issuer import issuer
from plugins.oauth.models import OAuthToken, OAuthUser
from plugins.oauth.token_strings import ACCESS_TOKEN_PREFIX, digest

WELL_KNOWN_RESOURCE = "/.well-known/oauth-protected-resource"


@dataclass(frozen=True)
class ProtectedEndpoint:
    """One MCP endpoint: its path, its server and the blueprint answering it."""

    path: str
    server: McpServer
    blueprint: str

    @property
    def scopes(self) -> list[str]:
        """The scopes of the tools this endpoint offers in this app (the enabled families')."""
        return server_scopes(
            tuple(family for family in self.server.families if enabled(current_app, family))
        )

    @property
    def resource(self) -> str:
        return issuer() + self.path

    @property
    def metadata_url(self) -> str:
        return issuer() + WELL_KNOWN_RESOURCE + self.path

    def metadata(self) -> dict:
        """RFC 9728 Protected Resource Metadata."""
        return {
            "resource": self.resource,
            "authorization_servers": [issuer()],
            "scopes_supported": self.scopes,
            "bearer_methods_supported": ["header"],
            "resource_name": self.server.title,
            "resource_documentation": f"{issuer()}/docs",
        }


ENDPOINTS = (
    ProtectedEndpoint("/mcp", JOBS_SERVER, "mcp"),
    ProtectedEndpoint("/mcp/sourcing", SOURCING_SERVER, "mcp_sourcing"),
)


def endpoint_for(resource: str) -> ProtectedEndpoint | None:
    """The endpoint whose resource identifier is exactly `resource`."""
    return next((endpoint for endpoint in ENDPOINTS if endpoint.resource == resource), None)


def resource_urls() -> list[str]:
    return [endpoint.resource for endpoint in ENDPOINTS]


def by_path(path: str) -> ProtectedEndpoint | None:
    return next((endpoint for endpoint in ENDPOINTS if endpoint.path == path), None)


def challenge_attributes(path: str) -> str:
    """What a 401 or 403 from the endpoint at `path` adds to `WWW-Authenticate: Bearer`: where its
    metadata is and the scopes it offers (MCP clients ask for these)."""
    endpoint = by_path(path)
    if endpoint is None:
        return ""
    return f'resource_metadata="{endpoint.metadata_url}", scope="{" ".join(endpoint.scopes)}"'


def token_resolver(endpoint: ProtectedEndpoint):
    """The caller an access token stands for on `endpoint`; None for an unknown, expired or revoked
    token; 401 for a token bound to the other endpoint (RFC 8707: a token is accepted only by the
    resource it was issued for)."""

    def resolve(token: str) -> Caller | None:
        if not token.startswith(ACCESS_TOKEN_PREFIX):
            return None
        row = (
            OAuthToken.select(OAuthToken, OAuthUser.disabled, Tenant.rate_limit)
            .join(OAuthUser, on=(OAuthToken.user == OAuthUser.id))
            .switch(OAuthToken)
            .join(Tenant, on=(OAuthToken.tenant == Tenant.id))
            .where(OAuthToken.access_hash == digest(token))
            .first()
        )
        if (
            row is None
            or row.revoked_at is not None
            or row.access_expires_at <= utcnow()
            or row.user.disabled
        ):
            return None
        if row.resource != endpoint.resource:
            raise ApiError(
                401,
                f"This access token was issued for {row.resource}, not for {endpoint.resource}: "
                "ask for a token for this endpoint (the resource parameter).",
            )
        return Caller(
            tenant_id=row.tenant_id,
            key_id=None,
            key_prefix="oauth",
            rate_limit=row.tenant.rate_limit,
            scopes=frozenset(row.scope.split()),
            principal=f"oauth:{row.family}",
            user_id=str(row.user_id),
        )

    return resolve
