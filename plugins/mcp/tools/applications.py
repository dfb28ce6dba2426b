"""The applications family's MCP tools: list and read candidates' applications through plugins.applications.services."""

from __future__ import annotations

import marshmallow as ma

from app.http.fields import StrictSchema
from plugins.applications import services
from plugins.applications.schemas import ApplicationListArgsSchema, ApplicationSchema
from plugins.mcp.tools import get_tool, list_tool


class ApplicationIdArgsSchema(StrictSchema):
    """Which application."""

    application_id = ma.fields.String(required=True, metadata={
        "description": "The application's id (a UUID from list_applications)"})


TOOLS = (
    list_tool("applications", ApplicationListArgsSchema, ApplicationSchema, services.list_applications, (
        "List candidates' applications to jobs, oldest first, one page at a time. Each application embeds a "
        "summary of its candidate and its job, its source_application_status and its application_stage "
        "(ACTIVE or PASSIVE). Optional filters: job_id or candidate_id (UUIDs), source_id (the application's id "
        "in the ATS), job_source_id, candidate_source_id. page starts at 1 (default 1); size is 1-100 (default 20)."
    )),
    get_tool("applications", "get_application", "Get an application", ApplicationIdArgsSchema, ApplicationSchema,
             services.get_application, ("Read one application by its id (a UUID): its status and stage, its resume "
                                        "metadata, and summaries of the candidate (name, email, phone) and of the job.")),
)
