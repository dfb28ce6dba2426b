"""The unversioned job board (docs/integrating.md, Job board): GET /jobs, GET /jobs/{id}, POST
/jobs/{id}/apply; {id} is the job's number."""

from flask import request
from flask.views import MethodView

from app.http.api import Blueprint
from app.security.auth import current_tenant_id
from app.errors import ApiError
from app.files.uploads import upload_from
from plugins.board import services
from plugins.board.schemas import (
    ApplyBodySchema,
    ApplyResultSchema,
    BoardJobSchema,
    BoardPageArgsSchema,
)

blp = Blueprint(
    "board",
    __name__,
    url_prefix="/jobs",
    description="Public job board: published jobs (status other than closed or draft) and applying "
    "to them",
)


@blp.route("")
class BoardJobs(MethodView):
    @blp.arguments(BoardPageArgsSchema, location="query")
    @blp.response(200, BoardJobSchema(many=True))
    def get(self, args):
        """List published jobs (status not closed or draft) by number"""
        return services.list_jobs(current_tenant_id(), **args)


@blp.route("/<int(max=2147483647):number>")
class BoardJob(MethodView):
    @blp.response(200, BoardJobSchema)
    def get(self, number):
        """Read a published job by its number"""
        return services.get_job(current_tenant_id(), number)


@blp.route("/<int(max=2147483647):number>/apply")
class BoardApply(MethodView):
    @blp.doc(
        requestBody={
            "required": True,
            "content": {"multipart/form-data": {"schema": ApplyBodySchema}},
        }
    )
    @blp.response(201, ApplyResultSchema)
    @blp.errors(409, 413, 415, 422)
    @blp.doc(operationId="apply_to_board_job")
    def post(self, number):
        """Apply to a published job with name, email and resume (multipart/form-data)"""
        form = read_apply_form()
        application = services.apply(
            current_tenant_id(),
            number,
            name=form["name"],
            email=form["email"],
            resume=upload_from(form["resume"]),
        )
        job_title = application.job.title
        return {
            "message": f"Thank you, {form['name'].split()[0]}: your application for {job_title} "
            "has been received.",
            "application_id": application.id,
        }


def read_apply_form() -> dict:
    """The multipart body's name, email and resume part, validated together (422 naming what is
    missing)."""
    if request.mimetype not in ("multipart/form-data", "application/x-www-form-urlencoded"):
        raise ApiError(
            415,
            "Send the application as multipart/form-data with name, email and a resume file part.",
        )
    return ApplyBodySchema().load({**request.form.to_dict(), **request.files.to_dict()})
