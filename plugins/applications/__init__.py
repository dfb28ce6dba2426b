"""The applications family: /v1/applications."""

from app.plugins import Plugin
from plugins.applications.models import Application
from plugins.applications.routes import blp

PLUGIN = Plugin(name="applications", blueprints=(blp,), models=(Application,), needs=("jobs", "candidates"),
                counted_lists=(("applications", None),))
