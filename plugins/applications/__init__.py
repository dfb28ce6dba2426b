"""The applications family: /v1/applications."""

from app.plugins import EventType, Plugin
from plugins.applications.models import Application
from plugins.applications.routes import blp
from plugins.applications.schemas import ApplicationSchema
from plugins.applications.services import APPLICATION_ACTIVITY

PLUGIN = Plugin(
    name="applications",
    blueprints=(blp,),
    models=(Application,),
    needs=("jobs", "candidates"),
    counted_lists=(("applications", None),),
    event_types=(
        EventType(
            APPLICATION_ACTIVITY,
            ApplicationSchema,
            samples=(
                ("status", "new"),
                ("source_application_status", "new"),
                ("application_stage", "ACTIVE"),
            ),
        ),
    ),
)
