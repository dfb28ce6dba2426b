"""MCP resources of the jobs server: a call's transcript and scorecard, a job's description and
screening questions, read through the families' services (resources/list, resources/templates/list,
resources/read).

resources/list names the newest LISTED_PER_KIND jobs and ended calls; any other one is read by its
URI, which the templates describe."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import orjson
from flask import current_app

from app.errors import ApiError
from app.plugins import enabled
from plugins.mcp.protocol import INVALID_PARAMS, RpcError
from plugins.mcp.scopes import allows

RESOURCE_NOT_FOUND = -32002  # MCP's code for a resource that is not there
LISTED_PER_KIND = 25


@dataclass(frozen=True)
class ResourceKind:
    """One kind of resource: its URI template, what it needs and how it is read."""

    name: str
    title: str
    template: str
    pattern: re.Pattern
    mime_type: str
    description: str
    plugin: str
    scope: str
    read: Callable[[str, str], str]  # (tenant_id, record id) -> the resource's text

    def definition(self) -> dict:
        return {
            "uriTemplate": self.template,
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "mimeType": self.mime_type,
        }


def json_text(value) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()


def call_record(tenant_id: str, call_id: str) -> dict:
    from plugins.calls import services
    from plugins.calls.schemas import CallSchema

    return CallSchema().dump(services.get_call(tenant_id, call_id))


def read_transcript(tenant_id: str, call_id: str) -> str:
    record = call_record(tenant_id, call_id)
    return json_text(
        {"call_id": record["id"], "status": record["status"], "transcript": record["transcript"]}
    )


def read_scorecard(tenant_id: str, call_id: str) -> str:
    record = call_record(tenant_id, call_id)
    return json_text(
        {
            "call_id": record["id"],
            "status": record["status"],
            "summary": record["summary"],
            "assessment": record["assessment"],
            "application_id": str(record["application_id"]),
            "job_id": str(record["job_id"]),
            "candidate_id": str(record["candidate_id"]),
        }
    )


def read_description(tenant_id: str, job_id: str) -> str:
    from plugins.jobs import services

    job = services.get_job(tenant_id, job_id)
    return f"# {job.title}\n\n{job.description or ''}\n"


def read_questions(tenant_id: str, job_id: str) -> str:
    from plugins.questions import services
    from plugins.questions.schemas import QuestionListSchema

    return json_text(QuestionListSchema().dump(services.list_questions(tenant_id, job_id)))


UUID = r"(?P<id>[0-9A-Fa-f-]{36})"
KINDS = (
    ResourceKind(
        "call_transcript",
        "Call transcript",
        "hirekit://calls/{call_id}/transcript",
        re.compile(rf"hirekit://calls/{UUID}/transcript"),
        "application/json",
        "The turns of a screening call, as spoken.",
        "calls",
        "calls:read",
        read_transcript,
    ),
    ResourceKind(
        "call_scorecard",
        "Call scorecard",
        "hirekit://calls/{call_id}/scorecard",
        re.compile(rf"hirekit://calls/{UUID}/scorecard"),
        "application/json",
        "A "
        "screening call's outcome: summary, score 0-100, recommendation and per-question answers.",
        "calls",
        "calls:read",
        read_scorecard,
    ),
    ResourceKind(
        "job_description",
        "Job description",
        "hirekit://jobs/{job_id}/description",
        re.compile(rf"hirekit://jobs/{UUID}/description"),
        "text/markdown",
        "A job posting's title and full description.",
        "jobs",
        "jobs:read",
        read_description,
    ),
    ResourceKind(
        "job_questions",
        "Job screening questions",
        "hirekit://jobs/{job_id}/questions",
        re.compile(rf"hirekit://jobs/{UUID}/questions"),
        "application/json",
        "The screening questions a job's calls ask, in order.",
        "questions",
        "jobs:read",
        read_questions,
    ),
)


def available_kinds() -> list[ResourceKind]:
    """The kinds whose family is enabled and whose scope the caller holds."""
    return [kind for kind in KINDS if enabled(current_app, kind.plugin) and allows(kind.scope)]


def kind_of(uri: str) -> tuple[ResourceKind, str] | None:
    for kind in KINDS:
        match = kind.pattern.fullmatch(uri)
        if match and enabled(current_app, kind.plugin):
            return kind, match["id"]
    return None


def list_resources(tenant_id: str) -> list[dict]:
    """Concrete resources: the newest jobs' description and questions, the newest ended calls'
    transcript and scorecard."""
    kinds = {kind.name: kind for kind in available_kinds()}
    listed: list[dict] = []
    if "job_description" in kinds or "job_questions" in kinds:
        from plugins.jobs.models import Job

        jobs = (
            Job.owned_by(tenant_id)
            .order_by(Job.created_at.desc(), Job.id.desc())
            .limit(LISTED_PER_KIND)
        )
        for job in jobs:
            for name, suffix in (
                ("job_description", "description"),
                ("job_questions", "questions"),
            ):
                if name in kinds:
                    listed.append(
                        {
                            "uri": f"hirekit://jobs/{job.id}/{suffix}",
                            "name": f"{name}-{job.id}",
                            "title": f"{kinds[name].title}: {job.title}",
                            "mimeType": kinds[name].mime_type,
                        }
                    )
    if "call_transcript" in kinds:
        from plugins.calls.models import Call

        calls = (
            Call.owned_by(tenant_id)
            .where(Call.ended_at.is_null(False))
            .order_by(Call.ended_at.desc(), Call.id.desc())
            .limit(LISTED_PER_KIND)
        )
        for call in calls:
            for name in ("call_transcript", "call_scorecard"):
                listed.append(
                    {
                        "uri": f"hirekit://calls/{call.id}/{name.split('_')[1]}",
                        "name": f"{name}-{call.id}",
                        "title": f"{kinds[name].title} of call {call.id}",
                        "mimeType": kinds[name].mime_type,
                    }
                )
    return listed


def read_resource(tenant_id: str, uri) -> dict:
    """resources/read: the resource's contents, or -32002 when there is no such resource for this
    caller."""
    if not isinstance(uri, str):
        raise RpcError(INVALID_PARAMS, "Invalid params: resources/read needs uri (a string)")
    found = kind_of(uri)
    if found is None:
        raise RpcError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})
    kind, record_id = found
    if not allows(kind.scope):
        raise RpcError(
            INVALID_PARAMS,
            f"Reading {uri} needs the scope {kind.scope}, which this token was not granted",
            {"uri": uri, "scope": kind.scope},
        )
    try:
        text = kind.read(tenant_id, record_id)
    except ApiError as error:
        if error.status == 404:
            raise RpcError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri}) from None
        raise
    return {"contents": [{"uri": uri, "mimeType": kind.mime_type, "text": text}]}


def required_scope(uri) -> str | None:
    found = kind_of(uri) if isinstance(uri, str) else None
    return found[0].scope if found else None
