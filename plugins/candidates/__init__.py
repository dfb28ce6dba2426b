"""The candidates family: /v1/candidates."""

from app.plugins import Plugin
from plugins.candidates.models import Candidate
from plugins.candidates.routes import blp

PLUGIN = Plugin(name="candidates", blueprints=(blp,), models=(Candidate,), counted_lists=(("candidates", None),))
