"""/v1/candidates: list, create (JSON or multipart with a resume), read, update, download the
resume, and opt out of contact (and back in) (docs/integrating.md, Candidates; docs/reminders.md,
Opting out of contact)."""

from flask.views import MethodView

from app.http import batch_upserts, upserts
from app.http.api import Blueprint, page_schema
from app.security.auth import current_tenant_id
from app.files.bodies import json_or_multipart
from app.files.uploads import DOWNLOAD_DESCRIPTION
from plugins.candidates import services
from plugins.candidates.schemas import (
    CandidateCreateSchema,
    CandidateListArgsSchema,
    CandidateSchema,
    CandidateUpdateSchema,
)

blp = Blueprint(
    "candidates", __name__, url_prefix="/v1/candidates", description="Candidates pushed by your ATS"
)


@blp.route("")
class Candidates(MethodView):
    @blp.arguments(CandidateListArgsSchema, location="query")
    @blp.response(200, page_schema(CandidateSchema))
    @blp.doc(operationId="list_candidates")
    def get(self, args):
        """List candidates, oldest first, filtered by source_id or email"""
        return services.list_candidates(current_tenant_id(), **args)

    @json_or_multipart(
        blp,
        CandidateCreateSchema,
        description="JSON (resume as `base64file`, or `file` as a reference) or "
        "multipart/form-data (resume as the `file` part)",
    )
    @blp.response(201, CandidateSchema)
    @blp.errors(409)
    @blp.doc(
        operationId="create_candidate",
        summary="Create a candidate, optionally with a resume (a source_id already used "
        "answers 409 with the existing id)",
    )
    def post(self, values):
        return services.create_candidate(current_tenant_id(), values)


@blp.route("/<candidate_id>")
class CandidateItem(MethodView):
    @blp.response(200, CandidateSchema)
    @blp.doc(operationId="get_candidate")
    def get(self, candidate_id):
        """Read a candidate"""
        return services.get_candidate(current_tenant_id(), candidate_id)

    @blp.arguments(CandidateUpdateSchema)
    @blp.response(200, CandidateSchema)
    @blp.errors(409)
    @blp.doc(
        operationId="update_candidate",
        summary="Update a candidate: first_name, email, phone_no, source and source_id, plus "
        "any optional fields to change",
    )
    def patch(self, values, candidate_id):
        return services.update_candidate(current_tenant_id(), candidate_id, values)


@blp.route("/<candidate_id>/resume")
class CandidateResume(MethodView):
    @blp.response(200, content_type="application/octet-stream", description=DOWNLOAD_DESCRIPTION)
    @blp.doc(operationId="get_candidate_resume")
    def get(self, candidate_id):
        """Download the candidate's resume"""
        return services.resume_of(current_tenant_id(), candidate_id)


@blp.route(upserts.PATH, creates_missing=True)
class CandidateBySourceId(MethodView):
    @json_or_multipart(
        blp,
        upserts.upsert_schema(CandidateCreateSchema, "CandidateUpsertSchema"),
        description="As the create body, without source_id",
    )
    @blp.response(200, CandidateSchema, description="The candidate was replaced")
    @blp.alt_response(201, schema=CandidateSchema, description="The candidate was created")
    @blp.errors(409)
    @blp.doc(operationId="upsert_candidate_by_source_id", **upserts.upsert_doc("candidate"))
    def put(self, values, source_id):
        return services.CANDIDATE_UPSERT.answer(current_tenant_id(), source_id, values)


@blp.route(batch_upserts.PATH)
class CandidateBatchBySourceId(MethodView):
    @blp.arguments(
        batch_upserts.batch_body_schema(CandidateCreateSchema, "CandidateBatchUpsertSchema")
    )
    @blp.response(
        200, batch_upserts.BatchAnswerSchema, description=batch_upserts.ANSWER_DESCRIPTION
    )
    @blp.errors(413)
    @blp.doc(operationId="upsert_candidates_by_source_id", **batch_upserts.batch_doc("candidates"))
    def put(self, body):
        return batch_upserts.answer_batch(services.CANDIDATE_UPSERT, body)


@blp.route("/<candidate_id>/opt-out")
class CandidateContactOptOut(MethodView):
    @blp.doc(operationId="opt_out_candidate")
    @blp.response(200, CandidateSchema)
    def post(self, candidate_id):
        """Opt the candidate out of contact (reminders, scheduled and instant calls)

        Pending reminders and scheduled calls are canceled, none are made from now on, and an
        instant call is refused with 409. Answers the candidate, with `contact_opt_out: true`."""
        return services.opt_out(current_tenant_id(), candidate_id)

    @blp.doc(operationId="opt_in_candidate")
    @blp.response(200, CandidateSchema)
    def delete(self, candidate_id):
        """Opt the candidate back in to contact

        Reminders and calls may be made again; what was canceled stays canceled. Answers the
        candidate, with `contact_opt_out: false`."""
        return services.opt_in(current_tenant_id(), candidate_id)
