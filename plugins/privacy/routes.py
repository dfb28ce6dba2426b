"""Privacy routes: a candidate's export, erasure and anonymization, and the tenant's erasure log."""

from flask import after_this_request
from flask.views import MethodView

from app.http.api import Blueprint, page_schema
from app.security.auth import current_caller, current_tenant_id
from plugins.candidates.schemas import CandidateSchema
from plugins.privacy import services
from plugins.privacy.anonymize import anonymize_candidate
from plugins.privacy.erasure import erase_candidate
from plugins.privacy.export import export_candidate
from plugins.privacy.schemas import (
    AnonymizeBodySchema,
    ErasureListArgsSchema,
    ErasureSchema,
    ExportSchema,
)

blp = Blueprint(
    "privacy",
    __name__,
    url_prefix="/v1",
    description="Data subjects' rights: access (export), erasure, anonymization, and the erasure "
    "log",
)


@blp.route("/candidates/<candidate_id>/export")
class CandidateExport(MethodView):
    @blp.response(200, ExportSchema)
    @blp.doc(operationId="export_candidate")
    def get(self, candidate_id):
        """Everything held about a candidate, as one JSON document (access request); never stored by a cache"""  # noqa: E501
        after_this_request(kept_by_no_cache)
        return export_candidate(current_tenant_id(), candidate_id)


def kept_by_no_cache(response):
    """Personal data: no browser or proxy cache keeps the answer (as for the resume downloads)."""
    response.headers["Cache-Control"] = "no-store"
    return response


@blp.route("/candidates/<candidate_id>")
class CandidateErasure(MethodView):
    @blp.response(204)
    @blp.doc(operationId="erase_candidate")
    def delete(self, candidate_id):
        """Erase a candidate and everything that is theirs (erasure request): applications, calls, questions asked on
        their applications, resume files, stored idempotent answers; events about them keep only their id and type.
        Their scheduled calls are canceled first. Sync sees tombstones and a candidate.deleted event"""  # noqa: E501
        erase_candidate(current_tenant_id(), candidate_id, key_id=current_caller().key_id)


@blp.route("/candidates/<candidate_id>/anonymize")
class CandidateAnonymization(MethodView):
    @blp.arguments(AnonymizeBodySchema)
    @blp.response(200, CandidateSchema)
    @blp.doc(operationId="anonymize_candidate")
    def post(self, body, candidate_id):
        """Replace named fields of a candidate by a fixed marker, keeping the record (rectification)"""  # noqa: E501
        return anonymize_candidate(current_tenant_id(), candidate_id, body["fields"])


@blp.route("/privacy/erasures")
class Erasures(MethodView):
    @blp.arguments(ErasureListArgsSchema, location="query")
    @blp.response(200, page_schema(ErasureSchema))
    @blp.doc(operationId="list_privacy-erasures")
    def get(self, args):
        """The erasure log: who erased which candidate when, with ids and counts, oldest first"""
        return services.list_erasures(current_tenant_id(), **args)
