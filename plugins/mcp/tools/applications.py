"""The applications family's MCP tools: list and read candidates' applications through plugins.applications.services."""

from __future__ import annotations

import marshmallow as ma

from app.api import page_schema
from app.fields import StrictSchema
from plugins.applications import services
from plugins.applications.schemas import ApplicationListArgsSchema, ApplicationSchema
from plugins.mcp.tools import Tool, with_defaults


class ApplicationIdArgsSchema(StrictSchema):
    """Which application."""

    application_id = ma.fields.String(required=True, metadata={
        "description": "The application's id (a UUID from list_applications)"})


ListApplicationsArgsSchema = with_defaults(ApplicationListArgsSchema, "ListApplicationsArgsSchema", page=1, size=20)

TOOLS = (
    Tool(
        name="list_applications",
        title="List applications",
        description=(
            "List candidates' applications to jobs, oldest first, one page at a time. Each application embeds a "
            "summary of its candidate and its job, its source_application_status and its application_stage "
            "(ACTIVE or PASSIVE). Optional filters: job_id or candidate_id (UUIDs), source_id (the application's id "
            "in the ATS), job_source_id, candidate_source_id. page starts at 1 (default 1); size is 1-100 (default 20)."
        ),
        arguments=ListApplicationsArgsSchema,
        result=page_schema(ApplicationSchema),
        run=lambda tenant_id, args: services.list_applications(tenant_id, **args),
        plugin="applications",
    ),
    Tool(
        name="get_application",
        title="Get an application",
        description=("Read one application by its id (a UUID): its status and stage, its resume metadata, and "
                     "summaries of the candidate (name, email, phone) and of the job."),
        arguments=ApplicationIdArgsSchema,
        result=ApplicationSchema,
        run=lambda tenant_id, args: services.get_application(tenant_id, args["application_id"]),
        plugin="applications",
    ),
)
