"""The calls family's MCP tools: start a screening call for an application and read calls, through
plugins.calls.services."""

from __future__ import annotations

import marshmallow as ma

from app.http.fields import StrictSchema
from plugins.calls import rescheduling, services
from plugins.calls.models import STATUSES
from plugins.calls.schemas import (
    CallListArgsSchema,
    CallSchema,
    CallWithRemindersSchema,
    RescheduleBodySchema,
)
from plugins.mcp.tools import Tool, get_tool, list_tool
from plugins.mcp.tools.applications import ApplicationIdArgsSchema


class CallIdArgsSchema(StrictSchema):
    """Which call."""

    call_id = ma.fields.String(
        required=True,
        metadata={"description": "The call's id (a UUID from start_instant_call or list_calls)"},
    )


class InstantCallToolArgsSchema(ApplicationIdArgsSchema):
    """Which application's candidate to call, and what to do outside their calling hours."""

    outside_calling_hours = ma.fields.String(
        load_default="refuse",
        validate=ma.validate.OneOf(("refuse", "queue")),
        metadata={
            "description": (
                "When the candidate may not be called now (their calling hours, in their zone, or "
                "the daily cap): `refuse` "
                "(default) fails naming the next allowed moment; `queue` queues the call for that "
                "moment"
            )
        },
    )


class RescheduleToolArgsSchema(CallIdArgsSchema, RescheduleBodySchema):
    """Which call, and its new time."""


class CancelToolArgsSchema(CallIdArgsSchema):
    """Which call, and why."""

    reason = ma.fields.String(
        load_default=None,
        allow_none=True,
        validate=ma.validate.Length(max=500),
        metadata={"description": "Why it is canceled (kept as the call's error)"},
    )


CALL_FIELDS = (
    "The call has status ({statuses}), summary, assessment (score 0-100, "
    "recommendation advance/hold/reject, per-question answers, knockouts_failed), "
    "transcript (turns with speaker, text, at_ms, question_index, interrupted), answers "
    "(per question: answer, typed value, score 0-5, meets_requirement, evidence, "
    "follow_ups, status), candidate_questions (the candidate's questions and answers "
    "given, or passed to the recruiter), end_reason, duration_seconds, language, "
    "analyzer, started_at, ended_at and attempt."
).format(statuses=", ".join(STATUSES))


def confirm_instant_call(tenant_id: str, arguments: dict) -> str:
    """The question the person answers before start_instant_call rings anyone: who, which country's
    number, which job."""
    import phonenumbers
    from phonenumbers import geocoder

    from plugins.applications.services import get_application

    application = get_application(tenant_id, arguments.get("application_id"))
    candidate, job = application.candidate, application.job
    name = " ".join(part for part in (candidate.first_name, candidate.last_name) if part)
    country = "an unknown country"
    try:
        number = phonenumbers.parse(candidate.phone_no or "", None)
        country = (
            geocoder.country_name_for_number(number, "en") or f"country code +{number.country_code}"
        )
    except phonenumbers.NumberParseException:
        pass
    return (
        f"Place a screening call now to {name}, on their phone number in {country}, for the job "
        f"\"{job.title}\"? Their phone will ring right away."
    )


TOOLS = (
    Tool(
        name="start_instant_call",
        title="Start a screening call now",
        description=(
            "Phone the candidate of an application (by application_id) right away for an automated "
            "screening interview "
            "that asks the job's screening questions. Fails if the application already has a call "
            "queued, ringing or in "
            "progress (the message names that call's id), if the candidate has no phone number, "
            "withdrew consent to "
            "calls or is on the do-not-call list, and outside the candidate's calling hours in "
            "their own zone (the "
            "error names the next allowed moment; outside_calling_hours=queue queues the call for "
            "it instead). "
            "Returns the new call; "
            f"read its progress and outcome later with get_call. {CALL_FIELDS}"
        ),
        arguments=InstantCallToolArgsSchema,
        result=CallSchema,
        run=lambda tenant_id, args: services.start_instant_call(
            tenant_id, args["application_id"], outside_calling_hours=args["outside_calling_hours"]
        ),
        plugin="calls",
        read_only=False,
        idempotent=False,
        annotations={"openWorldHint": True},  # it rings a real person's phone
        confirm=confirm_instant_call,
    ),
    Tool(
        name="reschedule_call",
        title="Move a queued call to another time",
        description=(
            "Move a queued screening call (by call_id) to scheduled_for (ISO 8601; without an "
            "offset it is read in the "
            "candidate's own zone). The time must fall in the job's calling window and days and "
            "the candidate's "
            "calling hours, in their zone: otherwise it fails naming the next allowed moment. A "
            "call ringing, in "
            f"progress or finished cannot be moved. Returns the call. {CALL_FIELDS}"
        ),
        arguments=RescheduleToolArgsSchema,
        result=CallSchema,
        run=lambda tenant_id, args: rescheduling.reschedule_request(
            tenant_id, args["call_id"], args["scheduled_for"]
        ),
        plugin="calls",
        read_only=False,
        idempotent=True,
    ),
    Tool(
        name="cancel_call",
        title="Cancel a queued call",
        description=(
            "Cancel a queued screening call (by call_id) and its reminders; a scheduled series it "
            "belongs to stops. "
            "A call ringing, in progress or finished cannot be canceled. Returns the call, status "
            "canceled."
        ),
        arguments=CancelToolArgsSchema,
        result=CallSchema,
        run=lambda tenant_id, args: rescheduling.cancel(
            tenant_id, args["call_id"], reason=args.get("reason") or "canceled by the client"
        ),
        plugin="calls",
        read_only=False,
        destructive=True,
        idempotent=False,
    ),
    get_tool(
        "calls",
        "get_call",
        "Get a call",
        CallIdArgsSchema,
        CallWithRemindersSchema,
        services.get_call_with_reminders,
        f"Read one screening call by its id (a UUID). {CALL_FIELDS} A scheduled call also lists "
        "its reminders "
        "(channel email or sms, address, due_at, sent_at, status "
        "pending/sending/sent/failed/skipped/canceled, "
        "error).",
    ),
    list_tool(
        "calls",
        CallListArgsSchema,
        CallSchema,
        services.list_calls,
        (
            "List screening calls, oldest first, one page at a time. Optional filters: job_id, "
            "candidate_id, "
            "application_id (UUIDs), application_source_id, job_source_id, candidate_source_id, "
            "status. "
            "page starts at 1 (default 1); size is 1-100 (default 20)."
        ),
    ),
)
