"""The mcp family: MCP servers for AI agents at /mcp (jobs tools) and /mcp/sourcing (people search and enrich tools)."""

from app.plugins import Plugin
from plugins.mcp.models import MODELS
from plugins.mcp.routes import jobs_blp, sourcing_blp

PLUGIN = Plugin(name="mcp", blueprints=(jobs_blp, sourcing_blp), models=MODELS, needs=("jobs",))
