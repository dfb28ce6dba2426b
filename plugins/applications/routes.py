"""/v1/applications: list, create (JSON or multipart with a resume), read, update, and download the resume
(docs/integrating.md, Applications)."""

from app.http.api import Blueprint
from app.http.record_routes import add_create_route, add_list_route, add_read_route, add_update_route
from app.http.batch_upserts import register_batch_upsert_route
from app.http.upserts import register_upsert_route, upsert_schema
from app.files.bodies import json_or_multipart
from app.files.routes import add_download_route
from plugins.applications import services
from plugins.applications.models import Application
from plugins.applications.schemas import (ApplicationCreateSchema, ApplicationListArgsSchema, ApplicationSchema,
                                          ApplicationUpdateSchema)

blp = Blueprint("applications", __name__, url_prefix="/v1/applications",
                description="Applications of candidates to jobs, with resumes")

RESUME_BODY = ("JSON (resume as `base64file`, or `file` as a reference) or multipart/form-data "
               "(resume as the `file` part, other fields as form fields)")

add_list_route(blp, Application, ApplicationSchema, args_schema=ApplicationListArgsSchema, list_name="applications",
               list_records=services.list_applications,
               summary="List applications, oldest first, filtered by job, candidate or source ids")
add_create_route(blp, Application, ApplicationSchema, body=json_or_multipart(blp, ApplicationCreateSchema, description=RESUME_BODY),
                 create=services.create_application,
                 summary="Create an application of a candidate to a job, both named by source_id (409 when it exists)")
add_read_route(blp, "/<application_id>", Application, ApplicationSchema, read=services.get_application,
               summary="Read an application with its candidate and job")
add_update_route(blp, "/<application_id>", Application, ApplicationSchema,
                 body=json_or_multipart(blp, ApplicationUpdateSchema, description=RESUME_BODY),
                 update=services.update_application,
                 summary="Change an application's source status and stage, and optionally its resume")
add_download_route(blp, "/<application_id>/resume", "ApplicationResume", "application", services.resume_of)
register_upsert_route(blp, services.APPLICATION_UPSERT,
                      body=json_or_multipart(blp, upsert_schema(ApplicationCreateSchema, "ApplicationUpsertSchema"),
                                             description=RESUME_BODY))
register_batch_upsert_route(blp, services.APPLICATION_UPSERT)
