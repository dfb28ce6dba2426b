"""The oauth family: an OAuth 2.1 authorization server for the MCP endpoints (metadata, sign-in and
consent pages, authorization code with PKCE, client metadata documents and registration, tokens
bound to one endpoint, revocation), the endpoints' Protected Resource Metadata, and the tenant users
who sign in (/v1/users, `flask users`)."""

from app.background.periodic import PeriodicJob
from app.http.cross_origin import allow_cross_origin
from app.plugins import Plugin, Tasks
from app.security import auth
from plugins.oauth.cli import oauth_cli, users_cli
from plugins.oauth.expiry import QUEUE
from plugins.oauth.models import MODELS
from plugins.oauth.resources import ENDPOINTS, challenge_attributes, token_resolver
from plugins.oauth.routes import metadata_blp, oauth_blp, users_blp
from plugins.oauth.server import build_server


def init_app(app) -> None:
    app.extensions["hirekit_oauth_server"] = build_server(app)
    app.extensions["hirekit_mcp_challenge"] = challenge_attributes
    for endpoint in ENDPOINTS:
        auth.accept_access_tokens(app, endpoint.blueprint, token_resolver(endpoint))
    # A host in a web page discovers, registers and exchanges codes with fetch(); the pages a person
    # signs in and consents on are navigations and stay same-origin.
    allow_cross_origin(
        app,
        [r"/\.well-known/.*", r"/oauth/(?:token|register|revoke)"],
        origins="*",
        methods=["GET", "POST"],
        allow_headers=["Authorization", "Content-Type", "MCP-Protocol-Version"],
        expose_headers=["WWW-Authenticate"],
    )


PLUGIN = Plugin(
    name="oauth",
    blueprints=(metadata_blp, oauth_blp, users_blp),
    models=MODELS,
    needs=("mcp",),
    tasks=Tasks(
        periodic=(
            PeriodicJob("plugins.oauth.expiry.purge_expired_grants", QUEUE, "OAUTH_PURGE_INTERVAL"),
        )
    ),
    init_app=init_app,
    cli=(users_cli, oauth_cli),
)
