"""The jobs family: /v1/jobs."""

from app.plugins import Plugin
from plugins.jobs.models import Job
from plugins.jobs.routes import blp

PLUGIN = Plugin(name="jobs", blueprints=(blp,), models=(Job,), counted_lists=(("jobs", "status"),))
