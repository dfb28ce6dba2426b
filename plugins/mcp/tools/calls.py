"""The calls family's MCP tools: start a screening call for an application and read calls, through plugins.calls.services."""

from __future__ import annotations

import marshmallow as ma

from app.http.fields import StrictSchema
from plugins.calls import services
from plugins.calls.models import STATUSES
from plugins.calls.schemas import CallListArgsSchema, CallSchema, CallWithRemindersSchema
from plugins.mcp.tools import Tool, get_tool, list_tool
from plugins.mcp.tools.applications import ApplicationIdArgsSchema


class CallIdArgsSchema(StrictSchema):
    """Which call."""

    call_id = ma.fields.String(required=True, metadata={
        "description": "The call's id (a UUID from start_instant_call or list_calls)"})


CALL_FIELDS = ("The call has status ({statuses}), summary, assessment (score 0-100, recommendation advance/hold/reject, "
               "per-question answers), transcript, started_at, ended_at and attempt.").format(statuses=", ".join(STATUSES))

def confirm_instant_call(tenant_id: str, arguments: dict) -> str:
    """The question the person answers before start_instant_call rings anyone: who, which country's number, which job."""
    import phonenumbers
    from phonenumbers import geocoder

    from plugins.applications.services import get_application

    application = get_application(tenant_id, arguments.get("application_id"))
    candidate, job = application.candidate, application.job
    name = " ".join(part for part in (candidate.first_name, candidate.last_name) if part)
    country = "an unknown country"
    try:
        number = phonenumbers.parse(candidate.phone_no or "", None)
        country = geocoder.country_name_for_number(number, "en") or f"country code +{number.country_code}"
    except phonenumbers.NumberParseException:
        pass
    return (f"Place a screening call now to {name}, on their phone number in {country}, for the job "
            f"\"{job.title}\"? Their phone will ring right away.")


TOOLS = (
    Tool(
        name="start_instant_call",
        title="Start a screening call now",
        description=(
            "Phone the candidate of an application (by application_id) right away for an automated screening interview "
            "that asks the job's screening questions. Fails if the application already has a call queued, ringing or in "
            "progress (the message names that call's id), or if the candidate has no phone number. Returns the new call; "
            f"read its progress and outcome later with get_call. {CALL_FIELDS}"
        ),
        arguments=ApplicationIdArgsSchema,
        result=CallSchema,
        run=lambda tenant_id, args: services.start_instant_call(tenant_id, args["application_id"]),
        plugin="calls",
        read_only=False,
        idempotent=False,
        annotations={"openWorldHint": True},  # it rings a real person's phone
        confirm=confirm_instant_call,
    ),
    get_tool("calls", "get_call", "Get a call", CallIdArgsSchema, CallWithRemindersSchema, services.get_call_with_reminders,
             f"Read one screening call by its id (a UUID). {CALL_FIELDS} A scheduled call also lists its reminders "
             "(channel email or sms, address, due_at, sent_at, status pending/sending/sent/failed/skipped/canceled, "
             "error)."),
    list_tool("calls", CallListArgsSchema, CallSchema, services.list_calls, (
        "List screening calls, oldest first, one page at a time. Optional filters: job_id, candidate_id, "
        "application_id (UUIDs), application_source_id, job_source_id, candidate_source_id, status. "
        "page starts at 1 (default 1); size is 1-100 (default 20)."
    )),
)
