"""The candidates family: /v1/candidates, and when and how they may be contacted (zones, consent,
the tenant's contact settings and do-not-call list)."""

from app.plugins import EventType, Plugin
from plugins.candidates.cli import candidates_cli
from plugins.candidates.consent import CANDIDATE_CONSENT
from plugins.candidates.contact_policy import ContactPolicy, check_server_calling_hours
from plugins.candidates.contact_routes import contact_blp
from plugins.candidates.do_not_call import DoNotCallNumber
from plugins.candidates.models import Candidate
from plugins.candidates.routes import blp
from plugins.candidates.schemas import CandidateConsentEventSchema


def init_app(app) -> None:
    check_server_calling_hours(app.config["CALLING_HOURS"])


PLUGIN = Plugin(
    name="candidates",
    blueprints=(blp, contact_blp),
    models=(Candidate, ContactPolicy, DoNotCallNumber),
    cli=(candidates_cli,),
    init_app=init_app,
    counted_lists=(("candidates", None),),
    event_types=(EventType(CANDIDATE_CONSENT, CandidateConsentEventSchema),),
)
