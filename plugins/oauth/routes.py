"""The authorization server's routes (/.well-known metadata, /oauth/authorize, token, register,
revoke, the sign-in and authorized-applications pages) and the tenant's users API (/v1/users)."""

from __future__ import annotations

import uuid

from urllib.parse import urlsplit

import orjson
from authlib.common.urls import add_params_to_uri
from authlib.oauth2 import OAuth2Error
from flask import current_app, make_response, redirect, request
from flask.views import MethodView

from app.data.db import utcnow
from app.errors import ApiError, NotFound
from app.http.api import Blueprint
from app.security import limits
from app.security.auth import FAILURE_LIMIT, current_tenant_id
from plugins.mcp.scopes import SCOPES
from plugins.oauth import authorizations, pages, users
from plugins.oauth.models import OAuthConsent, OAuthUser
from plugins.oauth.resources import ENDPOINTS, endpoint_for
from app.http import listing
from app.http.api import PageArgsSchema, page_schema
from plugins.oauth.schemas import (
    AuthorizationPageSchema,
    AuthorizationServerMetadataSchema,
    PageArgs,
    ProtectedResourceMetadataSchema,
    UserCreateSchema,
    UserSchema,
    UserUpdateSchema,
)
from plugins.oauth.issuer import issuer
from plugins.oauth.server import redirect_uris_problem, server_metadata

HTML = {
    "description": "An HTML page for the person's browser",
    "content": {"text/html": {"schema": {"type": "string"}}},
}
FORM = {"content": {"application/x-www-form-urlencoded": {"schema": {"type": "object"}}}}
OAUTH_ERROR = {
    "description": "An OAuth error (RFC 6749 5.2): error and error_description",
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "properties": {
                    "error": {"type": "string"},
                    "error_description": {"type": "string"},
                },
            }
        }
    },
}

metadata_blp = Blueprint(
    "oauth_metadata",
    __name__,
    url_prefix="/.well-known",
    auth=None,
    description="OAuth metadata: the authorization server (RFC 8414) and the MCP endpoints as "
    "protected resources (RFC 9728)",
)
oauth_blp = Blueprint(
    "oauth",
    __name__,
    url_prefix="/oauth",
    auth=None,
    description="The authorization server agent hosts sign people in with: authorization code "
    "with PKCE, tokens, registration, revocation, and the sign-in and consent pages",
)
users_blp = Blueprint(
    "users",
    __name__,
    url_prefix="/v1/users",
    description="The tenant's users: the people who sign in to authorize agent hosts on the MCP "
    "servers, and the applications they authorized",
)


def authorization_server():
    return current_app.extensions["hirekit_oauth_server"]


# ---- metadata
# --------------------------------------------------------------------------------------------------


@metadata_blp.route("/oauth-authorization-server")
class AuthorizationServerMetadata(MethodView):
    @metadata_blp.response(200, AuthorizationServerMetadataSchema)
    @metadata_blp.doc(operationId="get_authorization_server_metadata")
    def get(self):
        """The authorization server's metadata (RFC 8414)"""
        return server_metadata()


def resource_metadata_route(endpoint) -> None:
    """GET /.well-known/oauth-protected-resource<path>: one MCP endpoint's metadata (RFC 9728)."""

    @metadata_blp.route(
        f"/oauth-protected-resource{endpoint.path}", endpoint=f"resource_{endpoint.blueprint}"
    )
    class ResourceMetadata(MethodView):
        @metadata_blp.response(200, ProtectedResourceMetadataSchema)
        @metadata_blp.doc(
            operationId=f"get_resource_metadata_{endpoint.blueprint}",
            summary=f"Protected Resource Metadata of {endpoint.path} (RFC 9728)",
        )
        def get(self):
            return endpoint.metadata()


for _endpoint in ENDPOINTS:
    resource_metadata_route(_endpoint)


# ---- the authorization endpoint and its pages
# ---------------------------------------------------------------------


def error_page(error: OAuth2Error, status: int = 400):
    return pages.render(
        "error", status, error=error.error, message=error.description or error.error
    )


def current_user() -> OAuthUser | None:
    user_id = pages.signed_in_user_id()
    user = OAuthUser.get_or_none(OAuthUser.id == user_id) if user_id else None
    return user if user is not None and not user.disabled else None


def validated_grant(user):
    """The authorization request checked by Authlib (client, exact redirect URI, PKCE, state,
    resource, scopes); an OAuth2Error when it is not acceptable."""
    return authorization_server().get_consent_grant(end_user=user)


def refused(error: OAuth2Error):
    """A bad authorization request: back to the client with the error when its redirect URI was
    verified, else a page (never a redirect to an unverified address)."""
    if error.redirect_uri:
        return with_issuer(authorization_server().handle_error_response(None, error))
    return error_page(error)


def with_issuer(response):
    """RFC 9207: every authorization response sent back to the client names this issuer in `iss`, so
    a client that talks to several authorization servers can tell which one answered (a mix-up
    attack otherwise)."""
    if response.location:
        response.location = add_params_to_uri(response.location, {"iss": issuer()})
    return response


AUTHORIZE_DESCRIPTION = (
    "The authorization request's parameters: response_type=code, client_id, redirect_uri "
    "registered exactly, "
    "state, code_challenge with code_challenge_method=S256, resource naming /mcp or /mcp/sourcing, "
    "scope. A request "
    "with an unknown client or redirect URI answers an error page and never redirects; other "
    "errors redirect to "
    "redirect_uri with error and state."
)


@oauth_blp.route("/authorize")
class Authorize(MethodView):
    @oauth_blp.doc(
        operationId="authorize",
        summary="Sign in and consent (HTML pages for a person's browser)",
        description=AUTHORIZE_DESCRIPTION + " Shows the sign-in page, then the consent page.",
        responses={200: HTML, 302: {"description": "Back to the client with an error"}, 400: HTML},
    )
    def get(self):
        user = current_user()
        try:
            grant = validated_grant(user)
        except OAuth2Error as error:
            return refused(error)
        if user is None:
            return sign_in_page(grant.client.name, next_url=request.full_path)
        return consent_page(grant, user)

    @oauth_blp.doc(
        operationId="consent",
        summary="The consent form's answer (HTML form post)",
        description=AUTHORIZE_DESCRIPTION
        + " decision=allow (with the granted_scope boxes left ticked) "
        "redirects with code and state; anything else with error=access_denied.",
        requestBody=FORM,
        responses={
            302: {"description": "Back to the client with code or error"},
            400: HTML,
            403: HTML,
        },
    )
    def post(self):
        user = current_user()
        try:
            grant = validated_grant(user)
        except OAuth2Error as error:
            return refused(error)
        if not pages.form_is_ours() or user is None:
            return pages.render(
                "error",
                403,
                error="invalid_request",
                message="This form was not sent from this page, or you are no longer signed in. "
                "Start again from the application.",
            )
        if request.form.get("decision") != "allow" or not grant.request.scope:
            return with_issuer(
                authorization_server().create_authorization_response(grant=grant, grant_user=None)
            )
        authorizations.record_consent(user, grant.client.get_client_id(), grant.request.scope)
        return with_issuer(
            authorization_server().create_authorization_response(grant=grant, grant_user=user)
        )


def sign_in_page(
    client_name: str | None,
    *,
    next_url: str,
    error: str | None = None,
    email: str = "",
    status: int = 200,
):
    return pages.render(
        "sign_in",
        status,
        client_name=client_name,
        action="/oauth/sign-in",
        next=next_url,
        error=error,
        email=email,
    )


def consent_page(grant, user: OAuthUser):
    client = grant.client
    resource = endpoint_for(grant.request.payload.data.get("resource"))
    return pages.render(
        "consent",
        client_name=client.name,
        client_id=client.get_client_id(),
        document_host=client.document_host,
        redirect_host=urlsplit(grant.redirect_uri).netloc or grant.redirect_uri,
        user_email=user.email,
        tenant_name=user.tenant.name,
        tenant_id=user.tenant_id,
        resource=resource.resource,
        resource_name=resource.server.title,
        action=request.full_path,
        scopes=[(scope, SCOPES[scope]) for scope in grant.request.scope.split()],
        authorizations_url="/oauth/authorizations",
    )


def safe_next(value: str | None) -> str:
    """Where a sign-in continues: a path of these pages, never another site."""
    if value and value.startswith("/oauth/") and not value.startswith("//") and "\\" not in value:
        return value
    return "/oauth/authorizations"


@oauth_blp.route("/sign-in")
class SignIn(MethodView):
    @oauth_blp.doc(
        operationId="sign_in",
        summary="The sign-in form's target (HTML)",
        description="email and password of a tenant user; 303 to the page that asked. "
        "Failed sign-ins count against the same per-address limit as "
        "unknown API keys (AUTH_FAILURE_LIMIT).",
        requestBody=FORM,
        responses={303: {"description": "Signed in"}, 401: HTML, 403: HTML, 429: HTML},
    )
    def post(self):
        next_url = safe_next(request.form.get("next"))
        if not pages.form_is_ours():
            return pages.render(
                "error",
                403,
                error="invalid_request",
                message="This form was not sent from this page.",
            )
        left = limits.peek_limit(FAILURE_LIMIT)
        if left is not None and not left.allowed:
            response = sign_in_page(
                None,
                next_url=next_url,
                status=429,
                email=request.form.get("email", ""),
                error="Too many failed sign-ins from your address: try again "
                f"in {left.retry_after} s.",
            )
            response.headers["Retry-After"] = str(left.retry_after)
            return response
        user = users.authenticate(request.form.get("email", ""), request.form.get("password", ""))
        if user is None:
            limits.count_hit(FAILURE_LIMIT)
            return sign_in_page(
                None,
                next_url=next_url,
                status=401,
                email=request.form.get("email", ""),
                error="The email or password is not right.",
            )
        response = redirect(next_url, code=303)
        pages.sign_in(response, str(user.id))
        return response


@oauth_blp.route("/sign-out")
class SignOut(MethodView):
    @oauth_blp.doc(
        operationId="sign_out",
        summary="Sign out of these pages (HTML)",
        requestBody=FORM,
        responses={303: {"description": "Signed out"}, 403: HTML},
    )
    def post(self):
        if not pages.form_is_ours():
            return pages.render(
                "error",
                403,
                error="invalid_request",
                message="This form was not sent from this page.",
            )
        response = redirect("/oauth/authorizations", code=303)
        pages.sign_out(response)
        return response


def authorizations_page(notice: str | None = None):
    """The signed-in person's authorized applications (the sign-in page when none is)."""
    user = current_user()
    if user is None:
        return sign_in_page(None, next_url="/oauth/authorizations")
    items = [authorizations.describe(consent) for consent in authorizations.user_consents(user.id)]
    return pages.render(
        "authorizations",
        items=items,
        user_email=user.email,
        tenant_name=user.tenant.name,
        notice=notice,
        revoke_url="/oauth/authorizations",
        sign_out_url="/oauth/sign-out",
    )


@oauth_blp.route("/authorizations")
class AuthorizationsPage(MethodView):
    @oauth_blp.doc(
        operationId="authorizations_page",
        summary="The applications the signed-in person authorized (HTML)",
        responses={200: HTML},
    )
    def get(self):
        return authorizations_page()


@oauth_blp.route("/authorizations/<consent_id>/revoke")
class RevokeAuthorizationPage(MethodView):
    @oauth_blp.doc(
        operationId="revoke_authorization_page",
        summary="Revoke an application from its page (HTML)",
        requestBody=FORM,
        responses={200: HTML, 403: HTML},
    )
    def post(self, consent_id):
        user = current_user()
        if user is None or not pages.form_is_ours():
            return pages.render(
                "error",
                403,
                error="invalid_request",
                message="This form was not sent from this page, or you are no longer signed in.",
            )
        consent = consent_of(user.id, consent_id)
        if consent is None:
            return authorizations_page(notice="That authorization was already gone.")
        name = authorizations.describe(consent)["client_name"]
        authorizations.revoke(consent)
        return authorizations_page(notice=f"{name} can no longer use Hirekit for you.")


def consent_of(user_id, consent_id) -> OAuthConsent | None:
    parsed = as_uuid(consent_id)
    if parsed is None:
        return None
    return OAuthConsent.get_or_none((OAuthConsent.id == parsed) & (OAuthConsent.user == user_id))


# ---- the token, registration and revocation endpoints
# --------------------------------------------------------------

TOKENS = {
    "description": "The tokens",
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "properties": {
                    "access_token": {"type": "string"},
                    "token_type": {"type": "string"},
                    "expires_in": {"type": "integer"},
                    "refresh_token": {"type": "string"},
                    "scope": {"type": "string"},
                },
            }
        }
    },
}


@oauth_blp.route("/token")
class Token(MethodView):
    @oauth_blp.doc(
        operationId="token",
        summary="Exchange a code, or a refresh token, for tokens (RFC 6749)",
        description="grant_type=authorization_code (code, redirect_uri, "
        "code_verifier, client_id, resource) or refresh_token "
        "(refresh_token, client_id, resource). Every refresh returns a new "
        "refresh token; presenting a used one revokes every token of that "
        "authorization. Access tokens last OAUTH_ACCESS_TOKEN_SECONDS and "
        "work only on the endpoint named by resource.",
        requestBody=FORM,
        responses={200: TOKENS, 400: OAUTH_ERROR, 401: OAUTH_ERROR},
    )
    def post(self):
        return authorization_server().create_token_response()


@oauth_blp.route("/revoke")
class Revoke(MethodView):
    @oauth_blp.doc(
        operationId="revoke_token",
        summary="Revoke an access or refresh token (RFC 7009)",
        description="token (and token_type_hint), with the client's authentication. A "
        "refresh token revokes every token of its authorization. An unknown "
        "token answers 200 too.",
        requestBody=FORM,
        responses={
            200: {"description": "Revoked (or not a live token)"},
            400: OAUTH_ERROR,
            401: OAUTH_ERROR,
        },
    )
    def post(self):
        return authorization_server().create_endpoint_response("revocation")


@oauth_blp.route("/register")
class Register(MethodView):
    @oauth_blp.doc(
        operationId="register_client",
        summary="Register a client (RFC 7591 dynamic client registration)",
        description="JSON client metadata: redirect_uris (https, http on localhost, or "
        "an app's private scheme), client_name, grant_types, "
        "token_endpoint_auth_method (none for public clients, "
        "client_secret_basic or client_secret_post), scope. Answers 201 "
        "with client_id (and client_secret for confidential clients).",
        requestBody={"content": {"application/json": {"schema": {"type": "object"}}}},
        responses={
            201: {
                "description": "Registered",
                "content": {"application/json": {"schema": {"type": "object"}}},
            },
            400: OAUTH_ERROR,
        },
    )
    def post(self):
        return register_client()


def register_client():
    """Dynamic client registration: the metadata's JSON checked here, the rest by Authlib."""
    if not request.is_json:
        return oauth_error(
            400,
            "invalid_client_metadata",
            "Send the client metadata as an application/json object.",
        )
    try:
        body = orjson.loads(request.get_data())
    except orjson.JSONDecodeError:
        return oauth_error(400, "invalid_client_metadata", "The body is not valid JSON.")
    if not isinstance(body, dict) or not body:
        return oauth_error(
            400, "invalid_client_metadata", "The client metadata must be a JSON object."
        )
    texts = [
        name
        for name in ("client_name", "client_uri", "logo_uri", "scope", "token_endpoint_auth_method")
        if name in body and not isinstance(body[name], str)
    ]
    if texts:
        return oauth_error(
            400, "invalid_client_metadata", f"{', '.join(texts)}: must be a JSON string."
        )
    problem = redirect_uris_problem(body.get("redirect_uris"))
    if problem:
        return oauth_error(400, "invalid_redirect_uri", problem)
    return authorization_server().create_endpoint_response("client_registration")


def oauth_error(status: int, error: str, description: str):
    response = make_response(
        orjson.dumps({"error": error, "error_description": description}), status
    )
    response.mimetype = "application/json"
    response.headers["Cache-Control"] = "no-store"
    return response


# ---- the tenant's users
# ------------------------------------------------------------------------------------------


def as_uuid(value) -> uuid.UUID | None:
    """A path's id as a UUID, or None when it is not one (answered 404 before any query, on every
    database)."""
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


def tenant_user(user_id) -> OAuthUser:
    parsed = as_uuid(user_id)
    user = (
        None
        if parsed is None
        else OAuthUser.get_or_none(
            (OAuthUser.id == parsed) & (OAuthUser.tenant == current_tenant_id())
        )
    )
    if user is None:
        raise NotFound("user", user_id)
    return user


@users_blp.route("")
class Users(MethodView):
    @users_blp.arguments(PageArgsSchema, location="query")
    @users_blp.response(200, page_schema(UserSchema))
    @users_blp.doc(operationId="list_users")
    def get(self, args):
        """List the tenant's users, oldest first (page mode), or walk them by cursor"""
        window, filters = listing.split_window(args)
        query = OAuthUser.select().where(OAuthUser.tenant == current_tenant_id())
        return listing.answer(
            query, window, tenant_id=current_tenant_id(), list_name="users", filters=filters
        )

    @users_blp.arguments(UserCreateSchema)
    @users_blp.response(201, UserSchema)
    @users_blp.doc(operationId="create_user")
    @users_blp.errors(409)
    def post(self, values):
        """Create a user who can sign in to authorize agent hosts (an email already used answers 409)"""  # noqa: E501
        try:
            return users.create_user(
                current_tenant_id(),
                values["email"],
                values["name"],
                values["password"],
                admin=values["admin"],
            )
        except users.UserError as error:
            raise ApiError(409, str(error)) from None


@users_blp.route("/<user_id>")
class UserById(MethodView):
    @users_blp.response(200, UserSchema)
    @users_blp.doc(operationId="get_user")
    def get(self, user_id):
        """Read a user"""
        return tenant_user(user_id)

    @users_blp.arguments(UserUpdateSchema)
    @users_blp.response(200, UserSchema)
    @users_blp.doc(operationId="update_user")
    def patch(self, values, user_id):
        """Change a user's name, password, admin flag, or disable them (their tokens stop working at once)"""  # noqa: E501
        user = tenant_user(user_id)
        if "password" in values:
            users.set_password(user, values.pop("password"))
        for name, value in values.items():
            setattr(user, name, value)
        user.updated_at = utcnow()
        user.save()
        return user

    @users_blp.response(204)
    @users_blp.doc(operationId="delete_user")
    def delete(self, user_id):
        """Delete a user, with their authorizations and tokens"""
        tenant_user(user_id).delete_instance(recursive=True)


@users_blp.route("/<user_id>/authorizations")
class UserAuthorizations(MethodView):
    @users_blp.arguments(PageArgs, location="query")
    @users_blp.response(200, AuthorizationPageSchema)
    @users_blp.doc(operationId="list_user_authorizations")
    def get(self, args, user_id):
        """The applications (agent hosts) a user authorized, oldest first"""
        user = tenant_user(user_id)
        query = OAuthConsent.select().where(OAuthConsent.user == user.id)
        body = listing.paginate(query, page=args["page"], size=args["size"])  # oldest first
        return {**body, "data": [authorizations.describe(row) for row in body["data"]]}


@users_blp.route("/<user_id>/authorizations/<authorization_id>")
class UserAuthorization(MethodView):
    @users_blp.response(204)
    @users_blp.doc(operationId="revoke_user_authorization")
    def delete(self, user_id, authorization_id):
        """Revoke an application a user authorized: every token it holds for them stops working"""
        consent = consent_of(tenant_user(user_id).id, authorization_id)
        if consent is None:
            raise NotFound("authorization", authorization_id)
        authorizations.revoke(consent)
