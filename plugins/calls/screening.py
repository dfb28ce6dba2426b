"""What a screening call knows beyond the job record: a job's FAQ for candidates' questions, and
each question's rubric (answer type, what meets it, knockout, weight). Read and replaced through
sub-resources of the job."""

from __future__ import annotations

from app.data.db import database
from app.data.records import row_for_update
from plugins.calls.models import JobFaq, QuestionRubric
from plugins.calls.rubric import inferred_type
from plugins.jobs.services import get_job
from plugins.questions.services import get_question

RUBRIC_FIELDS = ("answer_type", "expected", "minimum", "choices", "accepted", "knockout", "weight")
DEFAULT_RUBRIC = {
    "answer_type": None,
    "expected": None,
    "minimum": None,
    "choices": [],
    "accepted": [],
    "knockout": False,
    "weight": 1.0,
}


def get_faq(tenant_id: str, job_id) -> dict:
    job = get_job(tenant_id, job_id)
    row = JobFaq.get_or_none(JobFaq.job == job.id)
    return {
        "job_id": job.id,
        "entries": list(row.entries) if row else [],
        "updated_at": row.updated_at if row else None,
    }


def replace_faq(tenant_id: str, job_id, values: dict) -> dict:
    job = get_job(tenant_id, job_id)
    entries = [
        {"question": " ".join(e["question"].split()), "answer": e["answer"].strip()}
        for e in values["entries"]
    ]
    with database.atomic():
        row = row_for_update(JobFaq, JobFaq.job, job.id, tenant=tenant_id, entries=[])
        row.entries = entries
        row.save()
    return get_faq(tenant_id, job.id)


def get_rubric(tenant_id: str, job_id, question_id) -> dict:
    question = get_question(tenant_id, job_id, question_id)
    row = QuestionRubric.get_or_none(QuestionRubric.question == question.id)
    values = {name: getattr(row, name) for name in RUBRIC_FIELDS} if row else dict(DEFAULT_RUBRIC)
    return {
        "question_id": question.id,
        **values,
        "inferred_answer_type": values["answer_type"] or inferred_type(question.question_text),
    }


def replace_rubric(tenant_id: str, job_id, question_id, values: dict) -> dict:
    question = get_question(tenant_id, job_id, question_id)
    with database.atomic():
        row = row_for_update(
            QuestionRubric,
            QuestionRubric.question,
            question.id,
            tenant=tenant_id,
            choices=[],
            accepted=[],
        )
        for name in RUBRIC_FIELDS:
            setattr(row, name, values.get(name, DEFAULT_RUBRIC[name]))
        row.save()
    return get_rubric(tenant_id, job_id, question.id)
