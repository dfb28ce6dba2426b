"""The applications family's MCP tools: list and read candidates' applications through
plugins.applications.services."""

from __future__ import annotations

import marshmallow as ma

from app.http.fields import StrictSchema
from plugins.applications import services
from plugins.applications.schemas import (
    ApplicationCreateSchema,
    ApplicationListArgsSchema,
    ApplicationSchema,
)
from plugins.mcp.tools import Tool, get_tool, list_tool


class ApplicationIdArgsSchema(StrictSchema):
    """Which application."""

    application_id = ma.fields.String(
        required=True,
        metadata={"description": "The application's id (a UUID from list_applications)"},
    )


def upsert_application(tenant_id: str, arguments: dict):
    """With a source_id: create or replace the application that has it (PUT
    /v1/applications/by-source-id); without one: create it (POST /v1/applications), refused when the
    candidate already applied to the job."""
    source_id = arguments.pop("source_id", None)
    if source_id is None:
        return services.create_application(tenant_id, arguments)
    record, _created = services.APPLICATION_UPSERT.upsert(tenant_id, source_id, arguments)
    return record


TOOLS = (
    Tool(
        name="upsert_application",
        title="Create or replace an application",
        description=(
            "Apply a candidate to a job. Required: candidate_source_id and job_source_id (the "
            "source_ids of one of "
            "your candidates and one of your jobs; candidate_id and job_id may be sent too and "
            "must match), "
            "source_application_status (e.g. applied) and application_stage (ACTIVE or PASSIVE). "
            "With source_id "
            "(your id for the application) an existing application with it is replaced; without "
            "one a new "
            "application is created, and a candidate who already applied to the job fails naming "
            "that "
            "application's id. Returns the application with summaries of its candidate and job."
        ),
        arguments=ApplicationCreateSchema,
        result=ApplicationSchema,
        run=upsert_application,
        plugin="applications",
        read_only=False,
        idempotent=True,
    ),
    list_tool(
        "applications",
        ApplicationListArgsSchema,
        ApplicationSchema,
        services.list_applications,
        (
            "List candidates' applications to jobs, oldest first, one page at a time. Each "
            "application embeds a "
            "summary of its candidate and its job, its source_application_status and its "
            "application_stage "
            "(ACTIVE or PASSIVE). Optional filters: job_id or candidate_id (UUIDs), source_id (the "
            "application's id "
            "in the ATS), job_source_id, candidate_source_id. page starts at 1 (default 1); size "
            "is 1-100 (default 20)."
        ),
    ),
    get_tool(
        "applications",
        "get_application",
        "Get an application",
        ApplicationIdArgsSchema,
        ApplicationSchema,
        services.get_application,
        (
            "Read one application by its id (a UUID): its status and stage, its resume "
            "metadata, and summaries of the candidate (name, email, phone) and of the job."
        ),
    ),
)
