"""The authorization server, on Authlib's Flask OAuth 2 server: authorization code with PKCE (S256
only), rotating refresh tokens with reuse detection, revocation (RFC 7009) and dynamic client
registration (RFC 7591); clients are registered ones or Client ID Metadata Documents, and every
token is bound to the one MCP endpoint (RFC 8707 resource) it was asked for."""

from __future__ import annotations

import datetime as dt
import hmac
import uuid
from urllib.parse import urlsplit

import orjson
from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2 import OAuth2Error
from authlib.oauth2.rfc6749 import (
    AuthorizationCodeMixin,
    ClientMixin,
    InvalidClientError,
    InvalidRequestError,
    InvalidScopeError,
    TokenMixin,
    grants,
)
from authlib.oauth2.rfc6749.util import scope_to_list
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge
from flask import current_app

from app.data.db import database, utcnow
from plugins.mcp.scopes import SCOPES
from plugins.oauth import client_documents, resources
from plugins.oauth.issuer import issuer
from plugins.oauth.token_strings import (
    ACCESS_TOKEN_PREFIX,
    REFRESH_TOKEN_PREFIX,
    digest,
    token_string,
)
from plugins.oauth.models import OAuthClient, OAuthCode, OAuthConsent, OAuthToken, OAuthUser

CODE_SECONDS = 300  # an authorization code is exchanged within five minutes or not at all
AUTH_METHODS = ["none", "client_secret_basic", "client_secret_post"]
GRANT_TYPES = ["authorization_code", "refresh_token"]


class InvalidTargetError(OAuth2Error):
    """RFC 8707: the resource asked for is not one this server issues tokens for, or not the one
    granted."""

    error = "invalid_target"


# ---- clients
# --------------------------------------------------------------------------------------------------


class Client(ClientMixin):
    """A client as Authlib sees it: a registered client's row or a metadata document, and its
    metadata."""

    def __init__(self, row: OAuthClient):
        self.row = row
        self.client_id = row.client_id
        self.metadata = orjson.loads(row.metadata)

    @property
    def name(self) -> str:
        return str(self.metadata.get("client_name") or self.client_id)[:200]

    @property
    def from_document(self) -> bool:
        return self.row.kind == "document"

    @property
    def document_host(self) -> str | None:
        """The host publishing a metadata document client's description: what the consent page can
        vouch for."""
        return urlsplit(self.client_id).hostname if self.from_document else None

    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        return None  # redirect_uri is always required, and matched exactly

    def get_allowed_scope(self, scope):
        return " ".join(s for s in scope_to_list(scope or "") or [] if s in SCOPES)

    def check_redirect_uri(self, redirect_uri):
        return redirect_uri in self.metadata.get("redirect_uris", [])

    def check_client_secret(self, client_secret):
        return self.row.secret_hash is not None and hmac.compare_digest(
            self.row.secret_hash, digest(client_secret or "")
        )

    def check_endpoint_auth_method(self, method, endpoint):
        return method == self.metadata.get("token_endpoint_auth_method", "client_secret_basic")

    def check_response_type(self, response_type):
        return response_type == "code"

    def check_grant_type(self, grant_type):
        return grant_type in self.metadata.get("grant_types", ["authorization_code"])


def query_client(client_id: str) -> Client | None:
    """A registered client, or a metadata document client (fetched now when not cached or stale)."""
    if (
        not isinstance(client_id, str)
        or not client_id
        or len(client_id) > 2048
        or not client_id.isprintable()
    ):
        return None
    row = OAuthClient.get_or_none(OAuthClient.client_id == client_id)
    if not client_documents.is_document_id(client_id):
        return Client(row) if row is not None and row.kind == "registered" else None
    if row is not None and row.expires_at is not None and row.expires_at > utcnow():
        return Client(row)
    try:
        document = client_documents.fetch_document(client_id)
    except client_documents.DocumentRefused as refusal:
        raise InvalidClientError(
            description=f"Client metadata document refused: {refusal}"
        ) from None
    now = utcnow()
    fields = {
        "kind": "document",
        "metadata": orjson.dumps(document).decode(),
        "fetched_at": now,
        "expires_at": client_documents.cache_until(),
    }
    with database.atomic():
        if row is None:
            row = OAuthClient.create(client_id=client_id, **fields)
        else:
            OAuthClient.update(**fields).where(OAuthClient.client_id == client_id).execute()
            row = OAuthClient.get(OAuthClient.client_id == client_id)
    return Client(row)


# ---- codes and tokens
# --------------------------------------------------------------------------------------------


class AuthorizationCode(AuthorizationCodeMixin):
    def __init__(self, row: OAuthCode):
        self.row = row
        self.code_challenge = row.code_challenge
        self.code_challenge_method = row.code_challenge_method

    def get_redirect_uri(self):
        return self.row.redirect_uri

    def get_scope(self):
        return self.row.scope


class Token(TokenMixin):
    def __init__(self, row: OAuthToken):
        self.row = row

    def check_client(self, client):
        return client is not None and client.get_client_id() == self.row.client_id

    def get_scope(self):
        return self.row.scope

    def get_expires_in(self):
        return int((self.row.access_expires_at - self.row.issued_at).total_seconds())

    def is_expired(self):
        return self.row.access_expires_at <= utcnow()

    def is_revoked(self):
        return self.row.revoked_at is not None

    def get_user(self):
        return self.row.user

    def get_client(self):
        return query_client(self.row.client_id)


def revoke_family(family) -> int:
    """Revoke every token descended from one authorization: after a replayed code or a reused
    refresh token."""
    return (
        OAuthToken.update(revoked_at=utcnow())
        .where((OAuthToken.family == family) & OAuthToken.revoked_at.is_null())
        .execute()
    )


def save_token(token: dict, request) -> None:
    """Store a new token pair (hashes only) with the resource and family of the code or refresh
    token it came from."""
    source = getattr(request, "authorization_code", None)
    if isinstance(source, AuthorizationCode):
        family, resource = source.row.family, source.row.resource
    else:
        family, resource = request.refresh_token.row.family, request.refresh_token.row.resource
    now = utcnow()
    refresh = token.get("refresh_token")
    OAuthToken.create(
        access_hash=digest(token["access_token"]),
        refresh_hash=digest(refresh) if refresh else None,
        client_id=request.client.get_client_id(),
        user=request.user.id,
        tenant=request.user.tenant_id,
        scope=token.get("scope", ""),
        resource=resource,
        family=family,
        issued_at=now,
        access_expires_at=now + dt.timedelta(seconds=int(token["expires_in"])),
        refresh_expires_at=now
        + dt.timedelta(days=float(current_app.config["OAUTH_REFRESH_TOKEN_DAYS"]))
        if refresh
        else None,
    )
    OAuthConsent.update(last_used_at=now).where(
        (OAuthConsent.user == request.user.id)
        & (OAuthConsent.client_id == request.client.get_client_id())
    ).execute()


def requested_resource(request) -> str | None:
    """The single `resource` parameter of a request; more than one is refused."""
    values = request.payload.datalist.get("resource", [])
    if len(values) > 1:
        raise InvalidTargetError(
            "Ask for one resource per authorization: a token is bound to one MCP endpoint."
        )
    return values[0] if values else None


class S256CodeChallenge(CodeChallenge):
    """PKCE with S256 only: plain is refused."""

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]


class McpAuthorizationRules:
    """The authorization request's rules beyond RFC 6749: state and an S256 code challenge are
    required, resource names one MCP endpoint, and the scopes are that endpoint's (all of them when
    none are asked for). At the token endpoint, a resource sent must be the one granted."""

    def __call__(self, grant):
        grant.register_hook(
            "after_validate_authorization_request_payload", self.validate_authorization
        )
        grant.register_hook("after_validate_token_request", self.validate_token_resource)

    @staticmethod
    def validate_authorization(grant, redirect_uri):
        request = grant.request
        if not request.payload.state:
            raise InvalidRequestError(
                "Missing state: send a random state value with every authorization request."
            )
        if not request.payload.data.get("code_challenge"):
            raise InvalidRequestError("Missing code_challenge: PKCE with S256 is required.")
        if request.payload.data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("code_challenge_method must be S256.")
        resource = requested_resource(request)
        if not resource:
            raise InvalidTargetError(
                "Missing resource: name the MCP endpoint the token is for (RFC 8707)."
            )
        endpoint = resources.endpoint_for(resource)
        if endpoint is None:
            raise InvalidTargetError(
                f"Unknown resource {resource}: this server issues tokens for "
                f"{' and '.join(resources.resource_urls())}."
            )
        allowed = endpoint.scopes
        asked = scope_to_list(request.payload.scope or "") or []
        unknown = [scope for scope in asked if scope not in SCOPES]
        if unknown:
            raise InvalidScopeError(
                f"Unknown scopes {' '.join(unknown)}: {resource} offers {' '.join(allowed)}."
            )
        # A host that asks for every scope of the server's metadata gets those of this endpoint (RFC
        # 6749 3.3: the token answer names the scopes granted); one that asks only for the other
        # endpoint's gets nothing.
        scopes = [scope for scope in asked if scope in allowed] if asked else allowed
        if not scopes:
            raise InvalidScopeError(
                f"Scopes {' '.join(asked)} are not offered by {resource}; it offers "
                f"{' '.join(allowed)}."
            )
        # the person unticked some on the consent
        if request.method == "POST" and "granted_scope" in request.form:
            chosen = set(request.form.getlist("granted_scope"))
            scopes = [scope for scope in scopes if scope in chosen]
        request.scope = " ".join(scopes)

    @staticmethod
    def validate_token_resource(grant, result):
        resource = requested_resource(grant.request)
        if resource and resource != grant.request.authorization_code.row.resource:
            raise InvalidTargetError("The resource differs from the one this code was granted for.")


class AuthorizationCodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = AUTH_METHODS

    def save_authorization_code(self, code, request):
        OAuthCode.create(
            code_hash=digest(code),
            client_id=request.client.get_client_id(),
            user=request.user.id,
            redirect_uri=request.payload.redirect_uri,
            scope=request.scope,
            resource=requested_resource(request),
            code_challenge=request.payload.data["code_challenge"],
            code_challenge_method="S256",
            expires_at=utcnow() + dt.timedelta(seconds=CODE_SECONDS),
        )

    def query_authorization_code(self, code, client):
        """Spend the code now (one exchange wins a race); a code already spent revokes what it gave
        (RFC 6749 10.5)."""
        code_hash, now = digest(code), utcnow()
        spent = (
            OAuthCode.update(used_at=now)
            .where(
                (OAuthCode.code_hash == code_hash)
                & (OAuthCode.client_id == client.get_client_id())
                & OAuthCode.used_at.is_null()
                & (OAuthCode.expires_at > now)
            )
            .execute()
        )
        row = OAuthCode.get_or_none(OAuthCode.code_hash == code_hash)
        if not spent:
            if (
                row is not None
                and row.used_at is not None
                and row.client_id == client.get_client_id()
            ):
                revoke_family(row.family)
            return None
        return AuthorizationCode(row)

    def delete_authorization_code(self, authorization_code):
        """Kept, spent, until it expires: a replay must still be recognised to revoke the tokens it
        gave."""

    def authenticate_user(self, authorization_code):
        user = OAuthUser.get_or_none(OAuthUser.id == authorization_code.row.user_id)
        return user if user is not None and not user.disabled else None


class RefreshTokenGrant(grants.RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = AUTH_METHODS
    INCLUDE_NEW_REFRESH_TOKEN = True  # every refresh rotates the refresh token

    def authenticate_refresh_token(self, refresh_token):
        """The live token whose refresh token this is, rotated on the spot (one refresh wins a
        race). A refresh token already rotated is a reuse: its whole family is revoked."""
        row = OAuthToken.get_or_none(OAuthToken.refresh_hash == digest(refresh_token))
        if row is None or row.client_id != self.request.client.get_client_id():
            return None
        resource = requested_resource(self.request)
        if resource and resource != row.resource:
            raise InvalidTargetError(
                "The resource differs from the one this refresh token was granted for."
            )
        now = utcnow()
        # refreshed before: a reuse, by a thief or by the client it was stolen from
        if row.rotated_at is not None:
            revoke_family(row.family)
            return None
        if (
            row.revoked_at is not None
            or row.refresh_expires_at is None
            or row.refresh_expires_at <= now
        ):
            return None
        rotated = (
            OAuthToken.update(rotated_at=now)
            .where(
                (OAuthToken.id == row.id)
                & OAuthToken.rotated_at.is_null()
                & OAuthToken.revoked_at.is_null()
            )
            .execute()
        )
        if not rotated:
            revoke_family(row.family)
            return None
        return Token(row)

    def authenticate_user(self, refresh_token):
        user = OAuthUser.get_or_none(OAuthUser.id == refresh_token.row.user_id)
        return user if user is not None and not user.disabled else None

    def revoke_old_credential(self, refresh_token):
        """The old pair stops working: its access token too."""
        OAuthToken.update(revoked_at=utcnow()).where(
            OAuthToken.id == refresh_token.row.id
        ).execute()


class TokenRevocationEndpoint(RevocationEndpoint):
    CLIENT_AUTH_METHODS = AUTH_METHODS

    def query_token(self, token_string, token_type_hint):
        if not isinstance(token_string, str) or not token_string:
            return None
        hashed = digest(token_string)
        row = OAuthToken.get_or_none(
            (OAuthToken.access_hash == hashed) | (OAuthToken.refresh_hash == hashed)
        )
        return Token(row) if row is not None else None

    def revoke_token(self, token, request):
        """A refresh token revokes its whole family (every access token it could still mint); an
        access token itself."""
        if token.row.refresh_hash == digest(request.form["token"]):
            revoke_family(token.row.family)
        else:
            OAuthToken.update(revoked_at=utcnow()).where(OAuthToken.id == token.row.id).execute()


class DynamicRegistrationEndpoint(ClientRegistrationEndpoint):
    """Open registration (RFC 7591) for hosts without a metadata document: anyone may register, and
    the consent page says that such a client's name is its own claim. The route checks the redirect
    URIs first (redirect_uris_problem)."""

    def authenticate_token(self, request):
        return True  # open registration; the default rate limit per address applies

    def get_server_metadata(self):
        return server_metadata()

    def generate_client_id(self, request):
        return str(uuid.uuid4())

    def generate_client_info(self, request):
        """A public client (token_endpoint_auth_method "none") is given no secret: a host that got
        one would send it, and a secret this server never kept fails as invalid_client."""
        info = super().generate_client_info(request)
        if (request.payload.data or {}).get("token_endpoint_auth_method") == "none":
            info.pop("client_secret", None)
            info.pop("client_secret_expires_at", None)
        return info

    def save_client(self, client_info, client_metadata, request):
        client_metadata.setdefault("grant_types", ["authorization_code"])
        client_metadata.setdefault("token_endpoint_auth_method", "client_secret_basic")
        public = client_metadata["token_endpoint_auth_method"] == "none"
        row = OAuthClient.create(
            client_id=client_info["client_id"],
            kind="registered",
            secret_hash=None if public else digest(client_info["client_secret"]),
            metadata=orjson.dumps(client_metadata).decode(),
        )
        return Client(row)


def redirect_uris_problem(uris) -> str | None:
    """Why a registration's redirect_uris cannot be accepted, or None."""
    if not isinstance(uris, list) or not uris or not all(isinstance(uri, str) for uri in uris):
        return "redirect_uris must be a list of at least one URI"
    return next((problem for problem in map(redirect_uri_problem, uris) if problem), None)


def redirect_uri_problem(uri: str) -> str | None:
    """Why a redirect URI may not be registered: https anywhere, http only to this machine (a native
    app's loopback listener), or an app's private scheme (com.example.app:/callback); never a
    fragment."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        return f"{uri} is not a URI"
    if parts.fragment:
        return f"{uri} must not have a fragment"
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "http" and parts.hostname in ("localhost", "127.0.0.1", "::1"):
        return None
    if parts.scheme in (
        "http",
        "https",
        "javascript",
        "data",
        "file",
        "vbscript",
        "blob",
        "about",
        "",
    ):
        return f"{uri}: redirect URIs must be https, http on localhost, or an app's private scheme"
    return None


# ---- the server
# --------------------------------------------------------------------------------------------------


def server_metadata() -> dict:
    """RFC 8414 authorization server metadata."""
    base = issuer()
    return {
        "issuer": base,
        "authorization_endpoint": f"{base}/oauth/authorize",
        "token_endpoint": f"{base}/oauth/token",
        "registration_endpoint": f"{base}/oauth/register",
        "revocation_endpoint": f"{base}/oauth/revoke",
        "scopes_supported": list(SCOPES),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": GRANT_TYPES,
        "token_endpoint_auth_methods_supported": AUTH_METHODS,
        "revocation_endpoint_auth_methods_supported": AUTH_METHODS,
        "code_challenge_methods_supported": ["S256"],
        "client_id_metadata_document_supported": True,
        "authorization_response_iss_parameter_supported": True,
        "service_documentation": f"{base}/docs",
    }


def build_server(app) -> AuthorizationServer:
    """One authorization server per app, with its grants, extensions and endpoints."""
    server = AuthorizationServer(query_client=query_client, save_token=save_token)
    server.init_app(app)
    server.scopes_supported = list(SCOPES)
    access_seconds = int(app.config["OAUTH_ACCESS_TOKEN_SECONDS"])
    server.register_token_generator(
        "default",
        BearerTokenGenerator(
            token_string(ACCESS_TOKEN_PREFIX),
            token_string(REFRESH_TOKEN_PREFIX),
            lambda client, grant_type: access_seconds,
        ),
    )
    server.register_grant(
        AuthorizationCodeGrant, [S256CodeChallenge(required=True), McpAuthorizationRules()]
    )
    server.register_grant(RefreshTokenGrant)
    server.register_endpoint(TokenRevocationEndpoint)
    server.register_endpoint(DynamicRegistrationEndpoint)
    return server
