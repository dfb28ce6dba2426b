"""/v1/jobs: list, create, read and update job postings (SPEC 4.1)."""

from flask.views import MethodView

from app.api import Blueprint, page_schema
from app.auth import current_tenant_id
from app.upserts import register_upsert_route, upsert_schema
from app.representations import owned_record_response, reuses_bodies, tenant_list_response
from plugins.jobs.models import Job
from plugins.jobs import services
from plugins.jobs.schemas import JobCreateSchema, JobListArgsSchema, JobSchema, JobUpdateSchema

blp = Blueprint("jobs", __name__, url_prefix="/v1/jobs", description="Job postings pushed by your ATS")


@blp.route("")
@reuses_bodies(Job, JobSchema)
class Jobs(MethodView):
    @blp.arguments(JobListArgsSchema, location="query")
    @blp.response(200, page_schema(JobSchema))
    def get(self, args):
        """List jobs, oldest first, filtered by source_id, status, location or type"""
        return tenant_list_response(args, services.jobs_query, JobSchema, list_name="jobs")

    @blp.arguments(JobCreateSchema)
    @blp.response(201, JobSchema)
    @blp.errors(409)
    def post(self, values):
        """Create a job (a source_id already used answers 409 with the existing id)"""
        return services.create_job(current_tenant_id(), values)


@blp.route("/<job_id>")
@reuses_bodies(Job, JobSchema)
class JobItem(MethodView):
    @blp.response(200, JobSchema)
    @blp.errors(404)
    def get(self, job_id):
        """Read a job"""
        return owned_record_response(Job, JobSchema, current_tenant_id(), job_id)

    @blp.arguments(JobUpdateSchema)
    @blp.response(200, JobSchema)
    @blp.errors(404)
    def patch(self, values, job_id):
        """Update a job: title is required, other fields change only when sent"""
        return services.update_job(current_tenant_id(), job_id, values)


register_upsert_route(blp, model=Job, record_schema=JobSchema,
                      body=blp.arguments(upsert_schema(JobCreateSchema, "JobUpsertSchema")),
                      create=services.create_job, replace=lambda tenant_id, job, values: services.update_job(tenant_id, job.id, values))
