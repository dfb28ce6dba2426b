"""The scheduling family: per-job interview scheduling switch and schedule setting."""

from app.plugins import Plugin
from plugins.scheduling.models import JobSchedule
from plugins.scheduling.routes import blp

PLUGIN = Plugin(name="scheduling", blueprints=(blp,), models=(JobSchedule,), needs=("jobs",))
