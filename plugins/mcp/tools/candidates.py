"""The candidates family's MCP tools: create or replace, read and list candidates through
plugins.candidates.services, with the REST bodies' validation."""

from __future__ import annotations

import marshmallow as ma

from app.http.fields import StrictSchema
from plugins.candidates import services
from plugins.candidates.schemas import (
    CandidateCreateSchema,
    CandidateListArgsSchema,
    CandidateSchema,
)
from plugins.mcp.tools import Tool, get_tool, list_tool


class CandidateIdArgsSchema(StrictSchema):
    """Which candidate."""

    candidate_id = ma.fields.String(
        required=True,
        metadata={
            "description": "The candidate's id (a UUID from list_candidates or upsert_candidate)"
        },
    )


def upsert_candidate(tenant_id: str, arguments: dict):
    """Create the candidate with this source_id, or replace the stored one, as PUT
    /v1/candidates/by-source-id does."""
    source_id = arguments.pop("source_id")
    record, _created = services.CANDIDATE_UPSERT.upsert(tenant_id, source_id, arguments)
    return record


TOOLS = (
    Tool(
        name="upsert_candidate",
        title="Create or replace a candidate",
        description=(
            "Create a candidate, or replace the one with the same source_id (your unique id for "
            "the person). "
            "Required: first_name, email, phone_no (international format with the country code, "
            "e.g. "
            "+1 415 555 2671), source (where the candidate comes from, e.g. people_search) and "
            "source_id. Optional: "
            "last_name, city, state_name, country, and a resume as base64file (+ file_name) or a "
            "file reference. "
            "Fields left out of a replacement become empty. Returns the candidate with its id."
        ),
        arguments=CandidateCreateSchema,
        result=CandidateSchema,
        run=upsert_candidate,
        plugin="candidates",
        read_only=False,
        idempotent=True,
    ),
    get_tool(
        "candidates",
        "get_candidate",
        "Get a candidate",
        CandidateIdArgsSchema,
        CandidateSchema,
        services.get_candidate,
        (
            "Read one candidate by id (a UUID): name, email, phone, location, source, "
            "resume metadata and whether they opted out of contact."
        ),
    ),
    list_tool(
        "candidates",
        CandidateListArgsSchema,
        CandidateSchema,
        services.list_candidates,
        (
            "List your organisation's candidates, oldest first, one page at a time. Optional "
            "filters: source_id, email "
            "(case-insensitive exact match). page starts at 1 (default 1); size is 1-100 (default "
            "20)."
        ),
    ),
)
