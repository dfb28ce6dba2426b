"""The event feed: GET /v1/events, the tenant's stored events (always on: a webhook receiver that
missed deliveries pulls them here)."""

from app.plugins import Plugin
from plugins.events.routes import blp

PLUGIN = Plugin(name="events", blueprints=(blp,))
