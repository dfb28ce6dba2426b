"""/v1/candidates: list, create (JSON or multipart with a resume), read, update, download the resume, and opt out of
contact (and back in) (docs/integrating.md, Candidates; docs/reminders.md, Opting out of contact)."""

from flask.views import MethodView

from app.http.api import Blueprint
from app.security.auth import current_tenant_id
from app.http.record_routes import add_create_route, add_list_route, add_read_route, add_update_route
from app.http.batch_upserts import register_batch_upsert_route
from app.http.upserts import register_upsert_route, upsert_schema
from app.files.bodies import json_or_multipart
from app.files.routes import add_download_route
from plugins.candidates import services
from plugins.candidates.models import Candidate
from plugins.candidates.schemas import (CandidateCreateSchema, CandidateListArgsSchema, CandidateSchema,
                                        CandidateUpdateSchema)

blp = Blueprint("candidates", __name__, url_prefix="/v1/candidates", description="Candidates pushed by your ATS")

add_list_route(blp, Candidate, CandidateSchema, args_schema=CandidateListArgsSchema, list_records=services.list_candidates,
               list_name="candidates", summary="List candidates, oldest first, filtered by source_id or email")
add_create_route(blp, Candidate, CandidateSchema, create=services.create_candidate,
                 body=json_or_multipart(blp, CandidateCreateSchema,
                                        description="JSON (resume as `base64file`, or `file` as a reference) or "
                                                    "multipart/form-data (resume as the `file` part)"),
                 summary="Create a candidate, optionally with a resume (a source_id already used answers 409 with the "
                         "existing id)")
add_read_route(blp, "/<candidate_id>", Candidate, CandidateSchema, read=services.get_candidate,
               summary="Read a candidate")
add_update_route(blp, "/<candidate_id>", Candidate, CandidateSchema, body=blp.arguments(CandidateUpdateSchema),
                 update=services.update_candidate, errors=(409,),
                 summary="Update a candidate: first_name, email, phone_no, source and source_id, plus any "
                         "optional fields to change")
add_download_route(blp, "/<candidate_id>/resume", "CandidateResume", "candidate", services.resume_of)
register_upsert_route(blp, services.CANDIDATE_UPSERT,
                      body=json_or_multipart(blp, upsert_schema(CandidateCreateSchema, "CandidateUpsertSchema"),
                                             description="As the create body, without source_id"))
register_batch_upsert_route(blp, services.CANDIDATE_UPSERT)


@blp.route("/<candidate_id>/opt-out")
class CandidateContactOptOut(MethodView):
    @blp.doc(operationId="opt_out_candidate")
    @blp.response(200, CandidateSchema)
    def post(self, candidate_id):
        """Opt the candidate out of contact (reminders, scheduled and instant calls)

        Pending reminders and scheduled calls are canceled, none are made from now on, and an instant call is refused
        with 409. Answers the candidate, with `contact_opt_out: true`."""
        return services.opt_out(current_tenant_id(), candidate_id)

    @blp.doc(operationId="opt_in_candidate")
    @blp.response(200, CandidateSchema)
    def delete(self, candidate_id):
        """Opt the candidate back in to contact

        Reminders and calls may be made again; what was canceled stays canceled. Answers the candidate, with
        `contact_opt_out: false`."""
        return services.opt_in(current_tenant_id(), candidate_id)
