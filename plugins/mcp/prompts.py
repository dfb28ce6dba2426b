"""MCP prompts of the jobs server: ready-made instructions a person can pick in their agent host,
filled in with a record's names and the resource URIs to read (prompts/list, prompts/get)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from flask import current_app

from app.errors import ApiError
from app.plugins import enabled
from plugins.mcp.protocol import INVALID_PARAMS, RpcError
from plugins.mcp.scopes import allows


@dataclass(frozen=True)
class Prompt:
    name: str
    title: str
    description: str
    argument: str  # the one argument every prompt here takes: a record id
    argument_description: str
    plugins: tuple[str, ...]
    scope: str
    render: Callable[[str, str], str]  # (tenant_id, record id) -> the user message

    def definition(self) -> dict:
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "arguments": [
                {"name": self.argument, "description": self.argument_description, "required": True}
            ],
        }


def review_text(tenant_id: str, application_id: str) -> str:
    from plugins.applications import services
    from plugins.calls.models import Call

    application = services.get_application(tenant_id, application_id)
    candidate, job = application.candidate, application.job
    name = " ".join(part for part in (candidate.first_name, candidate.last_name) if part)
    call = (
        Call.owned_by(tenant_id)
        .where(Call.application == application.id)
        .order_by(Call.created_at.desc(), Call.id.desc())
        .first()
    )
    lines = [
        f"Review {name} (candidate {candidate.id}) against the job \"{job.title}\" (job {job.id}), "
        "application "
        f"{application.id}, now at status {application.source_application_status}.",
        f"1. Read the job description: hirekit://jobs/{job.id}/description",
        f"2. Read the screening questions: hirekit://jobs/{job.id}/questions",
    ]
    if call is not None:
        lines += [
            f"3. Read the screening call's scorecard: hirekit://calls/{call.id}/scorecard",
            f"4. Read its transcript: hirekit://calls/{call.id}/transcript",
        ]
    else:
        lines.append(
            "3. There is no screening call yet: say so, and judge from the application alone."
        )
    lines.append(
        "Then give a recommendation (advance, hold or reject) with the evidence for it, question "
        "by question, "
        "and name anything the call did not establish."
    )
    return "\n".join(lines)


def sourcing_text(tenant_id: str, job_id: str) -> str:
    from plugins.jobs import services

    job = services.get_job(tenant_id, job_id)
    where = ", ".join(part for part in (job.city, job.state_name, job.country) if part)
    return "\n".join(
        [
            f"Find candidates for the job \"{job.title}\" (job {job.id}"
            f"{', ' + where if where else ''}).",
            f"1. Read the job: hirekit://jobs/{job.id}/description",
            "2. Search people on the Hirekit sourcing server with people_search (titles, skills "
            "and location from the job).",
            "3. For each promising person, create the candidate with upsert_candidate (source "
            "people_search, source_id "
            "the person's id) and apply them with upsert_application (job_source_id "
            f"{job.source_id}, status sourced, stage PASSIVE).",
            "4. Offer to screen them with start_instant_call; each call is placed only after the "
            "person confirms it.",
        ]
    )


PROMPTS = (
    Prompt(
        "review_screened_candidate",
        "Review a screened candidate",
        "Weigh an application's screening call (scorecard and transcript) against its job and "
        "recommend a step.",
        "application_id",
        "The application's id (a UUID from list_applications)",
        ("applications", "calls"),
        "candidates:read",
        review_text,
    ),
    Prompt(
        "source_candidates_for_job",
        "Source candidates for a job",
        "Search people for a job, add the promising ones as candidates and applications, and offer "
        "screening calls.",
        "job_id",
        "The job's id (a UUID from list_jobs)",
        ("jobs",),
        "jobs:read",
        sourcing_text,
    ),
)


def available_prompts() -> list[Prompt]:
    return [
        prompt
        for prompt in PROMPTS
        if all(enabled(current_app, plugin) for plugin in prompt.plugins) and allows(prompt.scope)
    ]


def prompt_named(name) -> Prompt | None:
    return next(
        (
            prompt
            for prompt in PROMPTS
            if prompt.name == name
            and all(enabled(current_app, plugin) for plugin in prompt.plugins)
        ),
        None,
    )


def get_prompt(tenant_id: str, params: dict) -> dict:
    prompt = prompt_named(params.get("name"))
    if prompt is None:
        raise RpcError(
            INVALID_PARAMS,
            f"Invalid params: unknown prompt {params.get('name')!r}",
            {"available": [p.name for p in available_prompts()]},
        )
    if not allows(prompt.scope):
        raise RpcError(
            INVALID_PARAMS,
            f"The prompt {prompt.name} needs the scope {prompt.scope}, which this token "
            "was not granted",
            {"scope": prompt.scope},
        )
    arguments = params.get("arguments") or {}
    value = arguments.get(prompt.argument) if isinstance(arguments, dict) else None
    if not isinstance(value, str) or not value:
        raise RpcError(
            INVALID_PARAMS,
            f"Invalid params: the prompt {prompt.name} needs the argument {prompt.argument}",
        )
    try:
        text = prompt.render(tenant_id, value)
    except ApiError as error:
        raise RpcError(INVALID_PARAMS, f"Invalid params: {error.message}") from None
    return {
        "description": prompt.description,
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
    }
