"""The calls family's MCP tools: start a screening call for an application and read calls, through plugins.calls.services."""

from __future__ import annotations

import marshmallow as ma

from app.api import page_schema
from app.fields import StrictSchema
from plugins.calls import services
from plugins.calls.models import STATUSES
from plugins.calls.schemas import CallListArgsSchema, CallSchema
from plugins.mcp.tools import Tool, with_defaults
from plugins.mcp.tools.applications import ApplicationIdArgsSchema


class CallIdArgsSchema(StrictSchema):
    """Which call."""

    call_id = ma.fields.String(required=True, metadata={
        "description": "The call's id (a UUID from start_instant_call or list_calls)"})


ListCallsArgsSchema = with_defaults(CallListArgsSchema, "ListCallsArgsSchema", page=1, size=20)

CALL_FIELDS = ("The call has status ({statuses}), summary, assessment (score 0-100, recommendation advance/hold/reject, "
               "per-question answers), transcript, started_at, ended_at and attempt.").format(statuses=", ".join(STATUSES))

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
    ),
    Tool(
        name="get_call",
        title="Get a call",
        description=f"Read one screening call by its id (a UUID). {CALL_FIELDS}",
        arguments=CallIdArgsSchema,
        result=CallSchema,
        run=lambda tenant_id, args: services.get_call(tenant_id, args["call_id"]),
        plugin="calls",
    ),
    Tool(
        name="list_calls",
        title="List calls",
        description=(
            "List screening calls, oldest first, one page at a time. Optional filters: job_id, candidate_id, "
            "application_id (UUIDs), application_source_id, job_source_id, candidate_source_id, status. "
            "page starts at 1 (default 1); size is 1-100 (default 20)."
        ),
        arguments=ListCallsArgsSchema,
        result=page_schema(CallSchema),
        run=lambda tenant_id, args: services.list_calls(tenant_id, **args),
        plugin="calls",
    ),
)
