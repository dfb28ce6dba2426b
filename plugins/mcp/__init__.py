"""The mcp family: MCP servers for AI agents at /mcp (jobs tools) and /mcp/sourcing (people search
and enrich tools)."""

from app.http.cross_origin import allow_cross_origin
from app.plugins import Plugin
from plugins.mcp.held_confirmation import held_confirmations_starve
from plugins.mcp.models import MODELS
from plugins.mcp.routes import jobs_blp, sourcing_blp


def init_app(app) -> None:
    # A host in a web page calls the servers with fetch() from one of MCP_ALLOWED_ORIGINS (any other
    # origin is refused 403, preflight included: DNS-rebinding protection), so it may read the
    # challenge and the session id.
    allow_cross_origin(
        app,
        [r"/mcp(?:/sourcing)?"],
        origins=app.config["MCP_ALLOWED_ORIGINS"],
        methods=["POST"],
        allow_headers=[
            "Authorization",
            "Content-Type",
            "Accept",
            "MCP-Protocol-Version",
            "Mcp-Session-Id",
            "Last-Event-ID",
        ],
        expose_headers=[
            "WWW-Authenticate",
            "Mcp-Session-Id",
            "MCP-Protocol-Version",
            "Retry-After",
            "X-Request-Id",
        ],
    )


PLUGIN = Plugin(
    name="mcp",
    blueprints=(jobs_blp, sourcing_blp),
    models=MODELS,
    needs=("jobs",),
    init_app=init_app,
    serving_checks=(held_confirmations_starve,),
)
