"""The questions family's MCP tools: list a job's screening questions and generate new ones, through
plugins.questions.services."""

from __future__ import annotations

from plugins.mcp.tools import Tool, with_fields
from plugins.mcp.tools.jobs import JOB_ID, JobIdArgsSchema
from plugins.questions import services
from plugins.questions.schemas import QuestionListArgsSchema, QuestionListSchema

ListJobQuestionsArgsSchema = with_fields(
    QuestionListArgsSchema, "ListJobQuestionsArgsSchema", job_id=JOB_ID
)


def list_job_questions(tenant_id: str, arguments: dict) -> dict:
    job_id = arguments.pop("job_id")
    return services.list_questions(tenant_id, job_id, **arguments)


TOOLS = (
    Tool(
        name="list_job_questions",
        title="List a job's screening questions",
        description=(
            "List the screening questions of a job (by job_id), in the order they are asked. With "
            "application_id "
            "(an application of that job), that application's own questions are listed too. Each "
            "question has "
            "question_text, source_id, position and generated (true when made by "
            "generate_job_questions)."
        ),
        arguments=ListJobQuestionsArgsSchema,
        result=QuestionListSchema,
        run=list_job_questions,
        plugin="questions",
    ),
    Tool(
        name="generate_job_questions",
        title="Generate screening questions for a job",
        description=(
            "Generate 5-10 screening questions from a job's description and fields and add them to "
            "the job "
            "(source_id generated-<n>). Questions the job already has are skipped, so the answer "
            "lists only the "
            "questions added now; an empty list means the job already has them all."
        ),
        arguments=JobIdArgsSchema,
        result=QuestionListSchema,
        run=lambda tenant_id, args: {
            "data": services.generate_questions(tenant_id, args["job_id"])
        },
        plugin="questions",
        read_only=False,
        idempotent=False,
    ),
)
