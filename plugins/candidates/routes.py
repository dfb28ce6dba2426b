"""/v1/candidates: list, create (JSON or multipart with a resume), read, update, and download the resume (SPEC 4.1)."""

from flask.views import MethodView

from app.api import Blueprint, page_schema
from app.auth import current_tenant_id
from app.upserts import register_upsert_route, upsert_schema
from app.representations import owned_record_response, reuses_bodies, tenant_list_response
from app.resumes.bodies import json_or_multipart
from app.resumes.routes import add_download_route
from plugins.candidates import services
from plugins.candidates.models import Candidate
from plugins.candidates.schemas import (CandidateCreateSchema, CandidateListArgsSchema, CandidateSchema,
                                        CandidateUpdateSchema)

blp = Blueprint("candidates", __name__, url_prefix="/v1/candidates", description="Candidates pushed by your ATS")


@blp.route("")
@reuses_bodies(Candidate, CandidateSchema)
class Candidates(MethodView):
    @blp.arguments(CandidateListArgsSchema, location="query")
    @blp.response(200, page_schema(CandidateSchema))
    def get(self, args):
        """List candidates, oldest first, filtered by source_id or email"""
        return tenant_list_response(args, services.candidates_query, CandidateSchema, list_name="candidates")

    @blp.response(201, CandidateSchema)
    @blp.errors(409)
    @json_or_multipart(blp, CandidateCreateSchema,
                       description="JSON (resume as `base64file`, or `file` as a reference) or multipart/form-data "
                                   "(resume as the `file` part)")
    def post(self, values):
        """Create a candidate, optionally with a resume (a source_id already used answers 409 with the existing id)"""
        return services.create_candidate(current_tenant_id(), values)


@blp.route("/<candidate_id>")
@reuses_bodies(Candidate, CandidateSchema)
class CandidateItem(MethodView):
    @blp.response(200, CandidateSchema)
    @blp.errors(404)
    def get(self, candidate_id):
        """Read a candidate"""
        return owned_record_response(Candidate, CandidateSchema, current_tenant_id(), candidate_id)

    @blp.arguments(CandidateUpdateSchema)
    @blp.response(200, CandidateSchema)
    @blp.errors(404, 409)
    def patch(self, values, candidate_id):
        """Update a candidate: SPEC's required fields plus any optional ones to change"""
        return services.update_candidate(current_tenant_id(), candidate_id, values)


add_download_route(blp, "/<candidate_id>/resume", "CandidateResume", "candidate", services.resume_of)


register_upsert_route(blp, model=Candidate, record_schema=CandidateSchema,
                      body=json_or_multipart(blp, upsert_schema(CandidateCreateSchema, "CandidateUpsertSchema"),
                                             description="As the create body, without source_id"),
                      create=services.create_candidate, replace=services.replace_candidate)
