"""The privacy family: a candidate's data exported, erased or anonymized on request, erased after
the tenant's retention, and the erasure log."""

from app.data import tombstones
from app.background.periodic import PeriodicJob
from app.plugins import EventType, Plugin, Tasks
from plugins.privacy.cli import privacy_cli
from plugins.privacy.erasure import CANDIDATE_DELETED
from plugins.privacy.models import Erasure
from plugins.privacy.retention import QUEUE
from plugins.privacy.routes import blp
from plugins.privacy.schemas import CandidateDeletedSchema


def init_app(app) -> None:
    tombstones.declare(app, "candidates")
    tombstones.declare(app, "applications")


PLUGIN = Plugin(
    name="privacy",
    blueprints=(blp,),
    models=(Erasure,),
    needs=("candidates", "applications", "questions", "calls", "webhooks"),
    tasks=Tasks(
        periodic=(
            PeriodicJob(
                "plugins.privacy.retention.expire_inactive_candidates",
                QUEUE,
                "CANDIDATE_RETENTION_INTERVAL",
            ),
        )
    ),
    event_types=(EventType(CANDIDATE_DELETED, CandidateDeletedSchema),),
    init_app=init_app,
    cli=(privacy_cli,),
)
