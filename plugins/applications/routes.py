"""/v1/applications: list, create (JSON or multipart with a resume), read, update, and download the resume (SPEC 4.1)."""

from flask.views import MethodView

from app.api import Blueprint, page_schema
from app.auth import current_tenant_id
from app.upserts import register_upsert_route, upsert_schema
from app.resumes.bodies import json_or_multipart
from app.resumes.routes import add_download_route
from plugins.applications import services
from plugins.applications.models import Application
from plugins.applications.schemas import (ApplicationCreateSchema, ApplicationListArgsSchema, ApplicationSchema,
                                          ApplicationUpdateSchema)

blp = Blueprint("applications", __name__, url_prefix="/v1/applications",
                description="Applications of candidates to jobs, with resumes")

RESUME_BODY = ("JSON (resume as `base64file`, or `file` as a reference) or multipart/form-data "
               "(resume as the `file` part, other fields as form fields)")


@blp.route("")
class Applications(MethodView):
    @blp.arguments(ApplicationListArgsSchema, location="query")
    @blp.response(200, page_schema(ApplicationSchema))
    def get(self, args):
        """List applications, oldest first, filtered by job, candidate or source ids"""
        return services.list_applications(current_tenant_id(), **args)

    @blp.response(201, ApplicationSchema)
    @blp.errors(409)
    @json_or_multipart(blp, ApplicationCreateSchema, description=RESUME_BODY)
    def post(self, values):
        """Create an application of a candidate to a job, both named by source_id (409 when it exists)"""
        return services.create_application(current_tenant_id(), values)


@blp.route("/<application_id>")
class ApplicationItem(MethodView):
    @blp.response(200, ApplicationSchema)
    @blp.errors(404)
    def get(self, application_id):
        """Read an application with its candidate and job"""
        return services.get_application(current_tenant_id(), application_id)

    @blp.response(200, ApplicationSchema)
    @blp.errors(404)
    @json_or_multipart(blp, ApplicationUpdateSchema, description=RESUME_BODY)
    def patch(self, values, application_id):
        """Change an application's source status and stage, and optionally its resume"""
        return services.update_application(current_tenant_id(), application_id, values)


add_download_route(blp, "/<application_id>/resume", "ApplicationResume", "application", services.resume_of)


register_upsert_route(blp, model=Application, record_schema=ApplicationSchema,
                      body=json_or_multipart(blp, upsert_schema(ApplicationCreateSchema, "ApplicationUpsertSchema"),
                                             description=RESUME_BODY),
                      create=services.create_application, replace=services.replace_application)
