"""/v1/applications: list, create (JSON or multipart with a resume), read, update, and download the
resume (docs/integrating.md, Applications)."""

from flask.views import MethodView

from app.http import batch_upserts, upserts
from app.http.api import Blueprint, page_schema
from app.security.auth import current_tenant_id
from app.files.bodies import json_or_multipart
from app.files.uploads import DOWNLOAD_DESCRIPTION
from plugins.applications import services
from plugins.applications.schemas import (
    ApplicationCreateSchema,
    ApplicationListArgsSchema,
    ApplicationSchema,
    ApplicationUpdateSchema,
)

blp = Blueprint(
    "applications",
    __name__,
    url_prefix="/v1/applications",
    description="Applications of candidates to jobs, with resumes",
)

RESUME_BODY = (
    "JSON (resume as `base64file`, or `file` as a reference) or multipart/form-data "
    "(resume as the `file` part, other fields as form fields)"
)


@blp.route("")
class Applications(MethodView):
    @blp.arguments(ApplicationListArgsSchema, location="query")
    @blp.response(200, page_schema(ApplicationSchema))
    @blp.doc(operationId="list_applications")
    def get(self, args):
        """List applications, oldest first, filtered by job, candidate or source ids"""
        return services.list_applications(current_tenant_id(), **args)

    @json_or_multipart(blp, ApplicationCreateSchema, description=RESUME_BODY)
    @blp.response(201, ApplicationSchema)
    @blp.errors(409)
    @blp.doc(
        operationId="create_application",
        summary="Create an application of a candidate to a job, both named by source_id (409 "
        "when it exists)",
    )
    def post(self, values):
        return services.create_application(current_tenant_id(), values)


@blp.route("/<application_id>")
class ApplicationItem(MethodView):
    @blp.response(200, ApplicationSchema)
    @blp.doc(operationId="get_application")
    def get(self, application_id):
        """Read an application with its candidate and job"""
        return services.get_application(current_tenant_id(), application_id)

    @json_or_multipart(blp, ApplicationUpdateSchema, description=RESUME_BODY)
    @blp.response(200, ApplicationSchema)
    @blp.doc(operationId="update_application")
    def patch(self, values, application_id):
        """Change an application's source status and stage, and optionally its resume"""
        return services.update_application(current_tenant_id(), application_id, values)


@blp.route("/<application_id>/resume")
class ApplicationResume(MethodView):
    @blp.response(200, content_type="application/octet-stream", description=DOWNLOAD_DESCRIPTION)
    @blp.doc(operationId="get_application_resume")
    def get(self, application_id):
        """Download the application's resume"""
        return services.resume_of(current_tenant_id(), application_id)


@blp.route(upserts.PATH, creates_missing=True)
class ApplicationBySourceId(MethodView):
    @json_or_multipart(
        blp,
        upserts.upsert_schema(ApplicationCreateSchema, "ApplicationUpsertSchema"),
        description=RESUME_BODY,
    )
    @blp.response(200, ApplicationSchema, description="The application was replaced")
    @blp.alt_response(201, schema=ApplicationSchema, description="The application was created")
    @blp.errors(409)
    @blp.doc(operationId="upsert_application_by_source_id", **upserts.upsert_doc("application"))
    def put(self, values, source_id):
        return services.APPLICATION_UPSERT.answer(current_tenant_id(), source_id, values)


@blp.route(batch_upserts.PATH)
class ApplicationBatchBySourceId(MethodView):
    @blp.arguments(
        batch_upserts.batch_body_schema(ApplicationCreateSchema, "ApplicationBatchUpsertSchema")
    )
    @blp.response(
        200, batch_upserts.BatchAnswerSchema, description=batch_upserts.ANSWER_DESCRIPTION
    )
    @blp.errors(413)
    @blp.doc(
        operationId="upsert_applications_by_source_id", **batch_upserts.batch_doc("applications")
    )
    def put(self, body):
        return batch_upserts.answer_batch(services.APPLICATION_UPSERT, body)
