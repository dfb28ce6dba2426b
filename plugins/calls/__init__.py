"""The calls family: instant and scheduled screening calls through a telephony provider, analyzed
into a summary and assessment."""

from app.data import events
from app.background.periodic import PeriodicJob
from app.plugins import EventType, Plugin, Tasks
from app.security.auth import accept_signed_forms
from plugins.calls import tasks
from plugins.calls.callbacks import TELNYX_FORM, TWILIO_FORM
from plugins.calls.cli import calls_cli
from plugins.calls.conversation.dialogue import open_call_conversation
from plugins.calls.lifecycle import CALL_ACTIVITY
from plugins.calls.models import Call, CallPlan, CallReminder, JobFaq, QuestionRubric
from plugins.calls.page_routes import page_blp
from plugins.calls.recordings import CallRecording, CallSettings
from plugins.calls.relay.claims import CallRelay
from plugins.calls.routes import blp, callbacks_blp, telnyx_callbacks_blp
from plugins.calls.schemas import CallSchema
from plugins.calls.scheduling import (
    on_application_activity,
    on_call_activity,
    on_consent_revoked,
    on_contact_opt_out,
    on_scheduling_toggled,
)
from plugins.candidates.consent import add_consent_listener
from plugins.candidates.services import add_opt_out_listener


def init_app(app) -> None:
    accept_signed_forms(app, callbacks_blp.name, TWILIO_FORM)
    accept_signed_forms(app, telnyx_callbacks_blp.name, TELNYX_FORM)
    # the dialogue a call's relay session holds (a test may put its own first)
    app.extensions.setdefault("hirekit_conversation_factory", open_call_conversation)
    events.add_listener(app, on_application_activity)
    events.add_listener(app, on_call_activity, once_committed=True)
    add_opt_out_listener(app, on_contact_opt_out)
    add_consent_listener(app, on_consent_revoked)
    if "scheduling" in app.config["PLUGINS"]:
        from plugins.scheduling.services import add_toggle_listener

        add_toggle_listener(app, on_scheduling_toggled)


PLUGIN = Plugin(
    name="calls",
    blueprints=(blp, callbacks_blp, telnyx_callbacks_blp, page_blp),
    models=(
        Call,
        CallPlan,
        CallReminder,
        JobFaq,
        QuestionRubric,
        CallSettings,
        CallRecording,
        CallRelay,
    ),
    needs=("jobs", "candidates", "applications", "questions", "scheduling"),
    tasks=Tasks(
        queues=(tasks.QUEUE,),
        periodic=(
            PeriodicJob(
                "plugins.calls.tasks.reap_stalled_calls", tasks.QUEUE, "CALL_REAPER_INTERVAL"
            ),
        ),
    ),
    event_types=(
        EventType(
            CALL_ACTIVITY,
            CallSchema,
            samples=(
                ("status", "completed"),
                ("summary", "Sample call: the candidate answered every screening question."),
                ("trigger", "instant"),
                ("provider", "simulated"),
                ("phone_no", "+15555550100"),
            ),
        ),
    ),
    init_app=init_app,
    cli=(calls_cli,),
)
