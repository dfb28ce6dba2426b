"""The tenant family: GET /v1/tenant, the calling key's tenant (always on: every integration needs
its tenant id)."""

from app.plugins import Plugin
from plugins.tenant.routes import blp

PLUGIN = Plugin(name="tenant", blueprints=(blp,))
