"""/v1/jobs: list, create, read, update and upsert job postings (docs/integrating.md, Jobs)."""

from app.http.api import Blueprint
from app.http.record_routes import add_create_route, add_list_route, add_read_route, add_update_route
from app.http.batch_upserts import register_batch_upsert_route
from app.http.upserts import register_upsert_route, upsert_schema
from plugins.jobs.models import Job
from plugins.jobs import services
from plugins.jobs.schemas import JobCreateSchema, JobListArgsSchema, JobSchema, JobUpdateSchema

blp = Blueprint("jobs", __name__, url_prefix="/v1/jobs", description="Job postings pushed by your ATS")

add_list_route(blp, Job, JobSchema, args_schema=JobListArgsSchema, list_records=services.list_jobs, list_name="jobs",
               summary="List jobs, oldest first, filtered by source_id, status, location or type")
add_create_route(blp, Job, JobSchema, body=blp.arguments(JobCreateSchema), create=services.create_job,
                 summary="Create a job (a source_id already used answers 409 with the existing id)")
add_read_route(blp, "/<job_id>", Job, JobSchema, read=services.get_job, summary="Read a job")
add_update_route(blp, "/<job_id>", Job, JobSchema, body=blp.arguments(JobUpdateSchema), update=services.update_job,
                 summary="Update a job: title is required, other fields change only when sent")
register_upsert_route(blp, services.JOB_UPSERT, body=blp.arguments(upsert_schema(JobCreateSchema, "JobUpsertSchema")))
register_batch_upsert_route(blp, services.JOB_UPSERT)
