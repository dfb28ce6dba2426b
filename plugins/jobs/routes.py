"""/v1/jobs: list, create, read, update and upsert job postings (docs/integrating.md, Jobs)."""

from flask.views import MethodView

from app.http.api import Blueprint, page_schema
from app.http import batch_upserts, upserts
from app.security.auth import current_tenant_id
from plugins.jobs import services
from plugins.jobs.schemas import JobCreateSchema, JobListArgsSchema, JobSchema, JobUpdateSchema

blp = Blueprint(
    "jobs", __name__, url_prefix="/v1/jobs", description="Job postings pushed by your ATS"
)


@blp.route("")
class Jobs(MethodView):
    @blp.arguments(JobListArgsSchema, location="query")
    @blp.response(200, page_schema(JobSchema))
    @blp.doc(operationId="list_jobs")
    def get(self, args):
        """List jobs, oldest first, filtered by source_id, status, location or type"""
        return services.list_jobs(current_tenant_id(), **args)

    @blp.arguments(JobCreateSchema)
    @blp.response(201, JobSchema)
    @blp.errors(409)
    @blp.doc(operationId="create_job")
    def post(self, values):
        """Create a job (a source_id already used answers 409 with the existing id)"""
        return services.create_job(current_tenant_id(), values)


@blp.route("/<job_id>")
class JobItem(MethodView):
    @blp.response(200, JobSchema)
    @blp.doc(operationId="get_job")
    def get(self, job_id):
        """Read a job"""
        return services.get_job(current_tenant_id(), job_id)

    @blp.arguments(JobUpdateSchema)
    @blp.response(200, JobSchema)
    @blp.doc(operationId="update_job")
    def patch(self, values, job_id):
        """Update a job: title is required, other fields change only when sent"""
        return services.update_job(current_tenant_id(), job_id, values)


@blp.route(upserts.PATH, creates_missing=True)
class JobBySourceId(MethodView):
    @blp.arguments(upserts.upsert_schema(JobCreateSchema, "JobUpsertSchema"))
    @blp.response(200, JobSchema, description="The job was replaced")
    @blp.alt_response(201, schema=JobSchema, description="The job was created")
    @blp.errors(409)
    @blp.doc(operationId="upsert_job_by_source_id", **upserts.upsert_doc("job"))
    def put(self, values, source_id):
        return services.JOB_UPSERT.answer(current_tenant_id(), source_id, values)


@blp.route(batch_upserts.PATH)
class JobBatchBySourceId(MethodView):
    @blp.arguments(batch_upserts.batch_body_schema(JobCreateSchema, "JobBatchUpsertSchema"))
    @blp.response(
        200, batch_upserts.BatchAnswerSchema, description=batch_upserts.ANSWER_DESCRIPTION
    )
    @blp.errors(413)
    @blp.doc(operationId="upsert_jobs_by_source_id", **batch_upserts.batch_doc("jobs"))
    def put(self, body):
        return batch_upserts.answer_batch(services.JOB_UPSERT, body)
