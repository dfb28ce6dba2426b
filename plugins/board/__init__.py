"""The board family: the unversioned public job board at /jobs."""

from app.plugins import Plugin
from plugins.board.routes import blp

PLUGIN = Plugin(name="board", blueprints=(blp,), needs=("jobs", "candidates", "applications"))
